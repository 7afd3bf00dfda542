/** Latency summaries and bootstrap intervals for the evaluation reports. */

export interface LatencySummary {
  count: number;
  meanMs: number;
  medianMs: number;
  /** Nearest rank, upper: the smallest sample with at least 95% of samples at or below it. */
  p95Ms: number;
  maxMs: number;
  /** Share of samples at or below `thresholdMs`. */
  shareWithin: number;
  thresholdMs: number;
}

/** Nearest-rank percentile (upper rank, as the seed's runner computes it); NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarizeLatency(samples: readonly number[], thresholdMs = 700): LatencySummary {
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    count: samples.length,
    meanMs: r(samples.reduce((a, b) => a + b, 0) / (samples.length || 1)),
    medianMs: r(median(samples)),
    p95Ms: r(percentile(samples, 95)),
    maxMs: r(samples.length ? Math.max(...samples) : Number.NaN),
    shareWithin: r(samples.filter((s) => s <= thresholdMs).length / (samples.length || 1)),
    thresholdMs,
  };
}

/** A small seeded PRNG (mulberry32): same seed, same sequence, on every platform. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Interval {
  estimate: number;
  low: number;
  high: number;
  /** Units resampled (tenant pairs). */
  n: number;
}

/**
 * Percentile bootstrap over units (here: tenant pairs). Each unit contributes `[successes,
 * trials]`; a resample draws units with replacement and pools them. (Default: 2000 resamples,
 * 95%, seed 1)
 */
export function bootstrap(units: readonly (readonly [number, number])[], options: { resamples?: number; level?: number; seed?: number } = {}): Interval {
  const valid = units.filter(([, t]) => t > 0);
  const pooled = (list: readonly (readonly [number, number])[]) => {
    const [s, t] = list.reduce(([a, b], [x, y]) => [a + x, b + y], [0, 0]);
    return t === 0 ? Number.NaN : s / t;
  };
  const estimate = pooled(valid);
  if (valid.length === 0) return { estimate: Number.NaN, low: Number.NaN, high: Number.NaN, n: 0 };
  const next = rng(options.seed ?? 1);
  const draws: number[] = [];
  for (let i = 0; i < (options.resamples ?? 2000); i++) {
    draws.push(pooled(Array.from({ length: valid.length }, () => valid[Math.floor(next() * valid.length)]!)));
  }
  const alpha = (1 - (options.level ?? 0.95)) / 2;
  const r = (x: number) => Math.round(x * 10000) / 10000;
  return { estimate: r(estimate), low: r(percentile(draws, alpha * 100)), high: r(percentile(draws, (1 - alpha) * 100)), n: valid.length };
}
