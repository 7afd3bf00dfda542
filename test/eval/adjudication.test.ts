import { describe, expect, it } from 'vitest';
import { adjudicationSheet, readSheet, scoreAdjudication } from '../../src/eval/adjudication.js';
import type { PairRecord } from '../../src/eval/extended/run.js';
import { scoreReply } from '../../src/eval/scoring.js';

const probe = (pair: number, tenant: string, probeId: string, kind: string, phase: string, question: string, required: string[], reply: string) => ({
  repetition: pair, tenant, pairedWith: 'x', probeId, domain: 'color', kind, question,
  expectation: { required, forbidden: [], anyOf: [] }, reply, latencyMs: 10,
  score: scoreReply(reply, { required, forbidden: [], anyOf: [] }), identityConfirmation: null, pair, phase,
});

const pairs = [1, 2].map((pair): PairRecord => ({
  pair,
  tenants: [`p${pair}a`, `p${pair}b`],
  setup: [],
  probes: [
    probe(pair, `p${pair}a`, `p${pair}a-color-recall`, 'recall', 'main', 'What is my favorite color?', ['amber'], 'Your favorite color: amber.'),
    probe(pair, `p${pair}a`, `p${pair}a-color-paraphrase`, 'paraphrase', 'main', 'Do you know my favorite color?', ['amber'], 'A warm, "deep" shade, like honey, I believe.'),
    probe(pair, `p${pair}a`, `p${pair}a-color-abstention`, 'abstention', 'main', 'What is my blood type?', [], "I don't know."),
    probe(pair, `p${pair}a`, `p${pair}a-color-deletion`, 'deletion', 'after-erasure', 'What is my favorite color?', [], 'I do not know.'),
  ],
  ablations: [],
  erasures: [],
}));

describe('semantic recall judged by blinded humans', () => {
  const { csv, key } = adjudicationSheet(pairs, JSON.stringify({ pairs }), 7);

  it('puts every remembered-value reply of the main path on the sheet, and nothing that unblinds the judge', () => {
    const rows = readSheet(csv);
    expect(rows.size).toBe(4); // recall and paraphrase of two pairs; abstention and after-erasure are not judged
    for (const secret of ['p1a', 'p2a', 'recall', 'paraphrase', 'pair', 'true', 'false']) expect(csv).not.toContain(secret);
    expect(csv.split('\n')[0]).toBe('item,question,correctAnswerConveys,reply,judgment');
    expect(key.entries.map((e) => e.kind).sort()).toEqual(['paraphrase', 'paraphrase', 'recall', 'recall']);
  });

  it('shuffles the same way for the same seed, and differently for another', () => {
    expect(adjudicationSheet(pairs, '{}', 7).key.entries).toEqual(key.entries);
    const other = adjudicationSheet(pairs, '{}', 8).key.entries.map((e) => e.probeId);
    expect(other).not.toEqual(key.entries.map((e) => e.probeId));
  });

  it('scores judged sheets by majority, credits what exact match missed, and reports agreement', () => {
    const judge = (answer: (kind: string) => string) =>
      readSheet(
        csv
          .trim()
          .split('\n')
          .map((line, i) => (i === 0 ? line : `${line}${answer(key.entries.find((e) => line.startsWith(e.item))!.kind)}`))
          .join('\n'),
      );
    const generous = judge(() => 'yes');
    const strict = judge((kind) => (kind === 'recall' ? 'yes' : 'no'));
    const score = scoreAdjudication(key, [generous, generous, strict]);
    expect(score).toMatchObject({ judges: 3, items: 4, decided: 4, creditedBeyondExactMatch: 2, agreementWithExactMatch: 0.5, unanimous: 0.5 });
    expect(score.semanticRecall.estimate).toBe(1);
    const split = scoreAdjudication(key, [generous, strict]);
    expect(split.decided).toBe(2); // a tie is not counted either way
  });

  it('refuses a sheet with a judgment other than yes, no or unsure, naming the row', () => {
    const bad = `${csv.trim().split('\n').slice(0, 2).join('\n')}maybe\n`;
    expect(() => readSheet(bad)).toThrow(/row 2 .*yes, no or unsure/);
  });
});
