import type { Dataset } from '../dataset.js';

export const naturalFiles = {
  dev: 'eval/datasets/natural.dev.json',
  /** Written apart from the project and its generator (docs/eval/README.md, "The val split"). */
  val: 'eval/datasets/natural.val.json',
  /**
   * Written the same way by another session on 2026-12-07, and run once per change without its
   * misses being read: the held-out hand-written split (docs/eval/README.md, "The val2 split").
   */
  val2: 'eval/datasets/natural.val2.json',
  test: 'eval/datasets/natural.test.json',
  manifest: 'eval/datasets/natural.manifest.json',
} as const;

/** Pairs, tenants, setup lines and probes per kind (after-erasure recall counted as "control"). */
export function sizesOf(dataset: Dataset): { pairs: number; tenants: number; setupLines: number; probes: Record<string, number> } {
  const probes: Record<string, number> = {};
  for (const p of dataset.tenants.flatMap((t) => t.probes)) {
    const kind = p.phase === 'after-erasure' && (p.kind ?? 'recall') === 'recall' ? 'control' : (p.kind ?? 'recall');
    probes[kind] = (probes[kind] ?? 0) + 1;
  }
  return { pairs: dataset.pairs.length, tenants: dataset.tenants.length, setupLines: dataset.tenants.reduce((n, t) => n + t.setup.length, 0), probes };
}
