import type { Database } from '../db/types.js';
import { inScope } from '../scope.js';
import { MemoryError } from '../errors.js';
import { appendAudit } from '../audit/ledger.js';
import * as store from './store.js';

/**
 * Lineage trace and cascading invalidation. A trace starts from a clone operation (every row
 * it produced) or from one source row (every copy of it), and follows copies of copies through
 * later clones. Invalidation sets `invalidated_at` on every traced row: they vanish from
 * retrieval and stay in place, with their lineage, for the trace and the audit.
 */
export type TraceStart = { operationId: string } | { rowId: string };

export interface TraceResult {
  start: TraceStart;
  rows: store.TracedRow[];
  operations: string[];
  npcs: string[];
}

export interface InvalidationResult extends TraceResult {
  invalidated: { lore: number; social: number; procedural: number };
  ledger: { seq: number; hash: string };
}

export class Lineages {
  constructor(private readonly db: Database) {}

  async trace(tenantId: string, start: TraceStart): Promise<TraceResult> {
    return inScope(this.db, { tenantId, role: 'admin' }, async (tx) => {
      if ('operationId' in start && !(await store.operationExists(tx, tenantId, start.operationId))) {
        throw new MemoryError('OPERATION_NOT_FOUND', 'no clone operation with this id in your tenant');
      }
      return summarize(start, await store.traceLineage(tx, tenantId, start));
    });
  }

  /**
   * Invalidates every traced row in one transaction, with its ledger record. `authorizedNpcs`
   * is checked against the trace inside that transaction: if the trace reached an NPC the
   * caller was not authorized for (a clone committed in between), nothing happens.
   */
  async invalidate(tenantId: string, start: TraceStart, actor: string, authorizedNpcs: ReadonlySet<string> | 'all'): Promise<InvalidationResult> {
    return inScope(this.db, { tenantId, role: 'admin' }, async (tx) => {
      if ('operationId' in start && !(await store.operationExists(tx, tenantId, start.operationId))) {
        throw new MemoryError('OPERATION_NOT_FOUND', 'no clone operation with this id in your tenant');
      }
      const trace = summarize(start, await store.traceLineage(tx, tenantId, start));
      const outside = authorizedNpcs === 'all' ? [] : trace.npcs.filter((n) => !authorizedNpcs.has(n));
      if (outside.length > 0) {
        throw new MemoryError('TRACE_CHANGED', 'the trace grew while it was being authorized; run the invalidation again');
      }
      const invalidated = { lore: 0, social: 0, procedural: 0 };
      for (const npcId of trace.npcs) {
        await store.setNpcScope(tx, npcId, []);
        const mine = trace.rows.filter((r) => r.npc_id === npcId);
        for (const tier of ['lore', 'social'] as const) {
          const ids = mine.filter((r) => r.tier === tier).map((r) => r.row_id);
          if (ids.length) invalidated[tier] += await store.invalidateFacts(tx, tier, tenantId, npcId, ids);
        }
        const versions = mine.filter((r) => r.tier === 'procedural').map((r) => Number(r.row_id.split(':').at(-1)));
        if (versions.length) invalidated.procedural += await store.invalidateProcedural(tx, tenantId, npcId, versions);
      }
      if ('operationId' in start) await store.markOperationsInvalidated(tx, tenantId, [start.operationId]);
      const ledger = await appendAudit(tx, {
        tenantId,
        action: 'invalidate',
        actor,
        subject: 'operationId' in start ? `clone:${start.operationId}` : `row:${start.rowId}`,
        details: { start, rows: trace.rows.length, operations: trace.operations, npcs: trace.npcs, invalidated },
      });
      return { ...trace, invalidated, ledger };
    });
  }
}

function summarize(start: TraceStart, rows: store.TracedRow[]): TraceResult {
  return {
    start,
    rows,
    operations: [...new Set(rows.map((r) => r.operation_id))],
    npcs: [...new Set(rows.map((r) => r.npc_id))].sort(),
  };
}
