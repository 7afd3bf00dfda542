import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/eval/dataset.js';
import { runSeed002, summarize } from '../../src/eval/seed002.js';
import { startInProcess, type EvalTarget } from '../../src/eval/target.js';
import { writeResultOnce } from '../../src/eval/result-file.js';
import { backend, tempDir } from '../helpers/database.js';

/**
 * One small run of the seed-002 runner against the whole system started in process (PGlite,
 * or a fresh native database when DATABASE_URL is set): two accounts, the engine's public API,
 * consolidation drained, probes in new games.
 */
describe(`the seed-002 runner end to end (${backend})`, () => {
  let target: EvalTarget;
  beforeAll(async () => {
    target = await startInProcess({ databaseUrl: process.env.DATABASE_URL });
  });
  afterAll(() => target?.close());

  it('recalls color, allergy and employer across games, leaks nothing of the paired tenant, and records a re-scorable result', async () => {
    const { dataset, sha256 } = await loadDataset('eval/datasets/seed-002.json');
    const records = await runSeed002(target, dataset, { settleMs: 50, repetitions: 1 });
    const summary = summarize(records, dataset.targets);

    expect(summary.probes).toBe(6);
    expect(summary.noReply).toBe(0);
    expect(summary.leaks).toEqual([]);
    expect(summary.identityConfirmations).toEqual([]);
    const passed = (id: string) => records[0]!.probes.find((p) => p.probeId === id)!.score.pass;
    for (const id of ['ana-color', 'ana-allergy', 'ana-employer', 'bruno-color', 'bruno-allergy', 'bruno-employer']) expect(passed(id), id).toBe(true);
    expect(summary.byDomain.allergy).toEqual({ probes: 2, passed: 2 });
    // Every probe carries the tokens of the turn that answered it (offline responder: estimated).
    expect(summary.cost).toMatchObject({ probes: 6, counted: 'estimate', meanCostPerProbe: null });
    expect(summary.cost.meanPromptTokens).toBeGreaterThan(summary.cost.meanCompletionTokens);
    expect(summarize(records, dataset.targets, { input: 1, output: 2 }).cost.meanCostPerProbe).toBeGreaterThan(0);
    expect(records[0]!.probes.every((p) => p.stages && p.stages.totalLatencyMs > 0)).toBe(true);

    const dir = await tempDir('eval-e2e');
    try {
      const file = path.join(dir.dir, 'run.json');
      await writeResultOnce(file, { dataset: { sha256 }, targets: dataset.targets, summary, repetitions: records });
      const back = JSON.parse(await readFile(file, 'utf8')) as { summary: unknown; repetitions: typeof records };
      expect(summarize(back.repetitions, dataset.targets)).toEqual(back.summary);
    } finally {
      await dir.remove();
    }
  });
});
