import type { Sql } from '../db/types.js';

export interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  secret_hash: string;
  role: 'runtime' | 'admin';
  revoked_at: Date | string | null;
}

/** Runs in a scope that names only the presented key id: the policy shows that one row or none. */
export async function findApiKey(tx: Sql, keyId: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(
    'SELECT key_id, tenant_id, secret_hash, role, revoked_at FROM memory.api_keys WHERE key_id = $1',
    [keyId],
  );
  return rows[0];
}

/** Operator-only (runs as the schema owner, outside any runtime scope). */
export async function insertTenant(sql: Sql, name: string): Promise<string> {
  const { rows } = await sql.query<{ tenant_id: string }>('INSERT INTO memory.tenants (name) VALUES ($1) RETURNING tenant_id', [name]);
  return rows[0]!.tenant_id;
}

/** Operator-only (runs as the schema owner). */
export async function insertApiKey(sql: Sql, row: { keyId: string; tenantId: string; secretHash: string; role: string }): Promise<void> {
  await sql.query('INSERT INTO memory.api_keys (key_id, tenant_id, secret_hash, role) VALUES ($1, $2, $3, $4)', [
    row.keyId,
    row.tenantId,
    row.secretHash,
    row.role,
  ]);
}
