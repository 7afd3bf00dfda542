import type { Sql } from '../db/types.js';
import type { IngestResult } from '../../boundary/events.js';
import { enqueueConsolidationsSql } from '../jobs/queue.js';
import { insertEpisodesSql, type NewEpisodeRow } from './episodes.js';
import { Values } from './values.js';

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
  const values = new Values([tenantId, gameId]);
  await tx.query(recordIngestRequestSql(values, key, hash, response), values.params);
}

/** The insert of `recordIngestRequest`, its values bound to `values`, whose $1 and $2 are the tenant and the game. */
export function recordIngestRequestSql(values: Values, key: string, hash: string, response: IngestResult): string {
  return `INSERT INTO memory.ingest_requests (tenant_id, game_id, idempotency_key, request_hash, response)
     VALUES ($1, $2, ${values.bind(key)}, ${values.bind(hash)}, ${values.bind(JSON.stringify(response), '::jsonb')})`;
}

/**
 * The writes of an accepted ingest batch in one statement, so one round trip: an npc's episodes,
 * a consolidation job for each npc of the batch (a job exists iff the episodes do), and the
 * record that answers a retry of the batch as its replay. The data-modifying CTEs run once and
 * to completion whether or not anything reads them, in the transaction the caller holds.
 */
export async function appendIngest(
  tx: Sql,
  tenantId: string,
  gameId: string,
  episodes: readonly NewEpisodeRow[],
  jobs: { npcIds: readonly string[]; windowMs: number },
  record: { key: string; hash: string; response: IngestResult },
): Promise<void> {
  const values = new Values([tenantId, gameId]);
  const parts = [
    ...(episodes.length > 0 ? [`episodes AS (${insertEpisodesSql(values, episodes)} RETURNING 1)`] : []),
    ...(jobs.npcIds.length > 0 ? [`jobs AS (${enqueueConsolidationsSql(values, jobs.npcIds, 'ingest', jobs.windowMs)} RETURNING 1)`] : []),
  ];
  const record_ = recordIngestRequestSql(values, record.key, record.hash, record.response);
  await tx.query(parts.length > 0 ? `WITH ${parts.join(',\n')}\n${record_}` : record_, values.params);
}
