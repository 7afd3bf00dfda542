import type { Sql } from '../db/types.js';
import type { Scope } from '../scope.js';
import { TIER_TABLES, type FactTier, type Provenance } from '../types.js';
import { factColumns, type FactRow } from './rows.js';
import { scopeFilter } from './scope-filter.js';

const columns = (tier: FactTier) => factColumns(TIER_TABLES[tier].gameBound, TIER_TABLES[tier].participantBound);

export interface NewFactRow extends Provenance {
  id: string;
  tenantId: string;
  npcId: string;
  gameId?: string;
  participantId?: string;
  factKey: string;
  supersedes?: string;
  derivedFrom: readonly string[];
  keyId: string;
  ciphertext: Uint8Array;
  embedding: string;
  /** The id of the embedder that made `embedding`. */
  embedder: string;
}

export async function insertFact(tx: Sql, tier: FactTier, row: NewFactRow): Promise<FactRow> {
  const { text, values } = insertStatement(tier, [row]);
  const { rows } = await tx.query<FactRow>(`${text} RETURNING ${columns(tier)}`, values);
  return rows[0]!;
}

/**
 * Several facts of one tier in one statement (one round trip). A row marked `superseded` is
 * written already superseded (now): a later fact of the same batch replaced it.
 */
export async function insertFacts(tx: Sql, tier: FactTier, rows: readonly (NewFactRow & { superseded?: boolean })[]): Promise<void> {
  if (rows.length === 0) return;
  const { text, values } = insertStatement(tier, rows);
  await tx.query(text, values);
}

function insertStatement(tier: FactTier, rows: readonly (NewFactRow & { superseded?: boolean })[]): { text: string; values: unknown[] } {
  const spec = TIER_TABLES[tier];
  const names = ['id', 'tenant_id', 'npc_id', 'fact_key', 'source', 'confidence', 'importance', 'retention', 'supersedes', 'derived_from', 'key_id', 'ciphertext', 'embedding', 'embedder'];
  if (spec.gameBound) names.push('game_id');
  if (spec.participantBound) names.push('participant_id');
  const superseded = rows.some((r) => r.superseded);
  if (superseded) names.push('superseded_at');
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const own: unknown[] = [row.id, row.tenantId, row.npcId, row.factKey, row.source, row.confidence, row.importance, row.retention, row.supersedes ?? null, row.derivedFrom, row.keyId, row.ciphertext, row.embedding, row.embedder];
    if (spec.gameBound) own.push(row.gameId);
    if (spec.participantBound) own.push(row.participantId);
    if (superseded) own.push(row.superseded === true);
    const first = values.length;
    values.push(...own);
    const at = (n: string, i: number) => (n === 'embedding' ? `$${first + i + 1}::vector` : n === 'superseded_at' ? `CASE WHEN $${first + i + 1}::boolean THEN now() END` : `$${first + i + 1}`);
    return `(${names.map(at).join(', ')})`;
  });
  return { text: `INSERT INTO ${spec.table} (${names.join(', ')}) VALUES ${tuples.join(', ')}`, values };
}

/** Marks each of `ids` superseded; how many were current facts visible in the scope. */
export async function markSupersededAll(tx: Sql, tier: FactTier, scope: Scope, ids: readonly string[]): Promise<number> {
  const f = scopeFilter(tier, scope, 2);
  if (!f || ids.length === 0) return 0;
  const { rowCount } = await tx.query(
    `UPDATE ${TIER_TABLES[tier].table} SET superseded_at = now(), updated_at = now()
     WHERE id = ANY ($1::uuid[]) AND superseded_at IS NULL AND ${f.sql}`,
    [ids, ...f.params],
  );
  return rowCount;
}

export interface ListOptions {
  limit: number;
  /** Superseded and invalidated facts too (for audit and explanation); (Default: false) */
  includeHistory?: boolean;
}

const current = (include?: boolean) => (include ? '' : ' AND superseded_at IS NULL AND invalidated_at IS NULL');

export async function listFacts(tx: Sql, tier: FactTier, scope: Scope, options: ListOptions): Promise<FactRow[]> {
  const f = scopeFilter(tier, scope, 2);
  if (!f) return [];
  const { rows } = await tx.query<FactRow>(
    `SELECT ${columns(tier)} FROM ${TIER_TABLES[tier].table}
     WHERE ${f.sql}${current(options.includeHistory)} ORDER BY created_at DESC, id LIMIT $1`,
    [options.limit, ...f.params],
  );
  return rows;
}

export async function countRows(tx: Sql, tier: FactTier | 'episodic', scope: Scope): Promise<number> {
  const f = scopeFilter(tier, scope, 1);
  if (!f) return 0;
  const extra = tier === 'episodic' ? '' : current(false);
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*) AS n FROM ${TIER_TABLES[tier].table} WHERE ${f.sql}${extra}`,
    f.params,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Top-k nearest current facts of a tier in scope (a statement for `readInScope`). */
export function searchFactsStatement(
  tier: FactTier,
  scope: Scope,
  vector: string,
  k: number,
): { text: string; params: unknown[] } | undefined {
  const f = scopeFilter(tier, scope, 3);
  if (!f) return undefined;
  return {
    text: `SELECT ${columns(tier)}, embedding <=> $1::vector AS distance FROM ${TIER_TABLES[tier].table}
     WHERE ${f.sql}${current(false)} ORDER BY distance LIMIT $2`,
    params: [vector, k, ...f.params],
  };
}

export async function getFact(tx: Sql, tier: FactTier, scope: Scope, id: string): Promise<FactRow | undefined> {
  const f = scopeFilter(tier, scope, 2);
  if (!f) return undefined;
  const { rows } = await tx.query<FactRow>(
    `SELECT ${columns(tier)} FROM ${TIER_TABLES[tier].table} WHERE id = $1 AND ${f.sql}`,
    [id, ...f.params],
  );
  return rows[0];
}

export interface FactPatch {
  importance?: number;
  confidence?: number;
  retention?: string;
  invalidate?: boolean;
}

export async function updateFact(
  tx: Sql,
  tier: FactTier,
  scope: Scope,
  id: string,
  patch: FactPatch,
): Promise<FactRow | undefined> {
  const f = scopeFilter(tier, scope, 5);
  if (!f) return undefined;
  const { rows } = await tx.query<FactRow>(
    `UPDATE ${TIER_TABLES[tier].table} SET
       importance = coalesce($2, importance), confidence = coalesce($3, confidence),
       retention = coalesce($4, retention),
       invalidated_at = CASE WHEN ${patch.invalidate ? 'true' : 'false'} THEN coalesce(invalidated_at, now()) ELSE invalidated_at END,
       updated_at = now()
     WHERE id = $1 AND ${f.sql} RETURNING ${columns(tier)}`,
    [id, patch.importance ?? null, patch.confidence ?? null, patch.retention ?? null, ...f.params],
  );
  return rows[0];
}

export async function deleteFact(tx: Sql, tier: FactTier, scope: Scope, id: string): Promise<boolean> {
  const f = scopeFilter(tier, scope, 2);
  if (!f) return false;
  const { rowCount } = await tx.query(`DELETE FROM ${TIER_TABLES[tier].table} WHERE id = $1 AND ${f.sql}`, [id, ...f.params]);
  return rowCount > 0;
}
