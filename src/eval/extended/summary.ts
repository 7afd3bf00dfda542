/** Aggregates of the extended experiment, derived from the raw pair records alone. */
import type { Dataset } from '../dataset.js';
import { NOT_KNOWING } from '../natural/domains.js';
import { identityConfirmation, scoreReply } from '../scoring.js';
import { bootstrap, summarizeLatency, type Interval, type LatencySummary } from '../stats.js';
import type { PairRecord } from './run.js';
import { costOf, type CostSummary, type Prices } from '../cost.js';

export interface ExtendedSummary {
  /**
   * Pass rate per probe kind, CI over tenant pairs: main path (engine -> memory -> responder) in
   * new games; "same-game" in the shared setup game; "deletion" and "control" (the second
   * tenant's recall) after the erasure of the first.
   */
  byKind: Record<string, Interval & { passed: number; probes: number }>;
  /** The paired tenant's values (forbidden strings) found in a reply: every one listed. */
  foreignLeaks: { pair: number; tenant: string; probeId: string; kind: string; question: string; reply: string; leaked: string; where: string }[];
  /** Update/stale probes answered with the tenant's own superseded value. */
  staleAnswers: { pair: number; tenant: string; probeId: string; reply: string; leaked: string }[];
  /** Forget/deletion probes that failed: the value still said (or anything else the probe forbids or demands). */
  deletionFailures: { pair: number; tenant: string; probeId: string; kind: string; reply: string; leaked: string[]; missing: string[] }[];
  /** Abstention probes answered with one of the tenant's own values (a guess, not a leak). */
  abstentionOwnValues: { pair: number; tenant: string; probeId: string; reply: string; leaked: string[] }[];
  erasure: { erased: number; receiptsOk: number; valuesLeftInContext: { pair: number; tenant: string; values: string[] }[] };
  identityConfirmations: { pair: number; tenant: string; text: string; phrase: string }[];
  /** Ablations: pass rate per scope, config and kind, CI over tenant pairs; foreign leaks; tokens. */
  ablations: Record<string, Record<string, Record<string, Interval & { foreignLeaks: number; meanTokens: number }>>>;
  /**
   * Where the misses of the probes that need a value said come from, per kind (the full context
   * in a new game): the value was not among the asker's facts in the window (`notHeld`: not
   * extracted, not kept, or not retrieved), or it was and the reply said it did not know
   * (`heldNotSaid`) or said something else (`heldOtherSaid`). `namedBeside`: of the values not
   * held, those a fact named beside what the probe forbids (stored with the value it replaced).
   */
  misses: Record<string, { failed: number; notHeld: number; namedBeside: number; heldNotSaid: number; heldOtherSaid: number }>;
  latency: {
    endToEnd: LatencySummary;
    stages: Record<string, { meanMs: number; medianMs: number; p95Ms: number }>;
    contextEndpoint: Record<'retrieve' | 'build', { meanMs: number; medianMs: number; p95Ms: number }>;
  };
  /** Main path: tokens per probe and, given prices, cost per probe. */
  cost: CostSummary;
  /** The dataset's targets: per kind (rate estimate at or above the target) and foreign leaks. */
  targets: Record<string, { target: number; actual: number; met: boolean }>;
  ok: boolean;
}

/** The summary's kind of a probe record: after-erasure recall is the control. */
export const kindOf = (p: { kind: string; phase: string }) => (p.phase === 'after-erasure' && p.kind === 'recall' ? 'control' : p.kind);
const KIND_ORDER = ['recall', 'paraphrase', 'update', 'stale', 'abstention', 'forget', 'same-game', 'deletion', 'control'];

export function summarizeExtended(pairs: readonly PairRecord[], dataset: Pick<Dataset, 'tenants' | 'targets'>, prices?: Prices): ExtendedSummary {
  const probes = pairs.flatMap((p) => p.probes);
  const rank = (k: string) => (KIND_ORDER.includes(k) ? KIND_ORDER.indexOf(k) : KIND_ORDER.length);
  const kinds = [...new Set(probes.map(kindOf))].sort((x, y) => rank(x) - rank(y));

  const byKind: ExtendedSummary['byKind'] = {};
  for (const kind of kinds) {
    const units = pairs.map((p) => {
      const mine = p.probes.filter((x) => kindOf(x) === kind);
      return [mine.filter((x) => x.score.pass).length, mine.length] as const;
    });
    const all = probes.filter((p) => kindOf(p) === kind);
    byKind[kind] = { ...bootstrap(units), passed: all.filter((p) => p.score.pass).length, probes: all.length };
  }

  const foreignLeaks: ExtendedSummary['foreignLeaks'] = [];
  const staleAnswers: ExtendedSummary['staleAnswers'] = [];
  const deletionFailures: ExtendedSummary['deletionFailures'] = [];
  const abstentionOwnValues: ExtendedSummary['abstentionOwnValues'] = [];
  for (const p of pairs) {
    for (const x of p.probes) {
      const own = x.score.ownLeaked ?? [];
      for (const leaked of x.score.leaked) {
        foreignLeaks.push({ pair: p.pair, tenant: x.tenant, probeId: x.probeId, kind: kindOf(x), question: x.question, reply: x.reply ?? '', leaked, where: x.phase === 'same-game' ? 'same-game' : x.phase === 'after-erasure' ? 'engine (after erasure)' : 'engine' });
      }
      if ((x.kind === 'update' || x.kind === 'stale') && own.length) for (const leaked of own) staleAnswers.push({ pair: p.pair, tenant: x.tenant, probeId: x.probeId, reply: x.reply ?? '', leaked });
      if ((x.kind === 'forget' || x.kind === 'deletion') && !x.score.pass) {
        deletionFailures.push({ pair: p.pair, tenant: x.tenant, probeId: x.probeId, kind: x.kind, reply: x.reply ?? '', leaked: [...own, ...x.score.leaked], missing: [...x.score.missing, ...(x.score.anyOfMissed ? [`one of: ${x.expectation.anyOf.join(' | ')}`] : [])] });
      }
      if (x.kind === 'abstention' && own.length) abstentionOwnValues.push({ pair: p.pair, tenant: x.tenant, probeId: x.probeId, reply: x.reply ?? '', leaked: own });
    }
    for (const a of p.ablations) {
      for (const leaked of a.score.leaked) foreignLeaks.push({ pair: p.pair, tenant: a.tenant, probeId: a.probeId, kind: a.kind, question: '', reply: a.reply, leaked, where: `ablation ${a.config} (${a.scope})` });
    }
  }

  const ablations: ExtendedSummary['ablations'] = {};
  const all = pairs.flatMap((p) => p.ablations);
  for (const scope of [...new Set(all.map((a) => a.scope))]) {
    for (const config of [...new Set(all.map((a) => a.config))]) {
      for (const kind of [...new Set(all.map((a) => a.kind))]) {
        const units = pairs.map((p) => {
          const mine = p.ablations.filter((a) => a.scope === scope && a.config === config && a.kind === kind);
          return [mine.filter((a) => a.score.pass).length, mine.length] as const;
        });
        const rows = all.filter((a) => a.scope === scope && a.config === config && a.kind === kind);
        const foreign = foreignLeaks.filter((l) => l.where === `ablation ${config} (${scope})` && l.kind === kind).length;
        ((ablations[scope] ??= {})[config] ??= {})[kind] = { ...bootstrap(units), foreignLeaks: foreign, meanTokens: round(rows.reduce((n, r) => n + r.tokens, 0) / (rows.length || 1)) };
      }
    }
  }

  const misses: ExtendedSummary['misses'] = {};
  for (const a of all.filter((x) => x.scope === 'new-game' && x.config === 'full' && x.held !== undefined && !x.score.pass)) {
    const m = (misses[a.kind] ??= { failed: 0, notHeld: 0, namedBeside: 0, heldNotSaid: 0, heldOtherSaid: 0 });
    m.failed++;
    if (!a.held) {
      m.notHeld++;
      if (a.named) m.namedBeside++;
    }
    else if (scoreReply(a.reply, { anyOf: NOT_KNOWING }).pass) m.heldNotSaid++;
    else m.heldOtherSaid++;
  }

  const erasures = pairs.flatMap((p) => p.erasures);
  const identityConfirmations = [
    ...pairs.flatMap((p) => p.setup.map((s) => ({ pair: p.pair, tenant: s.tenant, text: s.reply ?? '' }))),
    ...probes.map((x) => ({ pair: x.pair, tenant: x.tenant, text: x.reply ?? '' })),
  ]
    .map((r) => ({ ...r, phrase: identityConfirmation(r.text) }))
    .filter((r): r is typeof r & { phrase: string } => r.phrase !== undefined);

  const stage = (values: number[]) => {
    const s = summarizeLatency(values);
    return { meanMs: s.meanMs, medianMs: s.medianMs, p95Ms: s.p95Ms };
  };
  const staged = probes.filter((p) => p.stages);
  const stages = Object.fromEntries(
    ['memoryRetrievalMs', 'contextBuildMs', 'modelLatencyMs', 'guardMs', 'totalLatencyMs'].map((k) => [k, stage(staged.map((p) => (p.stages as unknown as Record<string, number>)[k]!))]),
  );
  const contexts = all.filter((a) => a.config === 'full');
  const endToEnd = summarizeLatency(
    probes.map((p) => p.latencyMs),
    dataset.targets.maxLatencyMs,
  );
  const targets: ExtendedSummary['targets'] = {};
  for (const [kind, target] of Object.entries(dataset.targets.byKind ?? { recall: dataset.targets.recall })) {
    const actual = byKind[kind]?.estimate ?? Number.NaN;
    targets[kind] = { target, actual, met: actual >= target };
  }
  const mainLeaks = foreignLeaks.filter((l) => !l.where.startsWith('ablation')).length;
  targets.foreignLeaks = { target: dataset.targets.leaks, actual: mainLeaks, met: mainLeaks <= dataset.targets.leaks };
  return {
    byKind,
    foreignLeaks,
    staleAnswers,
    deletionFailures,
    abstentionOwnValues,
    erasure: {
      erased: erasures.length,
      receiptsOk: erasures.filter((e) => 'removed' in e.receipt).length,
      valuesLeftInContext: erasures.filter((e) => e.valuesInContext.length > 0).map((e) => ({ pair: e.pair, tenant: e.tenant, values: e.valuesInContext })),
    },
    identityConfirmations,
    ablations,
    misses,
    latency: {
      endToEnd,
      stages,
      contextEndpoint: { retrieve: stage(contexts.map((c) => c.timingsMs.retrieve)), build: stage(contexts.map((c) => c.timingsMs.build)) },
    },
    cost: costOf(probes.map((p) => p.tokens), prices),
    targets,
    ok: Object.values(targets).every((t) => t.met),
  };
}

/** Per-kind rates with intervals, every leak, and the targets: what the CLI prints. */
export function consoleReport(summary: ExtendedSummary): string {
  const pct = (x: number) => (Number.isNaN(x) ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  const lines = ['kind         passed     rate [95% CI over pairs]'];
  for (const [k, v] of Object.entries(summary.byKind)) lines.push(`${k.padEnd(12)} ${`${v.passed}/${v.probes}`.padEnd(10)} ${pct(v.estimate)} [${pct(v.low)}, ${pct(v.high)}]`);
  const main = summary.foreignLeaks.filter((l) => !l.where.startsWith('ablation'));
  lines.push(`foreign-fact leaks (main path and same game): ${main.length}`);
  for (const l of main) lines.push(`  LEAK pair ${l.pair} ${l.tenant} ${l.probeId} [${l.where}]: "${l.leaked}" in "${l.reply}"`);
  const abl = summary.foreignLeaks.filter((l) => l.where.startsWith('ablation'));
  lines.push(`foreign-fact leaks in ablations: ${abl.length}`);
  for (const l of abl) lines.push(`  LEAK pair ${l.pair} ${l.tenant} ${l.probeId} [${l.where}]: "${l.leaked}" in "${l.reply}"`);
  lines.push(`stale answers (own old value): ${summary.staleAnswers.length}; forget/deletion failures: ${summary.deletionFailures.length}; abstentions answered with an own value: ${summary.abstentionOwnValues.length}`);
  lines.push(`misses (full context, new game): ${Object.entries(summary.misses).map(([k, m]) => `${k} ${m.failed} (${missParts(m)})`).join('; ') || 'none'}`);
  lines.push(`erasure: ${summary.erasure.receiptsOk}/${summary.erasure.erased} receipts, erased values still in a fresh context window: ${summary.erasure.valuesLeftInContext.length}`);
  lines.push(`identity confirmations: ${summary.identityConfirmations.length}`);
  const e = summary.latency.endToEnd;
  lines.push(`latency ms: mean ${e.meanMs}, median ${e.medianMs}, p95 ${e.p95Ms}, max ${e.maxMs}`);
  lines.push(`targets: ${Object.entries(summary.targets).map(([k, t]) => `${k} ${k === 'foreignLeaks' ? t.actual : pct(t.actual)} (${k === 'foreignLeaks' ? `<= ${t.target}` : `>= ${pct(t.target)}`}) ${t.met ? 'met' : 'NOT MET'}`).join('; ')}`);
  return lines.join('\n');
}

const round = (x: number) => Math.round(x * 10) / 10;

const missParts = (m: ExtendedSummary['misses'][string]) => `not held ${m.notHeld} (named only beside a forbidden value ${m.namedBeside}), held but not said ${m.heldNotSaid}, held but another answer ${m.heldOtherSaid}`;

/** The markdown report (docs/eval/extended.md). */
export function extendedMarkdown(summary: ExtendedSummary, meta: { title: string; revision: string; startedAt: string; datasetSha256: string; output: string; backend: string; pairs: number }): string {
  const pct = (i: Interval) => (Number.isNaN(i.estimate) ? 'n/a' : `${(i.estimate * 100).toFixed(1)}% [${(i.low * 100).toFixed(1)}, ${(i.high * 100).toFixed(1)}]`);
  const kinds = Object.entries(summary.byKind)
    .map(([k, v]) => `| ${k} | ${v.passed}/${v.probes} | ${pct(v)} |`)
    .join('\n');
  const abl: string[] = [];
  for (const [scope, configs] of Object.entries(summary.ablations)) {
    for (const [config, byKind] of Object.entries(configs)) {
      const cells = ['recall', 'paraphrase', 'update', 'stale', 'abstention', 'forget'].map((k) => (byKind[k] ? pct(byKind[k]) : ''));
      const leaks = Object.values(byKind).reduce((n, v) => n + v.foreignLeaks, 0);
      const tokens = byKind.recall?.meanTokens ?? 0;
      abl.push(`| ${scope} | ${config} | ${cells.join(' | ')} | ${leaks} | ${tokens} |`);
    }
  }
  const st = summary.latency.stages;
  const e = summary.latency.endToEnd;
  return `# ${meta.title}

Run ${meta.startedAt}, revision \`${meta.revision}\`, backend ${meta.backend}, ${meta.pairs} tenant pairs, dataset sha256 \`${meta.datasetSha256.slice(0, 16)}…\`.
Raw result: \`${meta.output}\` (every reply, score and timing; the numbers below are derived from it).
Intervals: 95% percentile bootstrap over tenant pairs (2000 resamples, seed 1).

## Main path (engine API -> memory service -> offline responder)

| probe kind | passed | pass rate [95% CI] |
|---|---:|---|
${kinds}

Same-game and deletion are leak checks: a reply passes when it names none of the forbidden values,
so an NPC that answers nothing passes them; their 100% says nothing leaked, not that the NPC
remembers. The scorer fails a reply that repeats the value (\`test/eval/scoring-kinds.test.ts\`).
Control (the partner still recalled after the other's erasure) is the check beside them that needs an answer.

- foreign-fact leaks: **${summary.foreignLeaks.length}**${summary.foreignLeaks.map((l) => `\n  - pair ${l.pair} ${l.tenant} ${l.probeId} (${l.where}): "${l.leaked}" in "${l.reply}"`).join('')}
- identity confirmations: **${summary.identityConfirmations.length}**
- stale answers (own superseded value given): ${summary.staleAnswers.length}
- abstentions answered with an own value: ${summary.abstentionOwnValues.length}
- erasure: ${summary.erasure.receiptsOk}/${summary.erasure.erased} receipts; forget/deletion failures in replies: ${summary.deletionFailures.length}; erased values still in a fresh context window: ${summary.erasure.valuesLeftInContext.length}

## Where the misses come from (full context, new game)

| probe kind | failed | value not among the asker's facts | of which named only beside a forbidden value | held, reply did not know | held, reply said another |
|---|---:|---:|---:|---:|---:|
${Object.entries(summary.misses).map(([k, m]) => `| ${k} | ${m.failed} | ${m.notHeld} | ${m.namedBeside} | ${m.heldNotSaid} | ${m.heldOtherSaid} |`).join('\n')}

## Ablations (memory service context, sections kept client-side, same offline responder)

| game | config | recall | paraphrase | update | stale | abstention | forget | foreign leaks | tokens (recall) |
|---|---|---|---|---|---|---|---|---:|---:|
${abl.join('\n')}

"new-game": probes asked in a game the NPC never met the tenant in (cross-game, the protocol's case).
"setup-game": the same probes in the game where the facts were said (thread and episodic memory exist).
Forget and abstention pass when no fact of the tenant is in the sections kept: under the transcript and
episodic cuts their high figures say that nothing was said, not that forgetting or abstaining works.

## Latency

End to end (HTTP say + reply on the stream), ${e.count} probes: mean ${e.meanMs} ms, median ${e.medianMs} ms, p95 ${e.p95Ms} ms, max ${e.maxMs} ms, ${(e.shareWithin * 100).toFixed(1)}% <= ${e.thresholdMs} ms.

| stage (engine operator route) | mean ms | median ms | p95 ms |
|---|---:|---:|---:|
${Object.entries(st).map(([k, v]) => `| ${k} | ${v.meanMs} | ${v.medianMs} | ${v.p95Ms} |`).join('\n')}
| context endpoint: retrieve (timingsMs) | ${summary.latency.contextEndpoint.retrieve.meanMs} | ${summary.latency.contextEndpoint.retrieve.medianMs} | ${summary.latency.contextEndpoint.retrieve.p95Ms} |
| context endpoint: build (timingsMs) | ${summary.latency.contextEndpoint.build.meanMs} | ${summary.latency.contextEndpoint.build.medianMs} | ${summary.latency.contextEndpoint.build.p95Ms} |

## Cost per probe

${costLine(summary.cost)}

## Targets

${Object.entries(summary.targets).map(([k, v]) => `- ${k}: ${v.actual} (target ${v.target}) ${v.met ? 'met' : '**not met**'}`).join('\n')}
`;
}

function costLine(c: CostSummary): string {
  if (c.probes === 0) return 'No turn reported tokens.';
  const how = c.counted === 'model' ? "as billed by the model's endpoint" : c.counted === 'estimate' ? 'estimated (offline responder: context window tokens + message; the JSON reply)' : 'partly billed, partly estimated';
  const money = c.meanCostPerProbe === null ? 'No prices given (`--price-per-1k input,output`), so no money figure.' : `At ${c.pricesPer1k!.input} / ${c.pricesPer1k!.output} per 1,000 input / output tokens: **${c.meanCostPerProbe} per probe**.`;
  return `Mean over ${c.probes} probes, ${how}: ${c.meanPromptTokens} prompt tokens and ${c.meanCompletionTokens} completion tokens per probe. ${money}`;
}
