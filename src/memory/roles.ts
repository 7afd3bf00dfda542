import type { Database, Tx } from './db/types.js';
import { scopeSettings, setLocalStatements } from './scope.js';

/**
 * Transactions as the two internal roles of migration 0003. Neither is ever chosen by a
 * request's credential: the lifecycle code builds these scopes itself from a verified tenant.
 *
 * - `asLifecycle`: memory_lifecycle for one tenant (and one game, when ending or shredding it).
 *   It can clear embeddings, mark keys destroyed and delete rows; it cannot write memory.
 * - `asWorker`: memory_worker, which sees memory.jobs of every tenant and nothing of memory.
 */
export interface LifecycleScope {
  tenantId: string;
  gameId?: string;
}


export function asLifecycle<T>(db: Database, scope: LifecycleScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (!scope.tenantId) throw new Error('a lifecycle operation needs a tenant (a bug in the caller)');
  return db.transaction(fn, setLocalStatements(scopeSettings('memory_lifecycle', scope)));
}

export function asWorker<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(fn, setLocalStatements(scopeSettings('memory_worker')));
}

/** Injectable time, so tests can move the clock across the audit window. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
