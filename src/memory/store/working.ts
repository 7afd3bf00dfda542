import type { Sql } from '../db/types.js';

export interface WorkingRow {
  last_seq: number;
  state_version: number;
  key_id: string;
  ciphertext: Uint8Array;
}

export const WORKING_SELECT = `SELECT last_seq, state_version, key_id, ciphertext FROM memory.working
  WHERE tenant_id = $1 AND game_id = $2 AND room_id = $3 AND npc_id = $4`;

export async function deleteWorking(tx: Sql, tenantId: string, gameId: string, roomId: string, npcId: string): Promise<WorkingRow | undefined> {
  const { rows } = await tx.query<WorkingRow>(
    `DELETE FROM memory.working WHERE tenant_id = $1 AND game_id = $2 AND room_id = $3 AND npc_id = $4
     RETURNING last_seq, state_version, key_id, ciphertext`,
    [tenantId, gameId, roomId, npcId],
  );
  return rows[0];
}

export async function getContextLog(tx: Sql, tenantId: string, gameId: string, id: string): Promise<unknown | undefined> {
  const { rows } = await tx.query<{ record: unknown; npc_id: string; room_id: string; created_at: Date | string }>(
    'SELECT record FROM memory.context_log WHERE tenant_id = $1 AND game_id = $2 AND id = $3',
    [tenantId, gameId, id],
  );
  return rows[0]?.record;
}

/** Working memory and the assembly's log record in one statement (one round trip). */
export async function putWorkingAndLog(
  tx: Sql,
  working: { tenantId: string; gameId: string; roomId: string; npcId: string; lastSeq: number; stateVersion: number; keyId: string; ciphertext: Uint8Array },
  log: { id: string; record: unknown },
): Promise<void> {
  await tx.query(
    `WITH working AS (
       INSERT INTO memory.working (tenant_id, game_id, room_id, npc_id, last_seq, state_version, key_id, ciphertext, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
       ON CONFLICT (tenant_id, game_id, room_id, npc_id) DO UPDATE SET
         last_seq = EXCLUDED.last_seq, state_version = EXCLUDED.state_version,
         key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext, updated_at = EXCLUDED.updated_at
       RETURNING 1)
     INSERT INTO memory.context_log (id, tenant_id, game_id, npc_id, room_id, state_version, record)
     VALUES ($9, $1, $2, $4, $3, $6, $10::jsonb)`,
    [working.tenantId, working.gameId, working.roomId, working.npcId, working.lastSeq, working.stateVersion, working.keyId, working.ciphertext, log.id, JSON.stringify(log.record)],
  );
}
