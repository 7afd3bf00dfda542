import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type {
  ContextDirective,
  ContextEpisode,
  ContextFact,
  ContextRequest,
  ContextWindow,
  Standing,
} from '../../boundary/context.js';
import { askedTopic, sameTopic } from '../../language/topics.js';
import { embeddingText, meanVector, toVectorLiteral } from '../embeddings/types.js';
import { MemoryError } from '../errors.js';
import { inScope, readInScope, type Scope } from '../scope.js';
import { rowAad, type MemoryService } from '../service.js';
import { EPISODE_COLUMNS, candidateColumns, type CandidateRow, type EpisodeRow } from '../store/rows.js';
import { ensureGame } from '../store/ingest-requests.js';
import { WORKING_SELECT, deleteWorking, getContextLog, putWorkingAndLog, type WorkingRow } from '../store/working.js';
import { insertWorkingSummary } from '../store/episodes.js';
import { seal } from '../crypto/cipher.js';
import { enqueueConsolidation } from '../consolidation/queue.js';
import type { FactTier, RetentionClass, Source } from '../types.js';
import { QUOTAS, answerThreshold, score } from './scoring.js';
import { countTokens, jsonTokens } from './tokens.js';
import { openWorking, sealWorking, serializeWorking, updateWorking } from './working-memory.js';
import { RECONSTRUCTION_DIRECTIVE, CONTROLLER_OPACITY_DIRECTIVE, STATE_DIRECTIVE, reconstructionTopic } from './directives.js';

/** How many candidates each tier contributes before scoring. */
/** How many candidates each tier contributes before scoring. A participant's facts are first cut to
 * their most important ones (cheap), and only those are compared with the query (a vector distance each). */
const LIMITS = { clues: 50, socialPerParticipant: 16, lore: 20, episodes: 20, fragments: 3 } as const;
const DEFAULT_BUDGET = 2000;
/** Below this many free tokens no item fits; packing a section stops. */
const MIN_ITEM_TOKENS = 24;
/** After this many candidates in a row did not fit, a section is considered full. */
const MAX_MISSES = 3;
const STATE_DIRECTIVE_TOKENS = countTokens(STATE_DIRECTIVE) + 8;
/** The token report names its sections: a few tokens each. */
const ENVELOPE_SECTION_TOKENS = 40;

type Candidate = { tier: FactTier; row: CandidateRow; score: number };

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
  constructor(private readonly service: MemoryService) {}

  async assemble(scope: Scope, request: ContextRequest): Promise<{ window: ContextWindow; record: ContextRecord }> {
    const started = performance.now();
    const { tenantId, gameId, npcId } = scope;
    if (!gameId || !npcId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'context needs a game token and an npc in the path', 403);
    const present = request.participants.map((p) => p.participantId);
    const outside = present.find((p) => !scope.participantIds?.includes(p));
    if (outside) {
      throw new MemoryError('SCOPE_MISMATCH', 'a participant listed as present is not covered by the game token; mint a token for the participants present', 403);
    }
    const budget = request.tokenBudget ?? DEFAULT_BUDGET;
    const anonymous = new Set(request.participants.filter((p) => p.anonymous).map((p) => p.participantId));

    // --- retrieve: one round trip for every tier ---
    const recent = request.messages.slice(-3);
    const lastSpoken = [...request.messages].reverse().find((m) => 'participantId' in m.speaker);
    const lastSpeaker = lastSpoken && 'participantId' in lastSpoken.speaker ? lastSpoken.speaker.participantId : undefined;
    const reconstructFor = lastSpoken && lastSpeaker && anonymous.has(lastSpeaker) ? lastSpoken : undefined;
    // Two vectors: the recent exchange (what the room is talking about: the mean of its lines'
    // vectors) and the last line a participant said (what was just asked: a participant's facts
    // are ranked by it, and it is what an anonymous speaker's story is compared with). Each line
    // is embedded as ingest embedded it, so a line already stored costs a cache hit, not the model.
    const lines = recent.map((m) => embeddingText(m.text));
    if (lines.length === 0) lines.push('hello');
    const question = lastSpoken ? embeddingText(lastSpoken.text) : lines.at(-1)!;
    const vectors = await this.service.embedder.embed([question, ...lines]);
    const questionVector = vectors[0]!;
    const queryVector = meanVector(vectors.slice(1));
    const speakerVector = reconstructFor ? questionVector : undefined;
    const q = toVectorLiteral(queryVector!);
    const qa = toVectorLiteral(questionVector!);
    const scoped: Scope = { ...scope, participantIds: present };
    const current = 'superseded_at IS NULL AND invalidated_at IS NULL';
    const statements = [
      { text: 'SELECT version, persona, directives, core FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2 AND invalidated_at IS NULL ORDER BY version DESC LIMIT 1', params: [tenantId, npcId] },
      { text: WORKING_SELECT, params: [tenantId, gameId, request.roomId, npcId] },
      {
        text: `SELECT ${candidateColumns(true, false)}, embedding <=> $1::vector AS distance, embedding <=> $5::vector AS match_distance FROM memory.clues
               WHERE tenant_id = $2 AND game_id = $3 AND npc_id = $4 AND ${current} ORDER BY distance LIMIT ${LIMITS.clues}`,
        params: [q, tenantId, gameId, npcId, qa],
      },
      {
        text: `SELECT ${candidateColumns(false, true)}, embedding <=> $1::vector AS distance, embedding <=> $5::vector AS match_distance FROM memory.social
               WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY participant_id
                                                   ORDER BY fact_key = 'speaker.name' DESC, embedding <=> $5::vector NULLS LAST, importance DESC, created_at DESC) AS rank
                            FROM memory.social WHERE tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[]) AND ${current}) ranked
                            WHERE rank <= ${LIMITS.socialPerParticipant})
                 AND tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[])`,
        params: [q, tenantId, npcId, present, qa],
      },
      {
        text: `SELECT ${candidateColumns(false, false)}, embedding <=> $1::vector AS distance, embedding <=> $4::vector AS match_distance FROM memory.lore
               WHERE tenant_id = $2 AND npc_id = $3 AND ${current} ORDER BY distance LIMIT ${LIMITS.lore}`,
        params: [q, tenantId, npcId, qa],
      },
      {
        text: `SELECT ${EPISODE_COLUMNS}, embedding <=> $1::vector AS distance FROM memory.episodic
               WHERE tenant_id = $2 AND game_id = $3 AND npc_id = $4 ORDER BY distance LIMIT ${LIMITS.episodes}`,
        params: [q, tenantId, gameId, npcId],
      },
      ...(speakerVector
        ? [{
            text: `SELECT id, key_id, embedding <=> $1::vector AS distance FROM memory.fragments
                   WHERE tenant_id = $2 AND npc_id = $3 AND ${current} ORDER BY distance LIMIT ${LIMITS.fragments}`,
            params: [toVectorLiteral(speakerVector), tenantId, npcId],
          }]
        : []),
    ];
    const [proceduralRows, workingRows, clueRows, socialRows, loreRows, episodeRows, fragmentRows = []] = await readInScope(
      this.service.db,
      scoped,
      statements,
    );
    const retrieved = performance.now();

    // --- score within each tier; resolve same-key conflicts and precedence in code ---
    const now = Date.now();
    const candidates = (tier: FactTier, rows: Record<string, unknown>[]): Candidate[] =>
      rows.map((r) => {
        const row = r as unknown as CandidateRow;
        return {
          tier,
          row,
          score: score({
            distance: distanceOf(row.distance),
            importance: row.importance,
            source: row.source as Source,
            confidence: row.confidence,
            retention: row.retention as RetentionClass,
            ageSeconds: (now - row.created_ms) / 1000,
          }),
        };
      });
    const procedural = proceduralRows![0] as { version: number; persona: string; directives: string[]; core: Record<string, string> } | undefined;
    const shadowed: ContextRecord['shadowed'] = [];
    const clues = newestPerKey(candidates('clue', clueRows!), shadowed);
    const social = newestPerKey(candidates('social', socialRows!), shadowed);
    const lore = newestPerKey(candidates('lore', loreRows!), shadowed);
    // Precedence: procedural core and this game's clues outrank social memory and lore.
    const coreKeys = new Set(Object.keys(procedural?.core ?? {}).map(normalizeKey));
    const clueKeys = new Map(clues.map((c) => [normalizeKey(c.row.fact_key), c.row.id]));
    const outranked = (c: Candidate) => {
      const key = normalizeKey(c.row.fact_key);
      if (coreKeys.has(key)) return shadowed.push({ id: c.row.id, by: 'procedural', reason: `procedural core defines "${key}"` }) > 0;
      const clue = clueKeys.get(key);
      if (clue) return shadowed.push({ id: c.row.id, by: clue, reason: 'a game clue with the same key outranks it' }) > 0;
      return false;
    };
    const socialKept = social.filter((c) => !outranked(c));
    const loreKept = lore.filter((c) => !outranked(c));
    const byScore = (a: { score: number }, b: { score: number }) => b.score - a.score;
    const episodes = (episodeRows as unknown as (EpisodeRow & { distance: number })[]).map((row) => ({
      row,
      score: score({
        distance: distanceOf(row.distance),
        importance: row.importance,
        source: row.source as Source,
        confidence: 1,
        retention: 'session_only',
        ageSeconds: 0,
      }),
    }));
    // A row with no vector yet (before `reembed`) is no match at all, never an exact one.
    const fragment = (fragmentRows as { id: string; distance: number | null }[]).filter((f) => f.distance !== null && 1 - Number(f.distance) >= this.service.embedder.similarityThreshold);
    const scored = performance.now();

    // --- pack: pinned first (never dropped), then sections in precedence order within quotas ---
    const allRows = [...clues, ...socialKept, ...loreKept].map((c) => c.row as { key_id: string }).concat(
      episodes.map((e) => e.row),
      (workingRows![0] as WorkingRow | undefined) ? [workingRows![0] as unknown as WorkingRow] : [],
    );
    const keys = await this.service.keysForRows(scoped, allRows);
    const stateFacts = request.state.facts;
    const stateKeys = new Map(Object.entries(stateFacts).map(([k, v]) => [normalizeKey(k), v]));
    let contradiction = false;
    const open = (c: Candidate): ContextFact | undefined => {
      const key = keys.get(c.row.key_id);
      if (!key) return undefined;
      const aad = rowAad(c.tier, tenantId, c.row.game_id ?? undefined, c.row.npc_id, c.row.participant_id ?? undefined, c.row.id);
      const plain = this.service.unseal(key, c.row.ciphertext, aad, c.row.id);
      if (!plain) return undefined;
      const body = JSON.parse(plain.toString('utf8')) as { value: string; summary: string };
      const fact: ContextFact = {
        id: c.row.id,
        key: c.row.fact_key,
        value: body.value,
        summary: body.summary,
        standing: standingOf(c.row.source as Source),
        confidence: c.row.confidence,
        score: round(c.score),
      };
      const matchDistance = (c.row as { match_distance?: number | null }).match_distance;
      if (matchDistance !== null && matchDistance !== undefined) fact.match = round(1 - Number(matchDistance));
      const stateKey = normalizeKey(c.row.fact_key);
      if (stateKeys.has(stateKey) && String(stateKeys.get(stateKey)) !== body.value) {
        fact.standing = 'memory_contradicted_by_state';
        fact.stateSays = stateKeys.get(stateKey)!;
        contradiction = true;
      }
      return fact;
    };

    const directives: ContextDirective[] = [{ kind: 'controller_opacity', text: CONTROLLER_OPACITY_DIRECTIVE }];
    // (STATE_DIRECTIVE joins these if a memory contradicts the state; its tokens are reserved.)
    let reconstruction: ContextRecord['reconstruction'] = null;
    if (reconstructFor && fragment.length > 0) {
      const topic = reconstructionTopic(reconstructFor.text);
      directives.push({ kind: 'uncertain_reconstruction', text: RECONSTRUCTION_DIRECTIVE(topic) });
      reconstruction = { fragmentIds: fragment.map((f) => f.id), similarity: round(1 - Number(fragment[0]!.distance)) };
    }

    const pinned: ContextWindow['pinned'] = {
      procedural: procedural ? { version: procedural.version, persona: procedural.persona, directives: procedural.directives } : null,
      state: request.state,
    };
    const topic = askedTopic(lastSpoken?.text) ?? (await this.service.topics.classify([questionVector!]))[0];
    const retrieval = { embedder: this.service.embedder.id, answerThreshold: answerThreshold(this.service.embedder.id), ...(topic ? { topic } : {}) };
    // The retrieval note travels with the pinned part and is counted with it.
    const pinnedTokens = jsonTokens(pinned) + jsonTokens(directives) + jsonTokens(retrieval) + STATE_DIRECTIVE_TOKENS;
    // The window's own fields (ids, the token report, timings) are part of what the model reads.
    const envelopeTokens = jsonTokens({ contextId: randomUUID(), npcId, gameId, roomId: request.roomId, tokens: { budget, total: budget, sections: {} }, timingsMs: { retrieve: 0, build: 0 } }) + ENVELOPE_SECTION_TOKENS;
    const rest = Math.max(0, budget - pinnedTokens - envelopeTokens);
    const sectionTokens: Record<string, number> = { pinned: pinnedTokens, envelope: envelopeTokens };

    // Working memory: merge the new messages, summarized past 80% of the transcript's share.
    const working = updateWorking(
      openWorking(this.service, tenantId, gameId, request.roomId, npcId, workingRows![0] as WorkingRow | undefined, keys),
      request.messages,
      Math.floor(rest * QUOTAS.transcript),
    );
    sectionTokens.transcript = working.tokens;

    // The other sections share what the transcript left, by their quotas; unused room flows on.
    const remaining = Math.max(0, rest - sectionTokens.transcript);
    const shares = QUOTAS.clues + QUOTAS.social + QUOTAS.episodes + QUOTAS.lore;
    const chosen: ContextRecord['chosen'] = { clues: [], social: [], lore: [], episodes: [] };
    let overQuota = 0;
    let carry = 0;
    const take = <T>(section: 'clues' | 'social' | 'episodes' | 'lore', count: number, render: (i: number) => T | undefined, cost: (t: T) => number): T[] => {
      const quota = Math.floor((remaining * QUOTAS[section]) / shares) + carry;
      let room = quota;
      let misses = 0;
      const out: T[] = [];
      for (let i = 0; i < count; i++) {
        const rendered = render(i);
        if (rendered === undefined) continue;
        const tokens = cost(rendered);
        if (tokens > room) {
          overQuota += 1;
          // Full, or nearly: stop decrypting and counting what will not fit.
          if (room < MIN_ITEM_TOKENS || ++misses >= MAX_MISSES) break;
          continue;
        }
        room -= tokens;
        out.push(rendered);
      }
      sectionTokens[section] = quota - room;
      carry = room;
      return out;
    };

    const clueFacts = take('clues', clues.sort(byScore).length, (i) => open(clues[i]!), jsonTokens);
    chosen.clues = clueFacts.map((f) => ({ id: f.id, score: f.score }));

    // What was just asked is answered from the asker's facts of that topic: they go first, the
    // nearest to the question first; then every other fact by its score.
    const onTopic = (c: Candidate) => topic !== undefined && c.row.participant_id === lastSpeaker && sameTopic(c.row.fact_key.split('.')[1], topic);
    const matchOf = (c: Candidate) => 1 - (distanceOf((c.row as { match_distance?: number | null }).match_distance ?? null) ?? 1);
    const socialSorted = socialKept.sort((a, b) => Number(onTopic(b)) - Number(onTopic(a)) || (onTopic(a) ? matchOf(b) - matchOf(a) : 0) || byScore(a, b));
    const socialFacts = take('social', socialSorted.length, (i) => {
      const fact = open(socialSorted[i]!);
      return fact && { participantId: socialSorted[i]!.row.participant_id!, fact };
    }, (f) => jsonTokens(f.fact));
    const participants: ContextWindow['participants'] = {};
    for (const p of request.participants) participants[p.participantId] = { anonymous: p.anonymous, facts: [] };
    for (const { participantId, fact } of socialFacts) {
      participants[participantId]!.facts.push(fact);
      chosen.social!.push({ id: fact.id, score: fact.score, participantId });
    }

    const episodesSorted = episodes.sort(byScore);
    const episodeItems = take('episodes', episodesSorted.length, (i) => {
      const { row, score: s } = episodesSorted[i]!;
      const key = keys.get(row.key_id);
      if (!key) return undefined;
      const aad = rowAad('episodic', tenantId, row.game_id, row.npc_id, row.participant_id ?? undefined, row.id);
      const text = this.service.unseal(key, row.ciphertext, aad, row.id);
      if (!text) return undefined;
      const episode: ContextEpisode = { id: row.id, speaker: row.participant_id ?? 'room', text: text.toString('utf8'), ts: Number(row.ts), score: round(s) };
      return episode;
    }, jsonTokens);
    chosen.episodes = episodeItems.map((e) => ({ id: e.id, score: e.score }));

    const loreSorted = loreKept.sort(byScore);
    const loreFacts = take('lore', loreSorted.length, (i) => open(loreSorted[i]!), jsonTokens);
    chosen.lore = loreFacts.map((f) => ({ id: f.id, score: f.score }));
    if (contradiction) directives.push({ kind: 'state_outranks_memory', text: STATE_DIRECTIVE });
    const packed = performance.now();

    const contextId = randomUUID();
    const window: ContextWindow = {
      contextId,
      npcId,
      gameId,
      roomId: request.roomId,
      clues: clueFacts,
      participants,
      lore: loreFacts,
      episodes: episodeItems,
      transcript: { summary: working.summary, turns: working.turns },
      directives,
      pinned,
      tokens: { budget, total: 0, sections: sectionTokens },
      retrieval,
      timingsMs: { retrieve: 0, build: 0 },
    };
    window.tokens.total = Object.values(sectionTokens).reduce((a, b) => a + b, 0);

    // --- persist working memory and the log record, in one scoped transaction ---
    const record: ContextRecord = {
      contextId,
      npcId,
      roomId: request.roomId,
      stateVersion: request.state.version,
      chosen,
      shadowed,
      overQuota,
      reconstruction,
      timingsMs: { retrieve: 0, score: 0, pack: 0, persist: 0, total: 0 },
      tokens: window.tokens,
    };
    const firstInRoom = workingRows![0] === undefined;
    // Working memory and the log are rebuilt from the engine's stream if lost: their commit need
    // not wait for the WAL flush (a crash can lose at most the last few milliseconds of them).
    await inScope(
      this.service.db,
      scoped,
      async (tx) => {
        if (firstInRoom) await ensureGame(tx, tenantId, gameId);
        const { keyId, key } = await this.service.keys.forWrite(tx, tenantId, 'game', gameId);
        const ciphertext = sealWorking(key, tenantId, gameId, request.roomId, npcId, { lastSeq: working.lastSeq, summary: working.summary, turns: working.turns });
        // Timed up to the write that carries the record, which cannot contain its own duration.
        const persisted = performance.now();
        record.timingsMs = {
          retrieve: ms(retrieved - started),
          score: ms(scored - retrieved),
          pack: ms(packed - scored),
          persist: ms(persisted - packed),
          total: ms(persisted - started),
        };
        window.timingsMs = { retrieve: record.timingsMs.retrieve, build: ms(persisted - retrieved) };
        await putWorkingAndLog(
          tx,
          { tenantId, gameId, roomId: request.roomId, npcId, lastSeq: working.lastSeq, stateVersion: request.state.version, keyId, ciphertext },
          { id: contextId, record },
        );
      },
      { asyncCommit: true },
    );
    return { window, record };
  }

  /** The log record of one assembly ("why did she say that"), in the game's scope. */
  async explain(scope: Scope, contextId: string): Promise<ContextRecord> {
    const { gameId } = scope;
    if (!gameId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'explanations are read with the game\'s token', 403);
    const record = await inScope(this.service.db, scope, (tx) => getContextLog(tx, scope.tenantId, gameId, contextId));
    if (!record) throw new MemoryError('NOT_FOUND', 'No context with this id is visible in your scope.', 404);
    return record as ContextRecord;
  }
}

/** Within one tier (and one participant), the newest fact of a key wins; the rest are shadowed. */
function newestPerKey(candidates: Candidate[], shadowed: ContextRecord['shadowed']): Candidate[] {
  const newest = new Map<string, Candidate>();
  for (const c of candidates) {
    const k = `${c.row.participant_id ?? ''}\0${normalizeKey(c.row.fact_key)}`;
    const seen = newest.get(k);
    if (!seen) newest.set(k, c);
    else {
      const [win, lose] = c.row.created_ms > seen.row.created_ms ? [c, seen] : [seen, c];
      newest.set(k, win);
      shadowed.push({ id: lose.row.id, by: win.row.id, reason: 'a newer fact with the same key' });
    }
  }
  return [...newest.values()];
}

export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

function standingOf(source: Source): Standing {
  if (source === 'verified_game_event') return 'known';
  if (source === 'player_statement') return 'claim';
  return 'observed';
}

/** pgvector's distance as a number; NULL (a row without a vector) stays null, which scores as no relevance. */
const distanceOf = (d: unknown): number | null => (d === null || d === undefined ? null : Number(d));
const round = (x: number) => Math.round(x * 1000) / 1000;
const ms = (x: number) => Math.round(x * 100) / 100;


/**
 * Serializes the NPC's working memory for a room into one episodic row and drops it (the NPC
 * moved, or the room was suspended), so no stale spatial context crosses a threshold.
 */
export async function flushWorkingMemory(
  service: MemoryService,
  scope: Scope,
  roomId: string,
  reason: 'room_empty' | 'npc_moved',
): Promise<{ flushed: boolean; episodeId: string | null }> {
  const { tenantId, gameId, npcId } = scope;
  if (!gameId || !npcId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'flushing needs a game token and an npc in the path', 403);
  return inScope(service.db, scope, async (tx) => {
    const row = await deleteWorking(tx, tenantId, gameId, roomId, npcId);
    if (!row) return { flushed: false, episodeId: null };
    const working = openWorking(service, tenantId, gameId, roomId, npcId, row, await service.keysFor(tx, tenantId, [row]));
    const text = serializeWorking(working);
    if (!text) return { flushed: true, episodeId: null };
    const [vector] = await service.embedder.embed([text]);
    const { keyId, key } = await service.keys.forWrite(tx, tenantId, 'game', gameId);
    const id = randomUUID();
    await insertWorkingSummary(tx, {
      id,
      tenantId,
      gameId,
      npcId,
      roomId,
      ts: Math.floor(Date.now() / 1000),
      keyId,
      ciphertext: seal(key, Buffer.from(text, 'utf8'), rowAad('episodic', tenantId, gameId, npcId, undefined, id)),
      embedding: toVectorLiteral(vector!),
      embedder: service.embedder.id,
    });
    // What the NPC saw here is consolidated like any other episode.
    await enqueueConsolidation(tx, { tenantId, gameId, npcId, reason: reason === 'room_empty' ? 'suspension' : 'npc_moved' });
    return { flushed: true, episodeId: id };
  });
}
