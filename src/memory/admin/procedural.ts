import type { Database } from '../db/types.js';
import { inScope } from '../scope.js';
import { insertProcedural, toProcedural } from '../store/procedural.js';
import { appendAudit } from '../audit/ledger.js';
import type { Procedural, ProceduralInput } from '../types.js';
import type { AdminPrincipal } from './principals.js';

/**
 * Writes the next procedural version and its ledger record in one transaction, as the admin
 * role scoped to the npc. The caller has checked the "write_procedural" attribute.
 */
export async function writeProcedural(db: Database, principal: AdminPrincipal, npcId: string, input: ProceduralInput): Promise<Procedural> {
  const write = () =>
    inScope(db, { tenantId: principal.tenantId, npcId, role: 'admin' }, async (tx) => {
      const row = await insertProcedural(tx, { tenantId: principal.tenantId, npcId, ...input, createdBy: principal.actor });
      await appendAudit(tx, {
        tenantId: principal.tenantId,
        action: 'procedural_change',
        actor: principal.actor,
        subject: `npc:${npcId}`,
        details: { npcId, version: row.version, directives: input.directives.length, coreKeys: Object.keys(input.core).sort() },
      });
      return toProcedural(row);
    });
  try {
    return await write();
  } catch (error) {
    // A concurrent writer took that version number: take the next one.
    if ((error as { code?: string }).code === '23505') return write();
    throw error;
  }
}
