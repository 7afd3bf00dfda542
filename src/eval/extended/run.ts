/**
 * The extended experiment (seed 002 section 9), in process: for each tenant pair, setup through
 * the engine's public API, settle, the main probes in new games (recall, paraphrase, update,
 * stale, abstention), the same probes under each retrieval ablation (ablations.ts) in a new game
 * and in the setup game, then the erasure of the pair's first tenant through the memory
 * service's admin API, and the after-erasure probes (deletion; the second tenant is the control).
 */
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { MemoryHttpClient } from '../../boundary/memory-client.js';
import type { ContextFact, ContextRequest, ContextWindow, RoomMessage } from '../../boundary/context.js';
import { respond } from '../../npc/offline-responder.js';
import type { Dataset, Probe, Tenant } from '../dataset.js';
import { gameWith, npcTurns } from '../game.js';
import { Player } from '../player.js';
import { scoreReply, type Score } from '../scoring.js';
import { addressed, chunks, interleave, probeRecord, type ProbeRecord, type SetupRecord } from '../seed002.js';
import { normalize } from '../scoring.js';
import type { EvalTarget } from '../target.js';
import { ABLATIONS, ablate, type Ablation } from './ablations.js';

export interface AblationRecord {
  pair: number;
  tenant: string;
  probeId: string;
  kind: string;
  scope: 'new-game' | 'setup-game';
  config: Ablation;
  reply: string;
  score: Score;
  /** Tokens of the sections kept (the window's own count per section). */
  tokens: number;
  timingsMs: { retrieve: number; build: number };
  /**
   * Full config, probes that need a value said (recall, paraphrase, update, stale): whether the
   * asker's facts in the window held one that names it and nothing the probe forbids (where a
   * miss comes from: memory, or the reply; summary.ts `misses`).
   */
  held?: boolean;
  /**
   * With `held`: whether a fact named the value at all, even beside something the probe forbids
   * ("you went from plumber to nurse" for an update to nurse): a value not held but named was
   * stored together with what it replaced.
   */
  named?: boolean;
}

/** Probe kinds whose reply must say a remembered value. */
const SAYS_A_VALUE = new Set(['recall', 'paraphrase', 'update', 'stale']);

/** Whether one of these facts names what the probe asks for and nothing it forbids. */
export function holds(facts: readonly ContextFact[], probe: Pick<Probe, 'required' | 'anyOf' | 'forbidden' | 'ownForbidden'>): boolean {
  const forbidden = [...(probe.forbidden ?? []), ...(probe.ownForbidden ?? [])];
  return facts.some((f) => scoreReply(f.summary, { required: probe.required, anyOf: probe.anyOf, forbidden }).pass);
}

/** One probe's context window as the memory service assembled it in a new game, for replaying the responder. */
export interface WindowDump {
  pair: number;
  tenant: string;
  asker: string;
  npc: { npcId: string; firstName: string };
  probe: Probe;
  /** The line as the player said it (the NPC addressed). */
  text: string;
  window: ContextWindow;
}

export interface ErasureRecord {
  pair: number;
  tenant: string;
  receipt: { removed: Record<string, number>; keysDestroyed: number } | { error: string };
  /** After erasure: the tenant's values found anywhere in a freshly assembled context window (serving store). */
  valuesInContext: string[];
}

export interface PairRecord {
  pair: number;
  tenants: [string, string];
  setup: SetupRecord[];
  probes: (ProbeRecord & { pair: number; phase: string })[];
  ablations: AblationRecord[];
  erasures: ErasureRecord[];
}

export interface ExtendedOptions {
  settleMs: number;
  ablations?: boolean;
  /** A file to append each probe's full window in a new game to, one JSON line each (`WindowDump`). */
  dumpWindows?: string;
  replyTimeoutMs?: number;
  onProgress?: (done: number, total: number, label: string) => void;
}

export async function runExtended(target: EvalTarget, dataset: Dataset, options: ExtendedOptions): Promise<PairRecord[]> {
  if (!target.memoryUrl || !target.runtimeKey || !target.adminKey) throw new Error('the extended experiment needs the memory service and its keys: run it in process');
  const memory = new MemoryHttpClient(target.memoryUrl, target.runtimeKey);
  const definition = await gameWith(dataset.npc);
  const npc = dataset.npc;
  const byAlias = new Map(dataset.tenants.map((t) => [t.alias, t]));
  const erase = new Set(dataset.erase ?? []);
  const timeout = options.replyTimeoutMs ?? 10_000;
  const total = dataset.pairs.length;
  const out: PairRecord[] = [];

  for (const [index, [a, b]] of dataset.pairs.entries()) {
    const pair = index + 1;
    const tag = randomBytes(4).toString('hex');
    const tenants = [byAlias.get(a)!, byAlias.get(b)!] as const;
    const players = new Map<string, Player>();
    for (const t of tenants) players.set(t.alias, await Player.account(target.engineUrl, `x${tag}-${t.alias}`, t.alias));
    const record: PairRecord = { pair, tenants: [a, b], setup: [], probes: [], ablations: [], erasures: [] };

    // 1. Setup: both tenants in the same game(s), one line each in turn; a same-game probe is
    //    asked by one tenant right after the other's line it names (afterPartnerLine).
    const steps = setupSteps(tenants[0], tenants[1]);
    const setupGames: string[] = [];
    for (const chunk of chunks(steps, 6)) {
      const gameId = await players.get(a)!.newGame(definition);
      await players.get(b)!.client.join(gameId);
      setupGames.push(gameId);
      const asked = [];
      for (const step of chunk) {
        const text = step.probe ? step.probe.question : step.text;
        const x = await players.get(step.alias)!.ask(gameId, addressed(text, npc.firstName), npc.firstName, timeout);
        if (step.probe) asked.push({ step, probe: step.probe, x });
        else record.setup.push({ repetition: pair, tenant: step.alias, sent: x.sent, reply: x.reply ?? null, latencyMs: x.latencyMs, identityConfirmation: null });
      }
      if (asked.length) {
        const turns = target.operatorToken ? await npcTurns(target.engineUrl, target.operatorToken, gameId).catch(() => []) : [];
        for (const { step, probe, x } of asked) {
          record.probes.push({ ...probeRecord(pair, step.alias, step.alias === a ? b : a, probe, x, turns.find((t) => t.triggerSeq === x.seq)), pair, phase: 'same-game' });
        }
      }
    }
    await target.settle(options.settleMs);

    // The participant ids as the memory service knows them: from its own episodic rows of the setup game.
    const participantOf = await participantIds(memory, setupGames, npc.npcId, tenants);

    // 2. Main probes, each tenant alone in new games.
    const ask = async (tenant: Tenant, probes: Probe[], phase: string) => {
      for (const chunk of chunks(probes, 6)) {
        const player = players.get(tenant.alias)!;
        const gameId = await player.newGame(definition);
        const asked = [];
        for (const probe of chunk) asked.push({ probe, x: await player.ask(gameId, addressed(probe.question, npc.firstName), npc.firstName, timeout) });
        const turns = target.operatorToken ? await npcTurns(target.engineUrl, target.operatorToken, gameId).catch(() => []) : [];
        for (const { probe, x } of asked) {
          const pairedWith = tenant.alias === a ? b : a;
          record.probes.push({ ...probeRecord(pair, tenant.alias, pairedWith, probe, x, turns.find((t) => t.triggerSeq === x.seq)), pair, phase });
        }
      }
    };
    for (const t of tenants) await ask(t, t.probes.filter((p) => (p.phase ?? 'main') === 'main'), 'main');

    // 3. Ablations: the memory service's context, filtered client-side, composed by the offline responder.
    if (options.ablations !== false) {
      const transcript = await setupTranscript(players.get(a)!, setupGames[0]!, participantOf, players);
      for (const t of tenants) {
        const asker = participantOf.get(t.alias);
        if (!asker) continue;
        for (const probe of t.probes.filter((p) => (p.phase ?? 'main') === 'main')) {
          for (const scope of ['new-game', 'setup-game'] as const) {
            const text = addressed(probe.question, npc.firstName);
            const gameId = scope === 'new-game' ? `eval-ablation-${tag}-${probe.id}` : setupGames[0]!;
            const before = scope === 'new-game' ? [] : transcript;
            const message: RoomMessage = { seq: (before.at(-1)?.seq ?? 0) + 1, speaker: { participantId: asker }, text, targeted: true, ts: Math.floor(Date.now() / 1000) };
            const request: ContextRequest = {
              roomId: definition.startRoom,
              participants: [{ participantId: asker, anonymous: false }],
              messages: [...before.slice(-63), message],
              state: { version: 0, facts: {} },
            };
            const window = await memory.context(gameId, npc.npcId, request);
            if (options.dumpWindows && scope === 'new-game') {
              const dump: WindowDump = { pair, tenant: t.alias, asker, npc: { npcId: npc.npcId, firstName: npc.firstName }, probe, text, window };
              await appendFile(options.dumpWindows, `${JSON.stringify(dump)}\n`);
            }
            for (const config of ABLATIONS) {
              const view = ablate(window, config, asker, text);
              const reply = respond({ npc: { npcId: npc.npcId, firstName: npc.firstName }, window: view, trigger: { participantId: asker, anonymous: false, text, targeted: true } }).text;
              record.ablations.push({
                pair,
                tenant: t.alias,
                probeId: probe.id,
                kind: probe.kind ?? 'recall',
                scope,
                config,
                reply,
                score: scoreReply(reply, { required: probe.required, forbidden: probe.forbidden, anyOf: probe.anyOf, ownForbidden: probe.ownForbidden }),
                tokens: tokensOf(window.tokens.sections, config),
                timingsMs: window.timingsMs,
                ...(config === 'full' && SAYS_A_VALUE.has(probe.kind ?? 'recall') ? { held: holds(window.participants[asker]?.facts ?? [], probe), named: holds(window.participants[asker]?.facts ?? [], { required: probe.required, anyOf: probe.anyOf }) } : {}),
              });
            }
          }
        }
      }
    }

    // 4. Erasure of the pair's erased tenant(s), through the memory service's admin API.
    for (const t of tenants.filter((x) => erase.has(x.alias))) {
      const participantId = participantOf.get(t.alias);
      const receipt = participantId ? await eraseParticipant(target.memoryUrl, target.adminKey, participantId) : { error: 'participant id not found in episodic memory' };
      const values = t.facts ? [...new Set(t.facts.flatMap((f) => [f.value, ...(f.previous ? [f.previous] : [])]))] : t.probes.filter((p) => (p.kind ?? 'recall') === 'recall').flatMap((p) => p.required ?? []);
      const valuesInContext: string[] = [];
      if (participantId) {
        for (const gameId of [setupGames[0]!, `eval-after-erasure-${tag}`]) {
          const window = await memory.context(gameId, npc.npcId, {
            roomId: definition.startRoom,
            participants: [{ participantId, anonymous: false }],
            messages: [{ seq: 1, speaker: { participantId }, text: `@${npc.firstName} what do you remember about me?`, targeted: true, ts: Math.floor(Date.now() / 1000) }],
            state: { version: 0, facts: {} },
          });
          const json = JSON.stringify({ ...window, transcript: { ...window.transcript, turns: [] } }).toLowerCase();
          for (const v of values) if (json.includes(v.toLowerCase()) && !valuesInContext.includes(v)) valuesInContext.push(v);
        }
      }
      record.erasures.push({ pair, tenant: t.alias, receipt, valuesInContext });
    }
    await target.settle(options.settleMs);

    // 5. After erasure: deletion probes (erased tenant) and the control's recall.
    for (const t of tenants) await ask(t, t.probes.filter((p) => p.phase === 'after-erasure'), 'after-erasure');

    out.push(record);
    options.onProgress?.(pair, total, `pair ${pair}`);
  }
  return out;
}

/**
 * The participant ids as the memory service knows them, from its own episodic rows of the setup
 * games: the speaker of most rows that carry one of the tenant's setup lines (the @mention aside).
 */
async function participantIds(memory: MemoryHttpClient, gameIds: readonly string[], npcId: string, tenants: readonly Tenant[]): Promise<Map<string, string>> {
  const rows = [];
  for (const gameId of gameIds) rows.push(...(await memory.listMemories(gameId, npcId, { tier: 'episodic', limit: 200 })).memories);
  const bare = (text: string) => normalize(text.replace(/@\S+/g, ' '));
  const found = new Map<string, string>();
  for (const t of tenants) {
    const lines = t.setup.map(bare);
    const votes = new Map<string, number>();
    for (const m of rows) if (m.participantId && m.text && lines.some((l) => l.length > 0 && bare(m.text!).includes(l))) votes.set(m.participantId, (votes.get(m.participantId) ?? 0) + 1);
    const best = [...votes].sort((x, y) => y[1] - x[1])[0];
    if (best) found.set(t.alias, best[0]);
  }
  return found;
}

/** The setup conversation of a pair: lines alternating, each same-game probe right after the partner line it names. */
export function setupSteps(a: Tenant, b: Tenant): { alias: string; text: string; probe?: Probe }[] {
  const out: { alias: string; text: string; probe?: Probe }[] = [];
  const index = new Map<string, number>();
  for (const { alias, text } of interleave(a, b)) {
    const i = index.get(alias) ?? 0;
    index.set(alias, i + 1);
    out.push({ alias, text });
    const other = alias === a.alias ? b : a;
    for (const probe of other.probes.filter((p) => p.phase === 'same-game' && p.afterPartnerLine === i)) out.push({ alias: other.alias, text: probe.question, probe });
  }
  return out;
}

/** The setup room's lines as RoomMessages (players mapped to their memory-side ids). */
async function setupTranscript(viewer: Player, gameId: string, participantOf: Map<string, string>, players: Map<string, Player>): Promise<RoomMessage[]> {
  const byName = new Map([...players].map(([alias, p]) => [p.client.displayName, participantOf.get(alias)]));
  const { entries } = await viewer.client.feed(gameId);
  const out: RoomMessage[] = [];
  for (const { entry } of entries) {
    if (entry.kind !== 'say') continue;
    const speaker = entry.speaker.kind === 'npc' ? { npcId: entry.speaker.npcId } : entry.speaker.kind === 'participant' && byName.get(entry.speaker.displayName) ? { participantId: byName.get(entry.speaker.displayName)! } : undefined;
    if (!speaker) continue;
    out.push({ seq: entry.seq, speaker, text: entry.text, targeted: entry.targets.length > 0, ts: Math.floor(Date.now() / 1000) });
  }
  return out;
}

async function eraseParticipant(memoryUrl: string, adminKey: string, participantId: string): Promise<ErasureRecord['receipt']> {
  const response = await fetch(new URL(`/v1/participants/${encodeURIComponent(participantId)}/erasure`, memoryUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}` },
  });
  const body = (await response.json().catch(() => ({}))) as { removed?: Record<string, number>; keysDestroyed?: number; error?: { code: string } };
  if (!response.ok || !body.removed) return { error: `${response.status} ${body.error?.code ?? ''}`.trim() };
  return { removed: body.removed, keysDestroyed: body.keysDestroyed ?? 0 };
}

const SECTIONS: Record<Ablation, string[] | undefined> = { full: undefined, transcript: ['transcript'], episodic: ['episodes'], social: ['social'] };
function tokensOf(sections: Record<string, number>, config: Ablation): number {
  const keep = SECTIONS[config];
  return Object.entries(sections)
    .filter(([k]) => !keep || keep.includes(k))
    .reduce((n, [, v]) => n + v, 0);
}
