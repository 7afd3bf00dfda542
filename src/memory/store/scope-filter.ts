import type { Scope } from '../scope.js';
import { TIER_TABLES, type DurableTier } from '../types.js';

/**
 * The scope written out as a WHERE clause. Row-level security already enforces it; queries
 * carry it too so that indexes (and, on Citus, shard pruning on the distribution key) apply.
 * Returns undefined when the scope cannot see the tier at all, so no query is sent.
 */
export function scopeFilter(
  tier: DurableTier,
  scope: Scope,
  firstParam: number,
): { sql: string; params: unknown[] } | undefined {
  const spec = TIER_TABLES[tier];
  if (!scope.npcId) return undefined;
  if (spec.gameBound && !scope.gameId) return undefined;
  if (spec.participantBound && !scope.participantIds?.length) return undefined;
  const clauses = [`tenant_id = $${firstParam}`, `npc_id = $${firstParam + 1}`];
  const params: unknown[] = [scope.tenantId, scope.npcId];
  if (spec.gameBound) {
    params.push(scope.gameId);
    clauses.push(`game_id = $${firstParam + params.length - 1}`);
  }
  if (spec.participantBound) {
    params.push(scope.participantIds);
    clauses.push(`participant_id = ANY ($${firstParam + params.length - 1}::text[])`);
  }
  return { sql: clauses.join(' AND '), params };
}
