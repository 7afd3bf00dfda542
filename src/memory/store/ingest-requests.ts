import type { Sql } from '../db/types.js';
import type { IngestResult } from '../../boundary/events.js';

/** Makes sure the game exists (the parent of every game-bound row). */
export async function ensureGame(tx: Sql, tenantId: string, gameId: string): Promise<void> {
  await tx.query('INSERT INTO memory.games (tenant_id, game_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, gameId]);
}

export async function recordIngestRequest(
  tx: Sql,
  tenantId: string,
  gameId: string,
  key: string,
  hash: string,
  response: IngestResult,
): Promise<void> {
  await tx.query(
    `INSERT INTO memory.ingest_requests (tenant_id, game_id, idempotency_key, request_hash, response)
     VALUES ($1, $2, $3, $4, $5::jsonb)`,
    [tenantId, gameId, key, hash, JSON.stringify(response)],
  );
}
