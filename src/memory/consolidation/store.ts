/** The SQL of consolidation, run inside the job's scoped transaction (runtime role). */
import type { Sql } from '../db/types.js';
import type { Scope } from '../scope.js';
import { EPISODE_COLUMNS, factColumns, type EpisodeRow, type FactRow } from '../store/rows.js';
import { scopeFilter } from '../store/scope-filter.js';
import { Values } from '../store/values.js';
import { TIER_TABLES, type FactTier } from '../types.js';

/** Episodes of (tenant, game, npc) not consolidated yet, oldest first. */
export async function unconsolidatedEpisodes(tx: Sql, tenantId: string, gameId: string, npcId: string, limit: number): Promise<EpisodeRow[]> {
  const { rows } = await tx.query<EpisodeRow>(
    `SELECT ${EPISODE_COLUMNS} FROM memory.episodic e
      WHERE e.tenant_id = $1 AND e.game_id = $2 AND e.npc_id = $3
        -- NOT IN over a non-null column plans as one hashed subplan: linear in the game's size,
        -- whatever the statistics say (NOT EXISTS became a quadratic nested loop on fresh tables).
        AND e.id NOT IN (SELECT c.episode_id FROM memory.consolidated_episodes c
                          WHERE c.tenant_id = $1 AND c.game_id = $2 AND c.npc_id = $3)
      ORDER BY e.ts, e.created_at, e.id LIMIT $4`,
    [tenantId, gameId, npcId, limit],
  );
  return rows;
}

/** Whether any of these episodes has been consolidated already (by another consolidator). */
export async function anyConsolidated(tx: Sql, tenantId: string, gameId: string, npcId: string, ids: readonly string[]): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM memory.consolidated_episodes
      WHERE tenant_id = $1 AND game_id = $2 AND npc_id = $3 AND episode_id = ANY ($4::uuid[]) LIMIT 1`,
    [tenantId, gameId, npcId, ids],
  );
  return rows.length > 0;
}

export async function markConsolidated(tx: Sql, tenantId: string, gameId: string, npcId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const values = new Values([tenantId, gameId, npcId]);
  for (const id of ids) values.row(['$1', '$2', '$3', values.bind(id)]);
  await tx.query(`INSERT INTO memory.consolidated_episodes (tenant_id, game_id, npc_id, episode_id) ${values.sql} ON CONFLICT DO NOTHING`, values.params);
}

/** Current (not superseded, not invalidated) facts of a tier in scope with one of these keys. */
export async function currentFactsByKey(tx: Sql, tier: FactTier, scope: Scope, keys: readonly string[]): Promise<FactRow[]> {
  const f = scopeFilter(tier, scope, 2);
  if (!f || keys.length === 0) return [];
  const spec = TIER_TABLES[tier];
  const { rows } = await tx.query<FactRow>(
    `SELECT ${factColumns(spec.gameBound, spec.participantBound)} FROM ${spec.table}
      WHERE fact_key = ANY ($1::text[]) AND superseded_at IS NULL AND invalidated_at IS NULL AND ${f.sql}
      ORDER BY created_at`,
    [keys, ...f.params],
  );
  return rows;
}

/** The same fact heard again: more confidence (up to `cap`), the new episodes linked. */
export async function reinforceFact(
  tx: Sql,
  tier: FactTier,
  scope: Scope,
  id: string,
  change: { confidence: number; importance: number; derivedFrom: readonly string[] },
): Promise<void> {
  const f = scopeFilter(tier, scope, 5);
  if (!f) return;
  await tx.query(
    `UPDATE ${TIER_TABLES[tier].table}
        SET confidence = greatest(confidence, $2), importance = greatest(importance, $3),
            derived_from = ARRAY(SELECT DISTINCT unnest(derived_from || $4::uuid[])), updated_at = now()
      WHERE id = $1 AND ${f.sql}`,
    [id, change.confidence, change.importance, change.derivedFrom, ...f.params],
  );
}

/** Slow-decay facts in scope, to apply forgetting. */
export async function decayingFacts(
  tx: Sql,
  tier: FactTier,
  scope: Scope,
): Promise<{ id: string; importance: number; updated_at: Date | string }[]> {
  const f = scopeFilter(tier, scope, 1);
  if (!f) return [];
  const { rows } = await tx.query<{ id: string; importance: number; updated_at: Date | string }>(
    `SELECT id, importance, updated_at FROM ${TIER_TABLES[tier].table}
      WHERE retention = 'slow_decay' AND superseded_at IS NULL AND invalidated_at IS NULL AND ${f.sql}`,
    f.params,
  );
  return rows;
}

export async function invalidateFacts(tx: Sql, tier: FactTier, scope: Scope, ids: readonly string[]): Promise<number> {
  const f = scopeFilter(tier, scope, 2);
  if (!f || ids.length === 0) return 0;
  const { rowCount } = await tx.query(
    `UPDATE ${TIER_TABLES[tier].table} SET invalidated_at = now(), updated_at = now() WHERE id = ANY ($1::uuid[]) AND ${f.sql}`,
    [ids, ...f.params],
  );
  return rowCount;
}

export async function insertAnomaly(
  tx: Sql,
  row: {
    id: string;
    tenantId: string;
    npcId: string;
    gameId: string;
    participantId: string | null;
    episodeId: string;
    kind: string;
    coreKey: string | null;
    textHash: string;
    keyId: string;
    ciphertext: Uint8Array;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO memory.anomalies (id, tenant_id, npc_id, game_id, participant_id, episode_id, kind, core_key, text_hash, key_id, ciphertext)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [row.id, row.tenantId, row.npcId, row.gameId, row.participantId, row.episodeId, row.kind, row.coreKey, row.textHash, row.keyId, row.ciphertext],
  );
}

/** A participant's current social facts whose key starts with `prefix` ('' for all), nearest to `vector` first when given. */
export async function currentSocialFacts(
  tx: Sql,
  scope: Scope,
  participantId: string,
  prefix: string,
  vector?: string,
  { orSupersededNow = false }: { orSupersededNow?: boolean } = {},
): Promise<(FactRow & { distance: number | null })[]> {
  const f = scopeFilter('social', scope, 4);
  if (!f) return [];
  const spec = TIER_TABLES.social;
  const { rows } = await tx.query<FactRow & { distance: number | null }>(
    `SELECT ${factColumns(spec.gameBound, spec.participantBound)}, ${vector ? 'embedding <=> $3::vector' : 'NULL::float8'} AS distance FROM ${spec.table}
      WHERE participant_id = $1 AND starts_with(fact_key, $2) AND ${vector ? 'TRUE' : '$3::text IS NULL'}
        AND (superseded_at IS NULL${orSupersededNow ? ' OR superseded_at = now()' : ''}) AND invalidated_at IS NULL AND ${f.sql}
      ORDER BY ${vector ? 'distance NULLS LAST' : 'created_at DESC'}`,
    [participantId, prefix, vector ?? null, ...f.params],
  );
  return rows;
}
