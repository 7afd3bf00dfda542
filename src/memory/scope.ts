import type { Database, Tx } from './db/types.js';
import { MemoryError } from './errors.js';
import { prepared, settingLiteral } from './db/literal.js';

/**
 * What one request may see. Built only from a verified credential (tenant API key or a game
 * token) plus path parameters checked against it; never from a request body.
 */
export interface Scope {
  tenantId: string;
  /** Set only by a game token: game-bound tiers are invisible without it. */
  gameId?: string;
  npcId?: string;
  /** Participants whose social facts are visible (from the game token). */
  participantIds?: readonly string[];
  /** The database role the transaction runs as. */
  role: 'runtime' | 'admin';
  /** Set only while authenticating: the API key id being looked up. */
  keyId?: string;
}

const ROLES = { runtime: 'memory_runtime', admin: 'memory_admin' } as const;

/**
 * The transaction-local settings of a transaction as `role` with these scope parts: every setting
 * the policies read is set, to '' when absent (which matches nothing). The internal roles
 * (roles.ts) use it too.
 */
export function scopeSettings(role: string, parts: Partial<Omit<Scope, 'role'>> = {}): Record<string, string> {
  const participants = parts.participantIds ?? [];
  if (participants.some((p) => p.includes(','))) {
    throw new MemoryError('INVALID_SCOPE', 'participant ids may not contain commas');
  }
  return {
    role,
    'memory.tenant': parts.tenantId ?? '',
    'memory.game': parts.gameId ?? '',
    'memory.npc': parts.npcId ?? '',
    'memory.participants': participants.join(','),
    'memory.key_id': parts.keyId ?? '',
  };
}

/**
 * Transaction-local settings as one script of `SET LOCAL` statements (one round trip). Not
 * `set_config(..., true)`, which means the same on one node: on Citus only `SET LOCAL` reaches the
 * workers (citus.propagate_set_commands = 'local'), where every shard's row-level security reads
 * the scope; a setting that does not arrive reads as NULL there, and matches nothing.
 */
export function setLocalScript(settings: Readonly<Record<string, string>>): string {
  return setLocalStatements(settings).join(';\n');
}

export function setLocalStatements(settings: Readonly<Record<string, string>>): string[] {
  return Object.entries(settings).map(([name, value]) => `SET LOCAL ${name} = ${settingLiteral(value)}`);
}

/** Sets transaction-local settings (`setLocalScript`) in the open transaction. */
export function setLocal(tx: Tx, settings: Readonly<Record<string, string>>): Promise<void> {
  return tx.exec(setLocalScript(settings));
}

const settingsOf = (scope: Scope) => scopeSettings(ROLES[scope.role], scope);

/**
 * Runs `fn` in one transaction as the runtime (or admin) role, with the scope set
 * transaction-locally, so that every statement inside, including a GET by id, is filtered by
 * row-level security. Session-level settings would leak across pooled connections.
 */
export function inScope<T>(db: Database, scope: Scope, fn: (tx: Tx) => Promise<T>, options: { asyncCommit?: boolean } = {}): Promise<T> {
  // asyncCommit: for writes that can be rebuilt if lost (working memory, logs), the commit does not
  // wait for the WAL flush; set in the same script as the scope, so it costs no round trip.
  // (The scope goes with BEGIN, in one round trip: see `Database.transaction`.)
  return db.transaction(fn, setLocalStatements({ ...settingsOf(scope), ...(options.asyncCommit ? { synchronous_commit: 'off' } : {}) }));
}

/**
 * The hot read path in one round trip: the scope settings and the read statements go to the
 * server as one script, which runs as one implicit transaction, so the transaction-local scope
 * covers exactly these statements (on Citus, in an explicit transaction instead: see `batch`).
 * Same policies, same role as `inScope`. The statements run as prepared statements of the connection (planned once with their policies, not per call); their
 * values are inlined by the deliberately narrow `literal()` (ids, uuids, numbers, vectors; never
 * free text). Returns the rows of each statement, in order.
 */
export async function readInScope(
  db: Database,
  scope: Scope,
  statements: readonly { text: string; params: readonly unknown[] }[],
): Promise<Record<string, unknown>[][]> {
  const reads = statements.map((s) => prepared(s.text, s.params));
  return db.batch(reads.map((r) => r.execute).join(';\n'), reads.map((r) => r.statement), setLocalStatements(settingsOf(scope)));
}
