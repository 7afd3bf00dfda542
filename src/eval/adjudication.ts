/**
 * Semantic recall adjudicated by blinded humans (seed 002 section 9). Exact-match scoring credits
 * only replies that contain the expected string; a person can credit "my favourite colour is a
 * deep amber" and refuse "amber? no idea". Machines cannot do that judging here, so the harness
 * prepares it and scores it:
 *
 * - `sheet`: one row per reply of the main path that should state a remembered value (recall,
 *   paraphrase, update, stale), shuffled, carrying only the question, what a correct answer
 *   conveys, and the reply: no tenant, pair, probe kind, configuration or exact-match verdict.
 *   The key that maps rows back stays with the organiser.
 * - `score`: the judges' sheets (one or more) against the key: semantic recall by majority vote,
 *   with a bootstrap interval over tenant pairs; how often the judges agree with exact match, and
 *   with each other.
 */
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { PairRecord } from './extended/run.js';
import { bootstrap, rng, type Interval } from './stats.js';

export const JUDGED_KINDS = ['recall', 'paraphrase', 'update', 'stale'] as const;
export const JUDGMENTS = ['yes', 'no', 'unsure'] as const;
type Judgment = (typeof JUDGMENTS)[number];

export interface SheetRow {
  item: string;
  question: string;
  /** What a correct reply conveys, in words a judge can check. */
  correctAnswerConveys: string;
  reply: string;
  /** Left empty for the judge: yes, no or unsure. */
  judgment: string;
}

export interface KeyEntry {
  item: string;
  pair: number;
  tenant: string;
  probeId: string;
  kind: string;
  exactMatch: boolean;
}

export interface AdjudicationKey {
  schema: 'npc-memory/adjudication-key@1';
  /** sha256 of the result file the sheet was drawn from. */
  resultSha256: string;
  seed: number;
  entries: KeyEntry[];
}

export function adjudicationSheet(pairs: readonly PairRecord[], resultText: string, seed = 1): { csv: string; key: AdjudicationKey } {
  const probes = pairs.flatMap((p) => p.probes.filter((x) => x.phase === 'main' && (JUDGED_KINDS as readonly string[]).includes(x.kind)));
  const next = rng(seed);
  const order = probes.map((p) => ({ p, r: next() })).sort((a, b) => a.r - b.r).map(({ p }) => p);
  const rows: SheetRow[] = [];
  const entries: KeyEntry[] = [];
  for (const [i, p] of order.entries()) {
    const item = `item-${String(i + 1).padStart(4, '0')}`;
    const expected = [...p.expectation.required, ...(p.expectation.anyOf.length ? [`one of: ${p.expectation.anyOf.join(', ')}`] : [])].join('; ');
    rows.push({ item, question: p.question, correctAnswerConveys: expected, reply: p.reply ?? '(no reply)', judgment: '' });
    entries.push({ item, pair: p.pair, tenant: p.tenant, probeId: p.probeId, kind: p.kind, exactMatch: p.score.pass });
  }
  const csv = stringify(rows, { header: true, columns: ['item', 'question', 'correctAnswerConveys', 'reply', 'judgment'] });
  return { csv, key: { schema: 'npc-memory/adjudication-key@1', resultSha256: sha256(resultText), seed, entries } };
}

export interface AdjudicationScore {
  judges: number;
  items: number;
  /** Items with a majority of yes or no (unsure and ties are not counted either way). */
  decided: number;
  semanticRecall: Interval;
  /** Share of decided items where the judges' verdict equals the exact-match verdict. */
  agreementWithExactMatch: number;
  /** Items exact match failed but the judges credited (paraphrased or reworded answers). */
  creditedBeyondExactMatch: number;
  /** Share of items on which every judge gave the same judgment (with two or more judges). */
  unanimous: number | null;
}

/** Reads a judged sheet; a row without a valid judgment is an error naming the row. */
export function readSheet(csv: string): Map<string, Judgment | undefined> {
  const rows = parse(csv, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, string>[];
  const out = new Map<string, Judgment | undefined>();
  for (const [i, row] of rows.entries()) {
    const value = (row.judgment ?? '').toLowerCase();
    if (!row.item) throw new Error(`row ${i + 2}: no item id; keep the sheet's item column as it was`);
    if (value !== '' && !(JUDGMENTS as readonly string[]).includes(value)) {
      throw new Error(`row ${i + 2} (${row.item}): judgment must be yes, no or unsure (or empty), not ${JSON.stringify(row.judgment)}`);
    }
    out.set(row.item, value === '' ? undefined : (value as Judgment));
  }
  return out;
}

export function scoreAdjudication(key: AdjudicationKey, sheets: readonly Map<string, Judgment | undefined>[]): AdjudicationScore {
  const verdicts = key.entries.map((entry) => {
    const votes = sheets.map((s) => s.get(entry.item)).filter((v): v is Judgment => v !== undefined);
    const yes = votes.filter((v) => v === 'yes').length;
    const no = votes.filter((v) => v === 'no').length;
    return { entry, votes, verdict: yes > no ? true : no > yes ? false : undefined };
  });
  const decided = verdicts.filter((v) => v.verdict !== undefined);
  const pairs = [...new Set(key.entries.map((e) => e.pair))];
  const units = pairs.map((pair) => {
    const mine = decided.filter((v) => v.entry.pair === pair);
    return [mine.filter((v) => v.verdict).length, mine.length] as const;
  });
  const judged = verdicts.filter((v) => v.votes.length === sheets.length && sheets.length > 1);
  return {
    judges: sheets.length,
    items: key.entries.length,
    decided: decided.length,
    semanticRecall: bootstrap(units),
    agreementWithExactMatch: decided.length ? round(decided.filter((v) => v.verdict === v.entry.exactMatch).length / decided.length) : Number.NaN,
    creditedBeyondExactMatch: decided.filter((v) => v.verdict && !v.entry.exactMatch).length,
    unanimous: sheets.length > 1 && judged.length ? round(judged.filter((v) => new Set(v.votes).size === 1).length / judged.length) : null,
  };
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const round = (x: number) => Math.round(x * 10000) / 10000;
