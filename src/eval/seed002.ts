/**
 * The seed-002 runner: paired synthetic tenants talk to one NPC through the engine's public API
 * (accounts, games, `say`), the system settles (consolidation drained in process, or a wait),
 * then each tenant asks its probes in a NEW game, so recall must cross games through social
 * memory. Every reply is scored (scoring.ts); latency is the HTTP request plus the wait for
 * the NPC's reply on the stream.
 *
 * The raw records are the result; `summarize` derives every aggregate from them, so a result
 * file can be re-scored from its JSON alone (`eval verify`).
 */
import { randomBytes } from 'node:crypto';
import { costOf, type CostSummary, type Prices, type TurnTokens } from './cost.js';
import type { Dataset, Probe, Tenant } from './dataset.js';
import { gameWith, npcTurns, type OperatorTurn } from './game.js';
import { Player, type Exchange } from './player.js';
import { identityConfirmation, scoreReply, type Score } from './scoring.js';
import { summarizeLatency, type LatencySummary } from './stats.js';
import type { EvalTarget } from './target.js';

export interface RunOptions {
  settleMs: number;
  repetitions: number;
  /** Wait for each NPC reply at most this long. (Default: 10000) */
  replyTimeoutMs?: number;
  /** NPC turns one game's room grants before the next game is opened (the runtime's room burst). (Default: 6) */
  turnsPerGame?: number;
  onProgress?: (done: number, total: number, label: string) => void;
}

export interface ProbeRecord {
  repetition: number;
  tenant: string;
  /** The tenant paired with this one: whose facts are forbidden here. */
  pairedWith: string;
  probeId: string;
  domain: string;
  kind: string;
  question: string;
  expectation: { required: string[]; forbidden: string[]; anyOf: string[]; ownForbidden?: string[] };
  reply: string | null;
  latencyMs: number;
  score: Score;
  identityConfirmation: string | null;
  /** The engine's stage timings of the turn that answered (operator route), when available. */
  stages?: OperatorTurn['timings'];
  /** That turn's tokens (operator route), when available. */
  tokens?: TurnTokens;
}

export interface SetupRecord {
  repetition: number;
  tenant: string;
  sent: string;
  reply: string | null;
  latencyMs: number;
  identityConfirmation: string | null;
}

export interface RepetitionRecord {
  index: number;
  /** Fresh per repetition; only a random run tag, never anything real. */
  usernames: Record<string, string>;
  setup: SetupRecord[];
  probes: ProbeRecord[];
}

export interface Leak {
  repetition: number;
  tenant: string;
  probeId: string;
  question: string;
  reply: string;
  leaked: string;
  /** Whose fact it is. */
  owner: string;
}

export interface Summary {
  probes: number;
  passed: number;
  passRate: number;
  /** Probes with a required (or any-of) string missing. */
  missingRecall: { count: number; cases: { repetition: number; tenant: string; probeId: string; question: string; reply: string | null; missing: string[] }[] };
  /** Every forbidden string found, one entry each. */
  leaks: Leak[];
  identityConfirmations: { repetition: number; tenant: string; sent: string; reply: string; phrase: string }[];
  noReply: number;
  latency: LatencySummary;
  /** Tokens per probe and, given prices, cost per probe. */
  cost: CostSummary;
  byDomain: Record<string, { probes: number; passed: number }>;
  targets: { recall: boolean; leaks: boolean; identity: boolean; maxLatency: boolean; p95Latency: boolean };
  ok: boolean;
}

export async function runSeed002(target: EvalTarget, dataset: Dataset, options: RunOptions): Promise<RepetitionRecord[]> {
  const definition = await gameWith(dataset.npc);
  const npcName = dataset.npc.firstName;
  const turnsPerGame = options.turnsPerGame ?? 6;
  const timeout = options.replyTimeoutMs ?? 10_000;
  const byAlias = new Map(dataset.tenants.map((t) => [t.alias, t]));
  const pairOf = new Map(dataset.pairs.flatMap(([a, b]) => [[a, b] as const, [b, a] as const]));
  const perRep = dataset.tenants.reduce((n, t) => n + t.setup.length + t.probes.length, 0);
  const total = perRep * options.repetitions;
  let done = 0;
  const tick = (label: string) => options.onProgress?.(++done, total, label);
  const records: RepetitionRecord[] = [];

  for (let rep = 1; rep <= options.repetitions; rep++) {
    const tag = randomBytes(4).toString('hex');
    const players = new Map<string, Player>();
    for (const tenant of dataset.tenants) players.set(tenant.alias, await Player.account(target.engineUrl, `e${tag}-${rep}-${tenant.alias}`, tenant.alias));
    const record: RepetitionRecord = { index: rep, usernames: Object.fromEntries([...players].map(([a]) => [a, `e${tag}-${rep}-${a}`])), setup: [], probes: [] };

    // Setup: the two tenants of a pair share one game (the same NPC hears both), one line each in turn.
    for (const [a, b] of dataset.pairs) {
      const lines = interleave(byAlias.get(a)!, byAlias.get(b)!);
      for (const chunk of chunks(lines, turnsPerGame)) {
        const gameId = await players.get(a)!.newGame(definition);
        await players.get(b)!.client.join(gameId);
        for (const { alias, text } of chunk) {
          const exchange = await players.get(alias)!.ask(gameId, addressed(text, npcName), npcName, timeout);
          record.setup.push({ repetition: rep, tenant: alias, sent: exchange.sent, reply: exchange.reply ?? null, latencyMs: exchange.latencyMs, identityConfirmation: confirmation(exchange) });
          tick(`rep ${rep} setup ${alias}`);
        }
      }
    }

    await target.settle(options.settleMs);

    // Probes: each tenant alone in new games (never the setup game).
    for (const tenant of dataset.tenants) {
      const player = players.get(tenant.alias)!;
      for (const chunk of chunks(tenant.probes, turnsPerGame)) {
        const gameId = await player.newGame(definition);
        const asked: [Probe, Exchange][] = [];
        for (const probe of chunk) {
          asked.push([probe, await player.ask(gameId, addressed(probe.question, npcName), npcName, timeout)]);
          tick(`rep ${rep} probe ${tenant.alias}`);
        }
        const turns = target.operatorToken ? await npcTurns(target.engineUrl, target.operatorToken, gameId).catch(() => []) : [];
        for (const [probe, exchange] of asked) {
          record.probes.push(probeRecord(rep, tenant.alias, pairOf.get(tenant.alias) ?? '', probe, exchange, turns.find((t) => t.triggerSeq === exchange.seq)));
        }
      }
    }
    records.push(record);
  }
  return records;
}

export function probeRecord(repetition: number, tenant: string, pairedWith: string, probe: Probe, exchange: Exchange, turn?: OperatorTurn): ProbeRecord {
  const expectation = {
    required: [...(probe.required ?? [])],
    forbidden: [...(probe.forbidden ?? [])],
    anyOf: [...(probe.anyOf ?? [])],
    ...(probe.ownForbidden ? { ownForbidden: [...probe.ownForbidden] } : {}),
  };
  return {
    repetition,
    tenant,
    pairedWith,
    probeId: probe.id,
    domain: probe.domain,
    kind: probe.kind ?? 'recall',
    question: probe.question,
    expectation,
    reply: exchange.reply ?? null,
    latencyMs: exchange.latencyMs,
    score: scoreReply(exchange.reply ?? '', expectation),
    identityConfirmation: confirmation(exchange),
    ...(turn ? { stages: turn.timings } : {}),
    ...(turn?.tokens ? { tokens: turn.tokens } : {}),
  };
}

const confirmation = (exchange: Exchange) => (exchange.reply ? (identityConfirmation(exchange.reply) ?? null) : null);

/**
 * Every aggregate, from the raw records alone (re-scoring each reply, so a result file whose
 * replies were kept can be checked against its own summary).
 */
export function summarize(repetitions: readonly RepetitionRecord[], targets: Dataset['targets'], prices?: Prices, thresholdMs = targets.maxLatencyMs): Summary {
  const probes = repetitions.flatMap((r) => r.probes).map((p) => ({ ...p, score: scoreReply(p.reply ?? '', p.expectation) }));
  const leaks: Leak[] = probes.flatMap((p) =>
    p.score.leaked.map((leaked) => ({ repetition: p.repetition, tenant: p.tenant, probeId: p.probeId, question: p.question, reply: p.reply ?? '', leaked, owner: p.pairedWith || 'another tenant' })),
  );
  const missing = probes.filter((p) => p.score.missing.length > 0 || p.score.anyOfMissed);
  const identity = [...repetitions.flatMap((r) => r.setup), ...probes]
    .map((x) => ({ x, phrase: x.reply ? identityConfirmation(x.reply) : undefined }))
    .filter((c) => c.phrase !== undefined)
    .map(({ x, phrase }) => ({ repetition: x.repetition, tenant: x.tenant, sent: 'sent' in x ? x.sent : x.question, reply: x.reply ?? '', phrase: phrase! }));
  const latency = summarizeLatency(
    probes.map((p) => p.latencyMs),
    thresholdMs,
  );
  const passed = probes.filter((p) => p.score.pass).length;
  const byDomain: Summary['byDomain'] = {};
  for (const p of probes) {
    const d = (byDomain[p.domain] ??= { probes: 0, passed: 0 });
    d.probes++;
    if (p.score.pass) d.passed++;
  }
  const passRate = probes.length ? passed / probes.length : 0;
  const met = {
    recall: passRate >= targets.recall,
    leaks: leaks.length <= targets.leaks,
    identity: identity.length === 0,
    maxLatency: latency.maxMs <= targets.maxLatencyMs,
    p95Latency: latency.p95Ms <= targets.p95LatencyMs,
  };
  return {
    probes: probes.length,
    passed,
    passRate: Math.round(passRate * 10000) / 10000,
    missingRecall: {
      count: missing.length,
      cases: missing.map((p) => ({ repetition: p.repetition, tenant: p.tenant, probeId: p.probeId, question: p.question, reply: p.reply, missing: p.score.anyOfMissed ? [...p.score.missing, `one of: ${p.expectation.anyOf.join(' | ')}`] : p.score.missing })),
    },
    leaks,
    identityConfirmations: identity,
    noReply: probes.filter((p) => p.reply === null).length,
    latency,
    cost: costOf(probes.map((p) => p.tokens), prices),
    byDomain,
    targets: met,
    ok: Object.values(met).every(Boolean),
  };
}

/** The line as said: datasets may @mention the NPC anywhere in a line; otherwise the runner puts `@Name ` in front. */
export function addressed(text: string, npcName: string): string {
  return new RegExp(`@${npcName}(?![^\\s@,.;:!?])`, 'u').test(text) ? text : `@${npcName} ${text}`;
}

/** The two tenants' setup lines, alternating, as they are said in the shared game. */
export function interleave(a: Tenant, b: Tenant): { alias: string; text: string }[] {
  const out: { alias: string; text: string }[] = [];
  for (let i = 0; i < Math.max(a.setup.length, b.setup.length); i++) {
    if (i < a.setup.length) out.push({ alias: a.alias, text: a.setup[i]! });
    if (i < b.setup.length) out.push({ alias: b.alias, text: b.setup[i]! });
  }
  return out;
}

export function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
