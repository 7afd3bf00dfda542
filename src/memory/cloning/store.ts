/** Every SQL statement of the cloning pipeline, its lineage trace and invalidation. */
import type { Sql, Tx } from '../db/types.js';
import { setLocal } from '../scope.js';
import { Values } from '../store/values.js';
import { factColumns, type FactRow } from '../store/rows.js';
import { latestProcedural } from '../store/procedural.js';
import { TIER_TABLES, type CopiedTier, type ExcludedTier, type Lineage } from '../types.js';

/** The tiers a clone copies (`TIER_TABLES`' `clone`). */
export type CopyTier = CopiedTier;

export interface SourceFactRow extends FactRow {
  embedding_text: string | null;
  embedder: string | null;
}

/** All facts of one copyable tier held by `npcId` (current or not: the pipeline reports both). */
export async function sourceFacts(tx: Sql, tier: CopyTier, tenantId: string, npcId: string): Promise<SourceFactRow[]> {
  const { rows } = await tx.query<SourceFactRow>(
    `SELECT ${factColumns(false, TIER_TABLES[tier].participantBound)}, embedding::text AS embedding_text, embedder
     FROM ${TIER_TABLES[tier].table} WHERE tenant_id = $1 AND npc_id = $2 ORDER BY created_at, id`,
    [tenantId, npcId],
  );
  return rows;
}

export interface ExcludedRow {
  id: string;
  game_id: string | null;
  fact_key: string | null;
}

/** Rows of a tier that is never copied: how many, and a few ids to show. Nothing is decrypted. */
export async function excludedRows(
  tx: Sql,
  tier: ExcludedTier,
  tenantId: string,
  npcId: string,
  sample: number,
): Promise<{ count: number; sample: ExcludedRow[] }> {
  const { table, gameBound } = TIER_TABLES[tier];
  // (An episode is a line, not a fact: it has no key.)
  const cols = `id, ${gameBound ? 'game_id' : 'NULL::text AS game_id'}, ${tier === 'episodic' ? 'NULL::text AS fact_key' : 'fact_key'}`;
  const count = await tx.query<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1 AND npc_id = $2`, [tenantId, npcId]);
  const rows = await tx.query<ExcludedRow>(`SELECT ${cols} FROM ${table} WHERE tenant_id = $1 AND npc_id = $2 ORDER BY id LIMIT $3`, [
    tenantId,
    npcId,
    sample,
  ]);
  return { count: Number(count.rows[0]?.n ?? 0), sample: rows.rows };
}

export interface SourceProcedural {
  version: number;
  persona: string;
  directives: string[];
  core: Record<string, string>;
}

/** The newest procedural version of `npcId` that has not been invalidated. */
export async function currentProcedural(tx: Sql, tenantId: string, npcId: string): Promise<SourceProcedural | undefined> {
  const row = await latestProcedural(tx, tenantId, npcId);
  return row && { version: row.version, persona: row.persona, directives: row.directives, core: row.core };
}

export async function insertClonedProcedural(
  tx: Sql,
  row: { tenantId: string; npcId: string; source: SourceProcedural; createdBy: string; lineage: Lineage },
): Promise<number> {
  const { rows } = await tx.query<{ version: number }>(
    `INSERT INTO memory.procedural (tenant_id, npc_id, version, persona, directives, core, created_by, lineage)
     SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4::jsonb, $5::jsonb, $6, $7::jsonb
       FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2
     RETURNING version`,
    [
      row.tenantId,
      row.npcId,
      row.source.persona,
      JSON.stringify(row.source.directives),
      JSON.stringify(row.source.core),
      row.createdBy,
      JSON.stringify(row.lineage),
    ],
  );
  return Number(rows[0]!.version);
}

export interface ClonedFact {
  id: string;
  tenantId: string;
  npcId: string;
  participantId?: string;
  source: SourceFactRow;
  keyId: string;
  ciphertext: Uint8Array;
  lineage: Lineage;
}

/** A cloned fact: provenance copied, source 'clone', no supersession, no episodic links, lineage set. */
export async function insertClonedFact(tx: Sql, tier: CopyTier, row: ClonedFact): Promise<void> {
  const s = row.source;
  const names = ['id', 'tenant_id', 'npc_id', 'fact_key', 'source', 'confidence', 'importance', 'retention', 'lineage', 'key_id', 'ciphertext', 'embedding', 'embedder'];
  // The vector is copied as it is, so the id of the embedder that made it goes with it.
  const values: unknown[] = [row.id, row.tenantId, row.npcId, s.fact_key, 'clone', s.confidence, s.importance, s.retention, JSON.stringify(row.lineage), row.keyId, row.ciphertext, s.embedding_text, s.embedder];
  if (TIER_TABLES[tier].participantBound) {
    names.push('participant_id');
    values.push(row.participantId);
  }
  const placeholders = names.map((n, i) => `$${i + 1}${n === 'embedding' ? '::vector' : n === 'lineage' ? '::jsonb' : ''}`);
  await tx.query(`INSERT INTO ${TIER_TABLES[tier].table} (${names.join(', ')}) VALUES (${placeholders.join(', ')})`, values);
}

export async function insertOperation(
  tx: Sql,
  op: { tenantId: string; operationId: string; sourceNpc: string; targetNpc: string; actor: string; toolVersion: string; manifest: unknown },
): Promise<void> {
  await tx.query(
    `INSERT INTO memory.clone_operations (tenant_id, operation_id, source_npc, target_npc, actor, tool_version, manifest)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
    [op.tenantId, op.operationId, op.sourceNpc, op.targetNpc, op.actor, op.toolVersion, JSON.stringify(op.manifest)],
  );
}

export interface LineageRow {
  operation_id: string;
  tier: 'procedural' | CopyTier;
  row_id: string;
  npc_id: string;
  participant_id: string | null;
  source_npc: string;
  source_row_id: string;
}

export async function insertLineageRows(tx: Sql, tenantId: string, rows: readonly LineageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = new Values([tenantId]);
  for (const r of rows) {
    const v = (value: unknown) => values.bind(value);
    values.row(['$1', v(r.operation_id), v(r.tier), v(r.row_id), v(r.npc_id), v(r.participant_id), v(r.source_npc), v(r.source_row_id)]);
  }
  await tx.query(
    `INSERT INTO memory.clone_rows (tenant_id, operation_id, tier, row_id, npc_id, participant_id, source_npc, source_row_id) ${values.sql}`,
    values.params,
  );
}

export interface TracedRow extends LineageRow {
  depth: number;
}

/**
 * Every row an operation produced (or every row copied from one source row), then every row
 * copied from those, and so on through clones of clones.
 */
export async function traceLineage(tx: Sql, tenantId: string, from: { operationId: string } | { rowId: string }): Promise<TracedRow[]> {
  const seed =
    'operationId' in from
      ? 'SELECT *, 0 AS depth FROM memory.clone_rows WHERE tenant_id = $1 AND operation_id = $2::uuid'
      : 'SELECT *, 0 AS depth FROM memory.clone_rows WHERE tenant_id = $1 AND source_row_id = $2';
  const { rows } = await tx.query<TracedRow & { tenant_id: string }>(
    `WITH RECURSIVE traced AS (
       ${seed}
       UNION
       SELECT c.*, t.depth + 1 FROM traced t
         JOIN memory.clone_rows c ON c.tenant_id = $1 AND c.source_row_id = t.row_id
     )
     SELECT DISTINCT ON (row_id) operation_id, tier, row_id, npc_id, participant_id, source_npc, source_row_id, depth
       FROM traced ORDER BY row_id, depth`,
    [tenantId, 'operationId' in from ? from.operationId : from.rowId],
  );
  return rows.map((r) => ({ ...r, depth: Number(r.depth) })).sort((a, b) => a.depth - b.depth || a.row_id.localeCompare(b.row_id));
}

export async function operationExists(tx: Sql, tenantId: string, operationId: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT 1 FROM memory.clone_operations WHERE tenant_id = $1 AND operation_id = $2', [tenantId, operationId]);
  return rows.length > 0;
}

/** Sets invalidated_at on these fact rows of one npc (already-invalidated rows keep their time). */
export async function invalidateFacts(tx: Sql, tier: CopyTier, tenantId: string, npcId: string, ids: readonly string[]): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE ${TIER_TABLES[tier].table} SET invalidated_at = now(), updated_at = now()
     WHERE tenant_id = $1 AND npc_id = $2 AND id = ANY ($3::uuid[]) AND invalidated_at IS NULL`,
    [tenantId, npcId, ids],
  );
  return rowCount;
}

export async function invalidateProcedural(tx: Sql, tenantId: string, npcId: string, versions: readonly number[]): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE memory.procedural SET invalidated_at = now()
     WHERE tenant_id = $1 AND npc_id = $2 AND version = ANY ($3::int[]) AND invalidated_at IS NULL`,
    [tenantId, npcId, versions],
  );
  return rowCount;
}

export async function markOperationsInvalidated(tx: Sql, tenantId: string, operationIds: readonly string[]): Promise<void> {
  await tx.query(
    'UPDATE memory.clone_operations SET invalidated_at = now() WHERE tenant_id = $1 AND operation_id = ANY ($2::uuid[]) AND invalidated_at IS NULL',
    [tenantId, operationIds],
  );
}

/** Moves the transaction's scope to another npc (and participants): the pipeline reads the source, then writes the target. */
export function setNpcScope(tx: Tx, npcId: string, participantIds: readonly string[]): Promise<void> {
  return setLocal(tx, { 'memory.npc': npcId, 'memory.participants': participantIds.join(',') });
}
