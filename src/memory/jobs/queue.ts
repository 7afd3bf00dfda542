/**
 * The job queue in PostgreSQL (table memory.jobs, migration 0003). All of its SQL is here.
 *
 * - Enqueue runs inside the caller's transaction (as the runtime, or the lifecycle role), so a
 *   job exists exactly when the rows that call for it were committed. Repeated triggers
 *   coalesce into the one queued job of (tenant, kind, game, npc).
 * - Claim runs as memory_worker with `FOR UPDATE SKIP LOCKED`: several workers (processes or
 *   connections) never take the same job. PGlite has one connection and serializes
 *   transactions, so the same statement is safe there too.
 * - A claimed job holds a lease; a worker killed mid-job leaves it to be claimed again when the
 *   lease runs out. A failure reschedules it with exponential backoff; after `max_attempts`
 *   it is dead-lettered (state 'dead') for an operator to inspect and retry.
 */
import type { Database, Sql } from '../db/types.js';
import { asWorker } from '../roles.js';
import { Values } from '../store/values.js';

export const JOB_KINDS = ['consolidate', 'shred'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** Why consolidation was asked for. */
export const CONSOLIDATION_REASONS = ['ingest', 'suspension', 'npc_moved', 'game_end', 'manual'] as const;
export type ConsolidationReason = (typeof CONSOLIDATION_REASONS)[number];

export type JobState = 'queued' | 'running' | 'done' | 'dead';

export interface Job {
  id: string;
  tenantId: string;
  kind: JobKind;
  gameId: string;
  npcId: string;
  reason: string;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  runAt: Date;
  lastError: string | null;
}

interface JobRow {
  id: string;
  tenant_id: string;
  kind: JobKind;
  game_id: string;
  npc_id: string;
  reason: string;
  state: JobState;
  attempts: number;
  max_attempts: number;
  run_at: Date | string;
  last_error: string | null;
}

const COLUMNS = 'id, tenant_id, kind, game_id, npc_id, reason, state, attempts, max_attempts, run_at, last_error';

const toJob = (r: JobRow): Job => ({
  id: r.id,
  tenantId: r.tenant_id,
  kind: r.kind,
  gameId: r.game_id,
  npcId: r.npc_id,
  reason: r.reason,
  state: r.state,
  attempts: Number(r.attempts),
  maxAttempts: Number(r.max_attempts),
  runAt: r.run_at instanceof Date ? r.run_at : new Date(r.run_at),
  lastError: r.last_error,
});

export interface EnqueueOptions {
  /** Not before this moment. (Default: now) */
  runAt?: Date;
  /** (Default: 5) */
  maxAttempts?: number;
}

/**
 * Asks for the consolidation of one NPC's episodes in one game. Call it inside the transaction
 * that wrote those episodes (ingest, a working-memory flush), as the runtime role with the
 * tenant in scope, or with any connection that may insert into memory.jobs. A job already
 * queued for the same (tenant, game, npc) absorbs the request.
 */
export async function enqueueConsolidation(
  sql: Sql,
  job: { tenantId: string; gameId: string; npcId: string; reason: ConsolidationReason },
  options: EnqueueOptions = {},
): Promise<void> {
  await enqueue(sql, { ...job, kind: 'consolidate' }, options);
}

export async function enqueue(
  sql: Sql,
  job: { tenantId: string; kind: JobKind; gameId?: string; npcId?: string; reason: string },
  options: EnqueueOptions = {},
): Promise<void> {
  await sql.query(
    `INSERT INTO memory.jobs (tenant_id, kind, game_id, npc_id, reason, run_at, max_attempts)
     VALUES ($1, $2, $3, $4, $5, coalesce($6::timestamptz, now()), $7)
     ON CONFLICT (tenant_id, kind, game_id, npc_id) WHERE state = 'queued' DO NOTHING`,
    [job.tenantId, job.kind, job.gameId ?? '', job.npcId ?? '', job.reason, options.runAt ?? null, options.maxAttempts ?? 5],
  );
}

/**
 * Enqueues one consolidation job per npc of a batch in one statement (the ingest hook).
 *
 * `windowMs` is the batching window: a new job waits that long, and every batch ingested
 * meanwhile joins it, so a burst of play is consolidated in one run after at most `windowMs`
 * (a bounded delay: later batches do not push the job back). It keeps consolidation off the
 * connection while a conversation is live, which matters on PGlite's single connection.
 * `Worker.drain` does not wait for the window.
 */
export async function enqueueConsolidations(
  sql: Sql,
  tenantId: string,
  gameId: string,
  npcIds: readonly string[],
  reason: ConsolidationReason,
  windowMs = 0,
): Promise<void> {
  if (npcIds.length === 0) return;
  const values = new Values([tenantId, gameId]);
  await sql.query(enqueueConsolidationsSql(values, npcIds, reason, windowMs), values.params);
}

/** The insert of `enqueueConsolidations`, its values bound to `values`, whose $1 and $2 are the tenant and the game. */
export function enqueueConsolidationsSql(values: Values, npcIds: readonly string[], reason: ConsolidationReason, windowMs = 0): string {
  return `INSERT INTO memory.jobs (tenant_id, kind, game_id, npc_id, reason, run_at)
     SELECT $1, 'consolidate', $2, n, ${values.bind(reason)}, now() + make_interval(secs => ${values.bind(windowMs, '::double precision')} / 1000)
       FROM unnest(${values.bind([...new Set(npcIds)].sort(), '::text[]')}) AS n
     ON CONFLICT (tenant_id, kind, game_id, npc_id) WHERE state = 'queued' DO NOTHING`;
}

/**
 * Claims up to `limit` due jobs for `workerId`: queued ones whose time has come, and running
 * ones whose lease has expired (their worker died). Each claim counts as an attempt.
 * With `flush`, consolidation jobs still in their batching window (never attempted) are due
 * too; jobs backing off after a failure, and shredding, keep their time.
 */
export async function claimJobs(
  db: Database,
  workerId: string,
  options: { now: Date; limit: number; leaseMs: number; kinds?: readonly JobKind[]; tenantId?: string; gameId?: string; flush?: boolean },
): Promise<Job[]> {
  return asWorker(db, async (tx) => {
    // A job whose worker died on its last attempt is dead-lettered, not run again.
    await tx.query(
      `UPDATE memory.jobs SET state = 'dead', locked_by = NULL, locked_until = NULL, finished_at = $1, updated_at = $1,
              last_error = 'LEASE_EXPIRED: the worker stopped during the last attempt'
        WHERE state = 'running' AND locked_until < $1 AND attempts >= max_attempts`,
      [options.now],
    );
    const { rows } = await tx.query<JobRow>(
      `UPDATE memory.jobs j
          SET state = 'running', attempts = j.attempts + 1, locked_by = $2,
              locked_until = $1::timestamptz + make_interval(secs => $4::double precision / 1000), updated_at = $1
        WHERE j.id IN (
          SELECT id FROM memory.jobs
           WHERE ((state = 'queued' AND (run_at <= $1 OR ($8 AND kind = 'consolidate' AND attempts = 0)))
                  OR (state = 'running' AND locked_until < $1))
             AND kind = ANY ($5::text[])
             AND ($6::uuid IS NULL OR tenant_id = $6) AND ($7::text IS NULL OR game_id = $7)
           ORDER BY run_at, created_at
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS.split(', ').map((c) => `j.${c}`).join(', ')}`,
      [options.now, workerId, options.limit, options.leaseMs, options.kinds ?? JOB_KINDS, options.tenantId ?? null, options.gameId ?? null, options.flush ?? false],
    );
    return rows.map(toJob);
  });
}

/** Marks a job done; false if this worker no longer holds it (its lease expired and another took it). */
export async function completeJob(db: Database, job: Job, workerId: string, now: Date): Promise<boolean> {
  return asWorker(db, async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE memory.jobs SET state = 'done', locked_by = NULL, locked_until = NULL, finished_at = $3, updated_at = $3, last_error = NULL
        WHERE id = $1 AND state = 'running' AND locked_by = $2`,
      [job.id, workerId, now],
    );
    return rowCount > 0;
  });
}

/** Backoff before attempt n+1: 2^n seconds, capped at 10 minutes, with up to 20% jitter. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(600_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (1 + 0.2 * random()));
}

/** Records a failure: back to the queue after a backoff, or dead-lettered after the last attempt. */
export async function failJob(
  db: Database,
  job: Job,
  workerId: string,
  error: unknown,
  now: Date,
  delayMs = backoffMs(job.attempts),
): Promise<JobState> {
  const dead = job.attempts >= job.maxAttempts;
  const message = describeError(error);
  return asWorker(db, async (tx) => {
    if (!dead) {
      // A newer trigger may have queued a job for the same work meanwhile: it merges into this
      // one, which keeps its attempt count (so a job that always fails still reaches 'dead').
      await tx.query(
        `UPDATE memory.jobs SET state = 'done', finished_at = $6, updated_at = $6, last_error = $7
          WHERE tenant_id = $1 AND kind = $2 AND game_id = $3 AND npc_id = $4 AND state = 'queued' AND id <> $5`,
        [job.tenantId, job.kind, job.gameId, job.npcId, job.id, now, `merged into job ${job.id}`],
      );
    }
    // Times are computed here, not in SQL: Citus refuses non-immutable expressions (timestamptz
    // arithmetic) inside CASE.
    await tx.query(
      `UPDATE memory.jobs SET state = $3, locked_by = NULL, locked_until = NULL, last_error = $4, updated_at = $5,
              run_at = coalesce($6, run_at), finished_at = $7
        WHERE id = $1 AND locked_by = $2`,
      [job.id, workerId, dead ? 'dead' : 'queued', message, now, dead ? null : new Date(now.getTime() + delayMs), dead ? now : null],
    );
    return dead ? 'dead' : 'queued';
  });
}

/** Puts a dead-lettered job back in the queue with a fresh set of attempts (operator action). */
export async function retryDeadJob(db: Database, jobId: string): Promise<boolean> {
  return asWorker(db, async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE memory.jobs SET state = 'queued', attempts = 0, run_at = now(), updated_at = now(), finished_at = NULL
        WHERE id = $1 AND state = 'dead'
          AND NOT EXISTS (SELECT 1 FROM memory.jobs q WHERE q.state = 'queued' AND q.tenant_id = jobs.tenant_id
                          AND q.kind = jobs.kind AND q.game_id = jobs.game_id AND q.npc_id = jobs.npc_id)`,
      [jobId],
    );
    return rowCount > 0;
  });
}

export async function listJobs(db: Database, filter: { state?: JobState; tenantId?: string } = {}): Promise<Job[]> {
  return asWorker(db, async (tx) => {
    const { rows } = await tx.query<JobRow>(
      `SELECT ${COLUMNS} FROM memory.jobs WHERE ($1::text IS NULL OR state = $1) AND ($2::uuid IS NULL OR tenant_id = $2)
       ORDER BY created_at, id`,
      [filter.state ?? null, filter.tenantId ?? null],
    );
    return rows.map(toJob);
  });
}

/** Queue depth and the age of the oldest due job (the lag), for monitoring and the benchmark. */
export async function queueStats(db: Database, now: Date): Promise<{ queued: number; running: number; dead: number; lagMs: number }> {
  return asWorker(db, async (tx) => {
    const { rows } = await tx.query<{ queued: number; running: number; dead: number; oldest: Date | string | null }>(
      `SELECT count(*) FILTER (WHERE state = 'queued') AS queued, count(*) FILTER (WHERE state = 'running') AS running,
              count(*) FILTER (WHERE state = 'dead') AS dead,
              min(created_at) FILTER (WHERE state IN ('queued', 'running') AND run_at <= $1) AS oldest
         FROM memory.jobs`,
      [now],
    );
    const r = rows[0]!;
    const oldest = r.oldest === null ? null : new Date(r.oldest);
    return { queued: Number(r.queued), running: Number(r.running), dead: Number(r.dead), lagMs: oldest ? Math.max(0, now.getTime() - oldest.getTime()) : 0 };
  });
}

/** An error as stored in last_error: its code and our message, never memory text. */
function describeError(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return `${code}: ${message}`.slice(0, 500);
}
