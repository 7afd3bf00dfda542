/** Column lists and row shapes of the tier tables, shared by every query in store/. */

export const EPISODE_COLUMNS =
  'id, tenant_id, game_id, npc_id, room_id, participant_id, ts, targeted, anonymous, kind, source, importance, key_id, ciphertext, created_at';

export interface EpisodeRow {
  id: string;
  tenant_id: string;
  game_id: string;
  npc_id: string;
  room_id: string;
  participant_id: string | null;
  ts: number;
  targeted: boolean;
  anonymous: boolean;
  kind: 'utterance' | 'working_summary';
  source: string;
  importance: number;
  key_id: string;
  ciphertext: Uint8Array;
  created_at: Date | string;
}

/** Fact tables differ only in their scope columns; absent ones are selected as NULL. */
export function factColumns(gameBound: boolean, participantBound: boolean): string {
  return [
    'id, tenant_id, npc_id',
    gameBound ? 'game_id' : 'NULL::text AS game_id',
    participantBound ? 'participant_id' : 'NULL::text AS participant_id',
    'fact_key, source, confidence, importance, retention, supersedes, superseded_at, invalidated_at',
    'derived_from, lineage, key_id, ciphertext, created_at, updated_at',
  ].join(', ');
}

export interface FactRow {
  id: string;
  tenant_id: string;
  npc_id: string;
  game_id: string | null;
  participant_id: string | null;
  fact_key: string;
  source: string;
  confidence: number;
  importance: number;
  retention: string;
  supersedes: string | null;
  superseded_at: Date | string | null;
  invalidated_at: Date | string | null;
  derived_from: string[];
  lineage: unknown;
  key_id: string;
  ciphertext: Uint8Array;
  created_at: Date | string;
  updated_at: Date | string;
}

export const iso = (v: Date | string): string => (v instanceof Date ? v : new Date(v)).toISOString();
export const isoOrNull = (v: Date | string | null): string | null => (v === null ? null : iso(v));

/**
 * The narrow column list of context retrieval: what scoring, conflict resolution and decryption
 * need, with the creation time as epoch milliseconds (parsing timestamps costs more than it seems
 * when a context reads a few hundred rows).
 */
export function candidateColumns(gameBound: boolean, participantBound: boolean): string {
  return [
    'id, npc_id',
    gameBound ? 'game_id' : 'NULL::text AS game_id',
    participantBound ? 'participant_id' : 'NULL::text AS participant_id',
    'fact_key, source, confidence, importance, retention, key_id, ciphertext',
    '(extract(epoch FROM created_at) * 1000)::float8 AS created_ms',
  ].join(', ');
}

/** A fact as context retrieval reads it (`candidateColumns`): its creation time in epoch ms, its distance to the query. */
export type CandidateRow = Pick<FactRow, 'id' | 'npc_id' | 'game_id' | 'participant_id' | 'fact_key' | 'source' | 'confidence' | 'importance' | 'retention' | 'key_id' | 'ciphertext'> & {
  created_ms: number;
  distance: number;
};
