import { createHash } from 'node:crypto';
import type { Sql } from '../db/types.js';
import { iso } from '../store/rows.js';

/**
 * The audit ledger: one append-only, hash-chained sequence of records per tenant.
 *
 * A record's hash is sha256(prevHash + "\n" + canonical JSON of the record), and the first
 * record's prevHash is 64 zeros. Verification recomputes every hash and checks every link and
 * every sequence number, so a flipped byte, a deleted, swapped or inserted record in the middle,
 * or a record rewritten with a recomputed hash (its successor's link breaks) are all found.
 * A cut-off tail leaves a valid shorter chain; signed checkpoints exported outside the database
 * (checkpoints.ts) catch that.
 *
 * Records hold ids and counts only, never memory text: the ledger outlives erasure.
 */

export const AUDIT_ACTIONS = [
  'clone_dry_run',
  'clone_commit',
  'invalidate',
  'erasure',
  'procedural_change',
  'game_end',
  'consent_revoked',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  tenantId: string;
  action: AuditAction;
  /** Who did it: `key:<keyId>` for an API key, `operator` for the CLI, `service` for the service itself. */
  actor: string;
  /** What it was done to: an npc, `npc:A->npc:B`, a game, an operation id, a participant id. */
  subject: string;
  /** Ids, counts, versions; JSON without memory text. */
  details: Record<string, unknown>;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  /** ISO-8601 with milliseconds. */
  at: string;
  prevHash: string;
  hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every depth: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('the audit ledger holds finite numbers only');
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error(`the audit ledger cannot hold a ${typeof value}`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The hash of a record given its predecessor's hash. */
export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  const body = canonicalJson({
    v: 1,
    tenantId: record.tenantId,
    seq: record.seq,
    at: record.at,
    action: record.action,
    actor: record.actor,
    subject: record.subject,
    details: record.details,
  });
  return createHash('sha256').update(`${record.prevHash}\n${body}`).digest('hex');
}

/**
 * Appends one record to the tenant's chain, inside the caller's transaction: call it in the
 * same transaction as the action it records, so both commit or neither does. The transaction
 * must be scoped to `entry.tenantId` (runtime or admin role, see scope.ts) or run as the owner.
 * Concurrent appends of one tenant wait for each other (an advisory lock held to commit).
 */
export async function appendAudit(tx: Sql, entry: AuditEntry): Promise<{ seq: number; hash: string }> {
  // Round-trip through JSON first so the hash covers exactly what jsonb will store and give back.
  const details = JSON.parse(canonicalJson(entry.details)) as Record<string, unknown>;
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`memory.audit_ledger:${entry.tenantId}`]);
  const { rows } = await tx.query<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM memory.audit_ledger WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1',
    [entry.tenantId],
  );
  const head = rows[0];
  const record: Omit<AuditRecord, 'hash'> = {
    tenantId: entry.tenantId,
    action: entry.action,
    actor: entry.actor,
    subject: entry.subject,
    details,
    seq: head ? Number(head.seq) + 1 : 1,
    at: new Date().toISOString(),
    prevHash: head?.hash ?? GENESIS_HASH,
  };
  const hash = recordHash(record);
  await tx.query(
    `INSERT INTO memory.audit_ledger (tenant_id, seq, recorded_at, action, actor, subject, details, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`,
    [record.tenantId, record.seq, record.at, record.action, record.actor, record.subject, JSON.stringify(details), record.prevHash, hash],
  );
  return { seq: record.seq, hash };
}

interface LedgerRow {
  tenant_id: string;
  seq: number;
  recorded_at: Date | string;
  action: string;
  actor: string;
  subject: string;
  details: Record<string, unknown> | string;
  prev_hash: string;
  hash: string;
}

/** The tenant's records in sequence order (all, or from `fromSeq`). */
export async function readLedger(
  tx: Sql,
  tenantId: string,
  options: { fromSeq?: number; limit?: number } = {},
): Promise<AuditRecord[]> {
  const { rows } = await tx.query<LedgerRow>(
    `SELECT tenant_id, seq, recorded_at, action, actor, subject, details, prev_hash, hash
     FROM memory.audit_ledger WHERE tenant_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
    [tenantId, options.fromSeq ?? 1, options.limit ?? 1_000_000],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    seq: Number(r.seq),
    at: iso(r.recorded_at),
    action: r.action as AuditAction,
    actor: r.actor,
    subject: r.subject,
    details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details,
    prevHash: r.prev_hash,
    hash: r.hash,
  }));
}

export type ChainProblem =
  | { kind: 'SEQUENCE_GAP'; seq: number; expected: number }
  | { kind: 'BROKEN_LINK'; seq: number }
  | { kind: 'HASH_MISMATCH'; seq: number }
  | { kind: 'WRONG_TENANT'; seq: number };

/**
 * Checks every record: its sequence number follows its predecessor's, its prevHash is its
 * predecessor's hash, and its own hash recomputes. Returns every problem found, in order.
 */
export function verifyChain(tenantId: string, records: readonly AuditRecord[]): ChainProblem[] {
  const problems: ChainProblem[] = [];
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  for (const record of records) {
    if (record.tenantId !== tenantId) problems.push({ kind: 'WRONG_TENANT', seq: record.seq });
    if (record.seq !== expectedSeq) problems.push({ kind: 'SEQUENCE_GAP', seq: record.seq, expected: expectedSeq });
    if (record.prevHash !== prevHash) problems.push({ kind: 'BROKEN_LINK', seq: record.seq });
    if (recordHash(record) !== record.hash) problems.push({ kind: 'HASH_MISMATCH', seq: record.seq });
    expectedSeq = record.seq + 1;
    prevHash = record.hash;
  }
  return problems;
}
