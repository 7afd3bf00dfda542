import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { OPEN_TOPIC, type ContextDirective, type ContextEpisode, type ContextFact, type ContextRequest, type ContextWindow, type RoomMessage } from '../../boundary/context.js';
import { askedKind, askedTopic, sameTopic, withoutSetApart } from '../../language/topics.js';
import { tokens } from '../../language/index.js';
import { kindsOf, nounSenses } from '../../language/senses.js';
import { embeddingText, meanVector, toVectorLiteral } from '../embeddings/types.js';
import { MemoryError } from '../errors.js';
import { inScope, readInScope, type Scope } from '../scope.js';
import type { MemoryService } from '../service.js';

/** What a context assembly needs of the memory service: no more than these. */
export type AssemblyDeps = Pick<MemoryService, 'db' | 'embedder' | 'topics' | 'keys' | 'keysFor' | 'keysForRows' | 'opener' | 'unseal'>;
import type { RowOpener } from '../crypto/sealed-rows.js';
import { contextRows, contextStatements } from '../store/context.js';
import { MEANING_ALONE, chooseTopic } from '../embeddings/topics.js';
import { ensureGame } from '../store/ingest-requests.js';
import { getContextLog, putWorkingAndLog } from '../store/working.js';
import type { Source } from '../types.js';
import { answerThreshold } from './scoring.js';
import { jsonTokens } from './tokens.js';
import { Packer } from './pack.js';
import { normalizeKey, resolve, round, similarityOf, standingOf, type Candidate, type Resolved, type ScoredEpisode } from './resolve.js';
import { openWorking, sealWorking, updateWorking, type WorkingMemory } from './working-memory.js';
import { RECONSTRUCTION_DIRECTIVE, CONTROLLER_OPACITY_DIRECTIVE, STATE_DIRECTIVE, reconstructionTopic } from './directives.js';

/**
 * Context assembly, as the README's "How a turn works" tells it: read every tier in one round
 * trip (store/context.ts), resolve (resolve.ts: scores, newest per key, precedence), pack within
 * the token budget (pack.ts), persist working memory and the log record.
 */
const DEFAULT_BUDGET = 2000;

/** The record kept for every assembly: ids, scores, timings and token counts; never memory text. */
export interface ContextRecord {
  contextId: string;
  npcId: string;
  roomId: string;
  stateVersion: number;
  chosen: Record<string, { id: string; score: number; participantId?: string }[]>;
  shadowed: { id: string; by: string; reason: string }[];
  overQuota: number;
  reconstruction: { fragmentIds: string[]; similarity: number } | null;
  timingsMs: { retrieve: number; score: number; pack: number; persist: number; total: number };
  tokens: ContextWindow['tokens'];
}

/**
 * Builds the context window for one NPC turn (DESIGN section 4): deterministic filters in SQL
 * (scope, validity, expiry), scoring within each tier, precedence and conflict resolution in
 * code (state > procedural > clues > social > episodic), token budgeting, and a log record.
 */
export class ContextAssembler {
  constructor(private readonly service: AssemblyDeps) {}

  async assemble(scope: Scope, request: ContextRequest): Promise<{ window: ContextWindow; record: ContextRecord }> {
    const started = performance.now();
    const { tenantId, gameId, npcId } = scope;
    if (!gameId || !npcId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'context needs a game token and an npc in the path');
    const present = request.participants.map((p) => p.participantId);
    if (present.some((p) => !scope.participantIds?.includes(p))) {
      throw new MemoryError('SCOPE_MISMATCH', 'a participant listed as present is not covered by the game token; mint a token for the participants present');
    }
    const budget = request.tokenBudget ?? DEFAULT_BUDGET;
    const scoped: Scope = { ...scope, participantIds: present };
    const turn = lastTurn(request);

    // --- retrieve: one round trip for every tier ---
    const vectors = await this.#vectors(request, turn);
    const rows = contextRows(await readInScope(this.service.db, scoped, contextStatements({ tenantId, gameId, npcId, roomId: request.roomId, present, ...vectors.literals })));
    const retrieved = performance.now();

    // --- score within each tier; resolve same-key conflicts and precedence in code ---
    const resolved = resolve(rows, rows.procedural?.core, Date.now());
    // A row with no vector yet (before `reembed`) is no match at all, never an exact one.
    const fragments = rows.fragments.filter((f) => f.distance !== null && similarityOf(f.distance) >= this.service.embedder.similarityThreshold);
    const scored = performance.now();

    // --- pack: pinned first (never dropped), then sections in precedence order within quotas ---
    const keys = await this.service.keysForRows(scoped, [...resolved.clues, ...resolved.social, ...resolved.lore].map((c) => c.row as { key_id: string }).concat(resolved.episodes.map((e) => e.row), rows.working ? [rows.working] : []));
    const opener = new Opener(this.service.opener(tenantId, keys), request.state.facts);
    const directives: ContextDirective[] = [{ kind: 'controller_opacity', text: CONTROLLER_OPACITY_DIRECTIVE }];
    let reconstruction: ContextRecord['reconstruction'] = null;
    if (turn.reconstructFor && fragments.length > 0) {
      directives.push({ kind: 'uncertain_reconstruction', text: RECONSTRUCTION_DIRECTIVE(reconstructionTopic(turn.reconstructFor.text)) });
      reconstruction = { fragmentIds: fragments.map((f) => f.id), similarity: round(similarityOf(fragments[0]!.distance)) };
    }
    const procedural = rows.procedural;
    const pinned: ContextWindow['pinned'] = {
      procedural: procedural ? { version: procedural.version, persona: procedural.persona, directives: procedural.directives } : null,
      state: request.state,
    };
    // What was asked about: its words, unless its meaning is confidently another topic; its
    // meaning alone when half the vote or more reads it (MEANING_ALONE; a weaker reading is no
    // topic: the asker's facts are then all candidates); a question about something no slot
    // holds is about the facts kept under the open key.
    const reading = (await this.service.topics.classify([vectors.question], 'question'))[0];
    const chosen = chooseTopic(askedTopic(turn.spoken?.text), reading, sameTopic);
    const asked = chosen?.from === 'meaning' && (reading?.confidence ?? 0) < MEANING_ALONE ? undefined : chosen;
    const topic = asked && (asked.topic === 'other' ? OPEN_TOPIC : asked.topic);
    const kind = await specificKind(askedKind(turn.spoken?.text));
    const retrieval = { embedder: this.service.embedder.id, answerThreshold: answerThreshold(this.service.embedder.id), ...(asked ? { topic, topicFrom: asked.from } : {}), ...(kind ? { asksFor: kind } : {}) };
    const packer = new Packer(budget, { pinned, directives, retrieval }, { npcId, gameId, roomId: request.roomId });
    // Working memory: merge the new messages, summarized past 80% of the transcript's share.
    const working = updateWorking(openWorking(this.service, tenantId, gameId, request.roomId, npcId, rows.working, keys), request.messages, packer.transcriptQuota);
    packer.transcript(working.tokens);
    const sections = packSections(packer, resolved, opener, request, { speaker: turn.speaker, topic });
    // A question for a kind of thing ("what language do I speak?"): which of the asker's facts name one.
    if (kind && turn.speaker) await nameKinds(sections.participants[turn.speaker]?.facts ?? [], kind);
    if (opener.contradiction) directives.push({ kind: 'state_outranks_memory', text: STATE_DIRECTIVE });
    const packed = performance.now();

    const contextId = randomUUID();
    const window: ContextWindow = {
      contextId, npcId, gameId, roomId: request.roomId,
      clues: sections.clues, participants: sections.participants, lore: sections.lore, episodes: sections.episodes,
      transcript: { summary: working.summary, turns: working.turns },
      directives, pinned, tokens: packer.report(budget), retrieval,
      timingsMs: { retrieve: 0, build: 0 },
    };
    const record: ContextRecord = {
      contextId, npcId, roomId: request.roomId, stateVersion: request.state.version,
      chosen: sections.chosen, shadowed: resolved.shadowed, overQuota: packer.overQuota, reconstruction,
      timingsMs: { retrieve: 0, score: 0, pack: 0, persist: 0, total: 0 },
      tokens: window.tokens,
    };
    // --- persist working memory and the log record, in one scoped transaction ---
    await this.#persist(scoped, { tenantId, gameId, npcId }, request, working, rows.working === undefined, record, (persisted) => {
      record.timingsMs = { retrieve: ms(retrieved - started), score: ms(scored - retrieved), pack: ms(packed - scored), persist: ms(persisted - packed), total: ms(persisted - started) };
      window.timingsMs = { retrieve: record.timingsMs.retrieve, build: ms(persisted - retrieved) };
    });
    return { window, record };
  }

  /**
   * Two vectors: the recent exchange (what the room is talking about: the mean of its lines'
   * vectors) and the last line a participant said (what was just asked: a participant's facts
   * are ranked by it, and it is what an anonymous speaker's story is compared with). Each line
   * is embedded as ingest embedded it, so a line already stored costs a cache hit, not the model.
   */
  async #vectors(request: ContextRequest, turn: LastTurn) {
    const lines = request.messages.slice(-3).map((m) => embeddingText(m.text));
    if (lines.length === 0) lines.push('hello');
    // (What a question sets apart is not what it asks about: "what keeps me busy outside of my job?".)
    const vectors = await this.service.embedder.embed([turn.spoken ? withoutSetApart(embeddingText(turn.spoken.text)) : lines.at(-1)!, ...lines]);
    const question = vectors[0]!;
    const query = meanVector(vectors.slice(1))!;
    return { question, literals: { query: toVectorLiteral(query), question: toVectorLiteral(question), ...(turn.reconstructFor ? { speaker: toVectorLiteral(question) } : {}) } };
  }

  /**
   * Working memory and the log are rebuilt from the engine's stream if lost: their commit need
   * not wait for the WAL flush (a crash can lose at most the last few milliseconds of them).
   */
  async #persist(
    scope: Scope,
    { tenantId, gameId, npcId }: { tenantId: string; gameId: string; npcId: string },
    request: ContextRequest,
    working: WorkingMemory,
    firstInRoom: boolean,
    record: ContextRecord,
    timed: (persisted: number) => void,
  ): Promise<void> {
    await inScope(
      this.service.db,
      scope,
      async (tx) => {
        if (firstInRoom) await ensureGame(tx, tenantId, gameId);
        const { keyId, key } = await this.service.keys.forWrite(tx, tenantId, 'game', gameId);
        const ciphertext = sealWorking(key, tenantId, gameId, request.roomId, npcId, { lastSeq: working.lastSeq, summary: working.summary, turns: working.turns });
        // Timed up to the write that carries the record, which cannot contain its own duration.
        timed(performance.now());
        await putWorkingAndLog(
          tx,
          { tenantId, gameId, roomId: request.roomId, npcId, lastSeq: working.lastSeq, stateVersion: request.state.version, keyId, ciphertext },
          { id: record.contextId, record },
        );
      },
      { asyncCommit: true },
    );
  }

  /** The log record of one assembly ("why did she say that"), in the game's scope. */
  async explain(scope: Scope, contextId: string): Promise<ContextRecord> {
    const { gameId } = scope;
    if (!gameId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'explanations are read with the game\'s token');
    const record = await inScope(this.service.db, scope, (tx) => getContextLog(tx, scope.tenantId, gameId, contextId));
    if (!record) throw new MemoryError('NOT_FOUND', 'No context with this id is visible in your scope.');
    return record as ContextRecord;
  }
}


interface LastTurn {
  /** The last line a participant said, and who said it. */
  spoken: RoomMessage | undefined;
  speaker: string | undefined;
  /** That line again when its speaker is anonymous: their story is compared with anonymous fragments. */
  reconstructFor: RoomMessage | undefined;
}

function lastTurn(request: ContextRequest): LastTurn {
  const anonymous = new Set(request.participants.filter((p) => p.anonymous).map((p) => p.participantId));
  const spoken = [...request.messages].reverse().find((m) => 'participantId' in m.speaker);
  const speaker = spoken && 'participantId' in spoken.speaker ? spoken.speaker.participantId : undefined;
  return { spoken, speaker, reconstructFor: spoken && speaker && anonymous.has(speaker) ? spoken : undefined };
}

/**
 * The facts and episodes being packed, opened as they are packed; marks a fact the game state
 * contradicts (the state outranks memory) and remembers that one was.
 */
class Opener {
  contradiction = false;
  readonly #state: Map<string, unknown>;

  constructor(
    private readonly rows: RowOpener,
    stateFacts: Record<string, unknown>,
  ) {
    this.#state = new Map(Object.entries(stateFacts).map(([k, v]) => [normalizeKey(k), v]));
  }

  fact(c: Candidate): ContextFact | undefined {
    const body = this.rows.fact(c.tier, c.row);
    if (!body) return undefined;
    const fact: ContextFact = {
      id: c.row.id,
      key: c.row.fact_key,
      value: body.value,
      summary: body.summary,
      standing: standingOf(c.row.source as Source),
      confidence: c.row.confidence,
      score: round(c.score),
    };
    if (c.row.match_distance !== null && c.row.match_distance !== undefined) fact.match = round(similarityOf(c.row.match_distance));
    const stateKey = normalizeKey(c.row.fact_key);
    if (this.#state.has(stateKey) && String(this.#state.get(stateKey)) !== body.value) {
      fact.standing = 'memory_contradicted_by_state';
      fact.stateSays = this.#state.get(stateKey) as ContextFact['stateSays'];
      this.contradiction = true;
    }
    return fact;
  }

  episode({ row, score }: ScoredEpisode): ContextEpisode | undefined {
    const text = this.rows.text('episodic', row);
    if (text === undefined) return undefined;
    return { id: row.id, speaker: row.participant_id ?? 'room', text, ts: Number(row.ts), score: round(score) };
  }
}

/** The sections after the transcript, in precedence order: clues, social facts, episodes, lore. */
function packSections(packer: Packer, resolved: Resolved, opener: Opener, request: ContextRequest, asked: { speaker: string | undefined; topic: string | undefined }) {
  const byScore = (a: { score: number }, b: { score: number }) => b.score - a.score;
  const chosen: ContextRecord['chosen'] = { clues: [], social: [], lore: [], episodes: [] };
  // A section of one tier's facts for everyone present (clues, lore): by score.
  const plain = (section: 'clues' | 'lore') => {
    const candidates = resolved[section].sort(byScore);
    const facts = packer.take(section, candidates.length, (i) => opener.fact(candidates[i]!));
    chosen[section] = facts.map((f) => ({ id: f.id, score: f.score }));
    return facts;
  };
  const clues = plain('clues');

  // What was just asked is answered from the asker's facts of that topic: they go first, the
  // nearest to the question first; then every other fact by its score.
  const { speaker, topic } = asked;
  const onTopic = (c: Candidate) => topic !== undefined && c.row.participant_id === speaker && sameTopic(c.row.fact_key.split('.')[1], topic);
  const matchOf = (c: Candidate) => similarityOf(c.row.match_distance ?? null);
  const social = resolved.social.sort((a, b) => Number(onTopic(b)) - Number(onTopic(a)) || (onTopic(a) ? matchOf(b) - matchOf(a) : 0) || byScore(a, b));
  const socialFacts = packer.take('social', social.length, (i) => {
    const fact = opener.fact(social[i]!);
    return fact && { participantId: social[i]!.row.participant_id!, fact };
  }, (f) => jsonTokens(f.fact));
  const participants: ContextWindow['participants'] = {};
  for (const p of request.participants) participants[p.participantId] = { anonymous: p.anonymous, facts: [] };
  for (const { participantId, fact } of socialFacts) {
    participants[participantId]!.facts.push(fact);
    chosen.social!.push({ id: fact.id, score: fact.score, participantId });
  }

  const episodes = resolved.episodes.sort(byScore);
  const episodeItems = packer.take('episodes', episodes.length, (i) => opener.episode(episodes[i]!));
  chosen.episodes = episodeItems.map((e) => ({ id: e.id, score: e.score }));

  const lore = plain('lore');
  return { clues, participants, episodes: episodeItems, lore, chosen };
}

const ms = (x: number) => Math.round(x * 100) / 100;

/** Marks each fact that names a thing of the kind asked for with the word that does ("swahili": a language). */
async function nameKinds(facts: ContextFact[], kind: string): Promise<void> {
  await Promise.all(
    facts.map(async (fact) => {
      // (An adjective too: "doing korean now" names a language.)
      const nouns = tokens(fact.summary).filter((t) => t.pos === 'NOUN' || t.pos === 'PROPN' || t.pos === 'ADJ');
      const kinds = await Promise.all(nouns.map((t) => kindsOf(t.lemma.toLowerCase())));
      const at = kinds.findIndex((k) => k.has(kind));
      if (at >= 0) fact.names = nouns[at]!.text;
    }),
  );
}

/**
 * A kind asked for that tells one thing from another: not, in any sense, one of WordNet's top
 * kinds (noun.Tops: an act, an animal, a person, a food), which too many things are.
 */
async function specificKind(kind: string | undefined): Promise<string | undefined> {
  if (!kind) return undefined;
  const sense = (await nounSenses([kind])).get(kind);
  return sense && !sense.kinds.includes('noun.Tops') ? kind : undefined;
}
