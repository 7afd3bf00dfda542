import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** One metric in Prometheus' text exposition format. */
export interface Metric {
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  readonly value: number;
}

/** The text `/metrics` answers with (`text/plain; version=0.0.4`), one HELP, TYPE and sample per metric. */
export function metricsText(metrics: readonly Metric[]): string {
  return metrics.map((m) => `# HELP ${m.name} ${m.help}\n# TYPE ${m.name} ${m.type}\n${m.name} ${m.value}\n`).join('');
}

const LOOP_WINDOW_MS = 10_000;
let loop: { histogram: IntervalHistogram; previous: { p99: number; max: number } } | undefined;

/** The event loop's delay over the last full 10 s window and the current one, the worse of the two (seconds). */
function loopDelay(): { p99: number; max: number } {
  if (!loop) {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const state = { histogram, previous: { p99: 0, max: 0 } };
    setInterval(() => {
      state.previous = { p99: histogram.percentile(99) / 1e9, max: histogram.max / 1e9 };
      histogram.reset();
    }, LOOP_WINDOW_MS).unref();
    loop = state;
  }
  const { histogram, previous } = loop;
  // (An empty histogram reports NaN and a huge minimum; a window with no sample counts as no delay.)
  const now = histogram.count > 0 ? { p99: histogram.percentile(99) / 1e9, max: histogram.max / 1e9 } : { p99: 0, max: 0 };
  return { p99: Math.max(previous.p99, now.p99), max: Math.max(previous.max, now.max) };
}

/**
 * The process's memory and its event loop's delay (the names prom-client's default metrics use), so
 * a scraper sees what a service holds and whether its one thread keeps up.
 */
export function processMetrics(): Metric[] {
  const use = process.memoryUsage();
  const delay = loopDelay();
  return [
    { name: 'nodejs_eventloop_lag_p99_seconds', type: 'gauge', help: 'Event loop delay, 99th percentile over the last 10-20 s.', value: delay.p99 },
    { name: 'nodejs_eventloop_lag_max_seconds', type: 'gauge', help: 'Event loop delay, longest over the last 10-20 s.', value: delay.max },
    { name: 'process_resident_memory_bytes', type: 'gauge', help: 'Resident memory size in bytes.', value: use.rss },
    { name: 'nodejs_heap_size_total_bytes', type: 'gauge', help: 'V8 heap size in bytes.', value: use.heapTotal },
    { name: 'nodejs_heap_size_used_bytes', type: 'gauge', help: 'V8 heap used in bytes.', value: use.heapUsed },
    { name: 'nodejs_external_memory_bytes', type: 'gauge', help: 'Memory of C++ objects bound to JavaScript objects, in bytes.', value: use.external },
    { name: 'nodejs_array_buffers_bytes', type: 'gauge', help: 'Memory of ArrayBuffers and Buffers, in bytes (part of external).', value: use.arrayBuffers },
  ];
}
