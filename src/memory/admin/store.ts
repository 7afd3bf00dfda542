import type { Sql } from '../db/types.js';
import { OWNER_ATTRIBUTES, type AdminAction } from './actions.js';

export interface PrincipalRow {
  tenant_id: string;
  key_id: string;
  name: string;
  npcs: string[];
  actions: string[];
  revoked_at: Date | string | null;
}

/** The principal of an admin key; runs in an admin scope naming that key (policy principal_own). */
export async function findPrincipal(tx: Sql, tenantId: string, keyId: string): Promise<PrincipalRow | undefined> {
  const { rows } = await tx.query<PrincipalRow>(
    'SELECT tenant_id, key_id, name, npcs, actions, revoked_at FROM memory.admin_principals WHERE tenant_id = $1 AND key_id = $2',
    [tenantId, keyId],
  );
  return rows[0];
}

/** Operator-only (runs as the schema owner): attaches attributes to an admin key. */
export async function insertPrincipal(
  sql: Sql,
  row: { tenantId: string; keyId: string; name: string; npcs: readonly string[]; actions: readonly AdminAction[] },
): Promise<void> {
  await sql.query('INSERT INTO memory.admin_principals (tenant_id, key_id, name, npcs, actions) VALUES ($1, $2, $3, $4, $5)', [
    row.tenantId,
    row.keyId,
    row.name,
    row.npcs,
    row.actions,
  ]);
}

/** Operator-only: the key stays valid as a credential but no longer carries any attribute. */
export async function revokePrincipal(sql: Sql, keyId: string): Promise<boolean> {
  const { rowCount } = await sql.query('UPDATE memory.admin_principals SET revoked_at = now() WHERE key_id = $1 AND revoked_at IS NULL', [keyId]);
  return rowCount > 0;
}

/** Operator-only: a new tenant's first admin key becomes its owner (every action, every NPC). */
export async function grantTenantOwner(sql: Sql, tenantId: string, adminKey: string): Promise<void> {
  await insertPrincipal(sql, { tenantId, keyId: adminKey.split('_')[1]!, ...OWNER_ATTRIBUTES });
}
