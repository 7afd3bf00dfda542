import type { Sql } from '../db/types.js';
import type { Procedural } from '../types.js';
import { iso } from './rows.js';

export interface ProceduralRow {
  tenant_id: string;
  npc_id: string;
  version: number;
  persona: string;
  directives: string[];
  core: Record<string, string>;
  created_by: string;
  created_at: Date | string;
  lineage: unknown;
}

const COLUMNS = 'tenant_id, npc_id, version, persona, directives, core, created_by, created_at, lineage';

/**
 * The NPC's current procedural memory: its newest version that has not been invalidated. One
 * statement for every reader (the service, context assembly's single round trip, cloning).
 */
export function latestProceduralStatement(tenantId: string, npcId: string): { text: string; params: unknown[] } {
  return {
    text: `SELECT ${COLUMNS} FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2 AND invalidated_at IS NULL ORDER BY version DESC LIMIT 1`,
    params: [tenantId, npcId],
  };
}

export async function latestProcedural(tx: Sql, tenantId: string, npcId: string): Promise<ProceduralRow | undefined> {
  const { text, params } = latestProceduralStatement(tenantId, npcId);
  const { rows } = await tx.query<ProceduralRow>(text, params);
  return rows[0];
}

/** Appends the next version; versions are never rewritten. */
export async function insertProcedural(
  tx: Sql,
  row: { tenantId: string; npcId: string; persona: string; directives: string[]; core: Record<string, string>; createdBy: string },
): Promise<ProceduralRow> {
  const { rows } = await tx.query<ProceduralRow>(
    `INSERT INTO memory.procedural (tenant_id, npc_id, version, persona, directives, core, created_by)
     SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4::jsonb, $5::jsonb, $6
       FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2
     RETURNING ${COLUMNS}`,
    [row.tenantId, row.npcId, row.persona, JSON.stringify(row.directives), JSON.stringify(row.core), row.createdBy],
  );
  return rows[0]!;
}

export function toProcedural(row: ProceduralRow): Procedural {
  return {
    npcId: row.npc_id,
    version: row.version,
    persona: row.persona,
    directives: row.directives,
    core: row.core,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
  };
}
