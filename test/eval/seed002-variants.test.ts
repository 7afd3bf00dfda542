import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadDataset, pairingProblems } from '../../src/eval/dataset.js';
import { sharedContentWords } from '../../src/eval/natural/lexical.js';
import { sha256 } from '../../src/eval/result-file.js';

describe("seed 002's rephrased variants", () => {
  it('leave seed-002.json exactly as it was', async () => {
    expect(sha256(await readFile('eval/datasets/seed-002.json', 'utf8'))).toBe('3f21fc8a230f36a303e1738b6535af99c537c869258b12324f82699bc51d065f');
  });

  it('keep the six facts, the pairing and the expected strings; only the words change', async () => {
    const original = (await loadDataset('eval/datasets/seed-002.json')).dataset;
    const setup = (await loadDataset('eval/datasets/seed-002-setup-rephrased.json')).dataset;
    const questions = (await loadDataset('eval/datasets/seed-002-questions-rephrased.json')).dataset;
    for (const variant of [setup, questions]) {
      expect(pairingProblems(variant)).toEqual([]);
      expect(variant.pairs).toEqual(original.pairs);
      expect(variant.tenants.map((t) => t.probes.map(({ question: _q, ...rest }) => rest))).toEqual(original.tenants.map((t) => t.probes.map(({ question: _q, ...rest }) => rest)));
      expect(variant.targets.recall * 18).toBeLessThanOrEqual(15);
    }
    // Setup rephrased: other lines, the same values in them, the original questions.
    for (const [i, t] of setup.tenants.entries()) {
      const o = original.tenants[i]!;
      expect(t.probes.map((p) => p.question)).toEqual(o.probes.map((p) => p.question));
      for (const [j, line] of t.setup.entries()) {
        expect(line).not.toBe(o.setup[j]);
        const value = [...(o.probes[j]!.required ?? []), ...(o.probes[j]!.anyOf ?? [])][0]!;
        expect(line.toLowerCase()).toContain(value.toLowerCase());
      }
    }
    // Questions rephrased: the original setup; no question shares a content word with it.
    for (const [i, t] of questions.tenants.entries()) {
      const o = original.tenants[i]!;
      expect(t.setup).toEqual(o.setup);
      for (const p of t.probes) {
        expect(p.question).not.toBe(o.probes.find((x) => x.id === p.id)!.question);
        for (const line of t.setup) expect(sharedContentWords(p.question, line), `${p.question} / ${line}`).toEqual([]);
      }
    }
  });
});
