/**
 * Working memory of one NPC in one room of one game: the recent transcript, a rolling summary
 * of older turns, and the last message number seen. It lives in `memory.working` (encrypted
 * under the game's key) so the memory service stays stateless, and is serialized into one
 * episodic row and flushed when the NPC moves or the room is suspended.
 *
 * The summary is deterministic and extractive (each older turn shortened to its first words);
 * it keeps who said what in order, not nuance.
 */
import { randomUUID } from 'node:crypto';
import type { ContextTurn, RoomMessage, Speaker } from '../../boundary/context.js';
import { seal } from '../crypto/cipher.js';
import { toVectorLiteral } from '../embeddings/types.js';
import { enqueueConsolidation } from '../jobs/queue.js';
import { MemoryError } from '../errors.js';
import { inScope, type Scope } from '../scope.js';
import type { MemoryService } from '../service.js';

/** What working memory needs of the memory service: the database, the embedder, the keys and unsealing. */
export type WorkingMemoryDeps = Pick<MemoryService, 'db' | 'embedder' | 'keys' | 'keysFor' | 'unseal'>;
import { sealText } from '../crypto/sealed-rows.js';
import { insertWorkingSummary } from '../store/episodes.js';
import { deleteWorking, type WorkingRow } from '../store/working.js';
import { SUMMARIZE_AT } from './scoring.js';
import { countTokens } from './tokens.js';

export interface WorkingMemory {
  lastSeq: number;
  summary: string | null;
  turns: ContextTurn[];
}

const SUMMARY_WORDS = 16;
/** The summary may use at most this share of the transcript's quota; its oldest lines go first. */
const SUMMARY_SHARE = 0.4;

export const speakerLabel = (speaker: Speaker): string =>
  'participantId' in speaker ? speaker.participantId : `npc:${speaker.npcId}`;

const aad = (tenantId: string, gameId: string, roomId: string, npcId: string) => ['working', tenantId, gameId, roomId, npcId].join('\0');

export function openWorking(
  service: WorkingMemoryDeps,
  tenantId: string,
  gameId: string,
  roomId: string,
  npcId: string,
  row: WorkingRow | undefined,
  keys: Map<string, Uint8Array>,
): WorkingMemory {
  const empty: WorkingMemory = { lastSeq: -1, summary: null, turns: [] };
  if (!row) return empty;
  const key = keys.get(row.key_id);
  if (!key) return empty;
  const plain = service.unseal(key, row.ciphertext, aad(tenantId, gameId, roomId, npcId), `working:${roomId}:${npcId}`);
  return plain ? (JSON.parse(plain.toString('utf8')) as WorkingMemory) : empty;
}

export function sealWorking(key: Uint8Array, tenantId: string, gameId: string, roomId: string, npcId: string, working: WorkingMemory): Buffer {
  return seal(key, Buffer.from(JSON.stringify(working), 'utf8'), aad(tenantId, gameId, roomId, npcId));
}

/** JSON framing of one turn in the window: {"seq":…,"speaker":"…","text":"…","targeted":…}, */
const TURN_FRAMING_TOKENS = 14;
const SEPARATOR = ' / ';

/**
 * Adds the messages not seen yet (by sequence number); past 80% of the transcript's quota, the
 * older half of the turns is shortened into the summary, whose oldest lines go first when it
 * outgrows its share. Token counts are computed once per turn and per summary line.
 */
export function updateWorking(working: WorkingMemory, messages: readonly RoomMessage[], quota: number): WorkingMemory & { tokens: number } {
  const fresh = messages
    .filter((m) => m.seq > working.lastSeq)
    .sort((a, b) => a.seq - b.seq)
    .map((m) => ({ seq: m.seq, speaker: speakerLabel(m.speaker), text: m.text, targeted: m.targeted }));
  const turns = [...working.turns, ...fresh];
  const turnCost = (t: ContextTurn) => countTokens(t.speaker) + countTokens(t.text) + TURN_FRAMING_TOKENS;
  const costs = turns.map(turnCost);
  const trimmed = working.summary?.startsWith('… ') ?? false;
  const lines = working.summary ? (trimmed ? working.summary.slice(2) : working.summary).split(SEPARATOR) : [];
  const lineCosts = lines.map((l) => countTokens(l) + 1);
  let dropped = trimmed;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const cap = Math.max(16, Math.floor(quota * SUMMARY_SHARE));
  while (sum(costs) + sum(lineCosts) > SUMMARIZE_AT * quota && turns.length > 2) {
    const n = Math.ceil(turns.length / 2);
    const older = turns.splice(0, n);
    costs.splice(0, n);
    for (const t of older) {
      const line = `${t.speaker}: ${shorten(t.text)}`;
      lines.push(line);
      lineCosts.push(countTokens(line) + 1);
    }
    while (sum(lineCosts) > cap && lines.length > 1) {
      lines.shift();
      lineCosts.shift();
      dropped = true;
    }
  }
  const summary = lines.length > 0 ? `${dropped ? '… ' : ''}${lines.join(SEPARATOR)}` : null;
  return {
    lastSeq: Math.max(working.lastSeq, ...fresh.map((t) => t.seq)),
    summary,
    turns,
    tokens: sum(costs) + sum(lineCosts) + (turns.length > 0 ? 4 : 0),
  };
}

function shorten(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length <= SUMMARY_WORDS ? words.join(' ') : `${words.slice(0, SUMMARY_WORDS).join(' ')}…`;
}

/** The text an episodic row keeps when working memory is flushed. */
export function serializeWorking(working: WorkingMemory): string {
  const turns = working.turns.map((t) => `${t.speaker}: ${t.text}`).join('\n');
  return [working.summary ? `Earlier: ${working.summary}` : '', turns].filter(Boolean).join('\n');
}

/**
 * Serializes the NPC's working memory for a room into one episodic row and drops it (the NPC
 * moved, or the room was suspended), so no stale spatial context crosses a threshold.
 */
export async function flushWorkingMemory(
  service: WorkingMemoryDeps,
  scope: Scope,
  roomId: string,
  reason: 'room_empty' | 'npc_moved',
): Promise<{ flushed: boolean; episodeId: string | null }> {
  const { tenantId, gameId, npcId } = scope;
  if (!gameId || !npcId) throw new MemoryError('GAME_TOKEN_REQUIRED', 'flushing needs a game token and an npc in the path');
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
      ciphertext: sealText(key, 'episodic', tenantId, { id, game_id: gameId, npc_id: npcId, participant_id: null }, text),
      embedding: toVectorLiteral(vector!),
      embedder: service.embedder.id,
    });
    // What the NPC saw here is consolidated like any other episode.
    await enqueueConsolidation(tx, { tenantId, gameId, npcId, reason: reason === 'room_empty' ? 'suspension' : 'npc_moved' });
    return { flushed: true, episodeId: id };
  });
}
