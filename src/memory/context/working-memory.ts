/**
 * Working memory of one NPC in one room of one game: the recent transcript, a rolling summary
 * of older turns, and the last message number seen. It lives in `memory.working` (encrypted
 * under the game's key) so the memory service stays stateless, and is serialized into one
 * episodic row and flushed when the NPC moves or the room is suspended.
 *
 * The summary is deterministic and extractive (each older turn shortened to its first words);
 * it keeps who said what in order, not nuance.
 */
import type { ContextTurn, RoomMessage, Speaker } from '../../boundary/context.js';
import { seal } from '../crypto/cipher.js';
import type { MemoryService } from '../service.js';
import type { WorkingRow } from '../store/working.js';
import { SUMMARIZE_AT } from './scoring.js';
import { countTokens, jsonTokens } from './tokens.js';

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
  service: MemoryService,
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

/** Adds the messages not seen yet (by sequence number), then summarizes past 80% of the quota. */
export function updateWorking(working: WorkingMemory, messages: readonly RoomMessage[], quota: number): WorkingMemory {
  const fresh = messages
    .filter((m) => m.seq > working.lastSeq)
    .sort((a, b) => a.seq - b.seq)
    .map((m) => ({ seq: m.seq, speaker: speakerLabel(m.speaker), text: m.text, targeted: m.targeted }));
  let turns = [...working.turns, ...fresh];
  let summary = working.summary;
  const size = () => jsonTokens(turns) + countTokens(summary ?? '');
  while (size() > SUMMARIZE_AT * quota && turns.length > 2) {
    const older = turns.slice(0, Math.ceil(turns.length / 2));
    turns = turns.slice(older.length);
    const lines = older.map((t) => `${t.speaker}: ${shorten(t.text)}`);
    summary = [summary, ...lines].filter(Boolean).join(' / ');
    const cap = Math.max(16, Math.floor(quota * SUMMARY_SHARE));
    while (countTokens(summary) > cap && summary.includes(' / ')) summary = `… ${summary.slice(summary.indexOf(' / ') + 3)}`;
  }
  return { lastSeq: Math.max(working.lastSeq, ...fresh.map((t) => t.seq)), summary, turns };
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
