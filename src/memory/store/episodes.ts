import type { Sql } from '../db/types.js';
import type { Scope } from '../scope.js';
import { EPISODE_COLUMNS, type EpisodeRow } from './rows.js';
import { scopeFilter } from './scope-filter.js';
import { Values } from './values.js';

export interface NewEpisodeRow {
  id: string;
  npcId: string;
  roomId: string;
  participantId: string;
  ts: number;
  targeted: boolean;
  anonymous: boolean;
  keyId: string;
  ciphertext: Uint8Array;
  embedding: string;
  /** The id of the embedder that made `embedding`. */
  embedder: string;
}

/** Appends episodes for one npc in one multi-row statement (the scope's game and tenant). */
export async function insertEpisodes(tx: Sql, tenantId: string, gameId: string, rows: readonly NewEpisodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = new Values([tenantId, gameId]);
  await tx.query(insertEpisodesSql(values, rows), values.params);
}

/** The insert of `insertEpisodes`, its values bound to `values`, whose $1 and $2 are the tenant and the game. */
export function insertEpisodesSql(values: Values, rows: readonly NewEpisodeRow[]): string {
  const rowValues = new Values();
  for (const r of rows) {
    const v = (value: unknown, cast?: string) => values.bind(value, cast);
    rowValues.row([v(r.id), '$1', '$2', v(r.npcId), v(r.roomId), v(r.participantId), v(r.ts), v(r.targeted), v(r.anonymous), v(r.keyId), v(r.ciphertext), v(r.embedding, '::vector'), v(r.embedder)]);
  }
  return `INSERT INTO memory.episodic
       (id, tenant_id, game_id, npc_id, room_id, participant_id, ts, targeted, anonymous, key_id, ciphertext, embedding, embedder)
     ${rowValues.sql}`;
}

export async function listEpisodes(tx: Sql, scope: Scope, limit: number): Promise<EpisodeRow[]> {
  const f = scopeFilter('episodic', scope, 2);
  if (!f) return [];
  const { rows } = await tx.query<EpisodeRow>(
    `SELECT ${EPISODE_COLUMNS} FROM memory.episodic WHERE ${f.sql} ORDER BY ts DESC, id LIMIT $1`,
    [limit, ...f.params],
  );
  return rows;
}

/** Top-k nearest episodes in scope (a statement for `readInScope`), or undefined if the scope sees no episodes. */
export function searchEpisodesStatement(scope: Scope, vector: string, k: number): { text: string; params: unknown[] } | undefined {
  const f = scopeFilter('episodic', scope, 3);
  if (!f) return undefined;
  return {
    text: `SELECT ${EPISODE_COLUMNS}, embedding <=> $1::vector AS distance
     FROM memory.episodic WHERE ${f.sql} ORDER BY distance LIMIT $2`,
    params: [vector, k, ...f.params],
  };
}

export async function getEpisode(tx: Sql, scope: Scope, id: string): Promise<EpisodeRow | undefined> {
  const f = scopeFilter('episodic', scope, 2);
  if (!f) return undefined;
  const { rows } = await tx.query<EpisodeRow>(`SELECT ${EPISODE_COLUMNS} FROM memory.episodic WHERE id = $1 AND ${f.sql}`, [
    id,
    ...f.params,
  ]);
  return rows[0];
}

/** Serialized working memory: an episode with no single speaker (kind 'working_summary'). */
export async function insertWorkingSummary(
  tx: Sql,
  row: { id: string; tenantId: string; gameId: string; npcId: string; roomId: string; ts: number; keyId: string; ciphertext: Uint8Array; embedding: string; embedder: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO memory.episodic (id, tenant_id, game_id, npc_id, room_id, participant_id, ts, kind, source, importance, key_id, ciphertext, embedding, embedder)
     VALUES ($1, $2, $3, $4, $5, NULL, $6, 'working_summary', 'npc_observation', 0.4, $7, $8, $9::vector, $10)`,
    [row.id, row.tenantId, row.gameId, row.npcId, row.roomId, row.ts, row.keyId, row.ciphertext, row.embedding, row.embedder],
  );
}
