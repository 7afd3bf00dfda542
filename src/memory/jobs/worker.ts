/**
 * A worker: claims due jobs from memory.jobs and runs their handler, renewing the lease while
 * it works, up to `concurrency` at once. Run as many as you like, in one process or many: the
 * claim statement hands each job to exactly one of them.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '../db/types.js';
import type { Clock } from '../roles.js';
import { asWorker } from '../roles.js';
import { claimJobs, completeJob, failJob, type Job, type JobKind, type JobState } from './queue.js';

export type JobHandler = (job: Job) => Promise<void>;

export interface WorkerOptions {
  handlers: Partial<Record<JobKind, JobHandler>>;
  clock?: Clock;
  /** Jobs run at once by this worker. (Default: 1) */
  concurrency?: number;
  /** Idle wait between polls, in milliseconds. (Default: 250) */
  pollMs?: number;
  /** How long a claim lasts without renewal, in milliseconds. (Default: 60000) */
  leaseMs?: number;
  /** Backoff after a failure (Default: queue.backoffMs). */
  backoffMs?: (attempts: number) => number;
  workerId?: string;
  logger?: Logger;
}

export interface RunResult {
  job: Job;
  outcome: JobState;
}

export class Worker {
  readonly id: string;
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly db: Database,
    private readonly options: WorkerOptions,
  ) {
    this.id = options.workerId ?? `worker-${randomBytes(4).toString('hex')}`;
  }

  private now(): Date {
    return (this.options.clock ?? (() => new Date()))();
  }

  /**
   * Claims and runs one round of due jobs; returns what happened to each. `flush` also takes
   * consolidation jobs still in their batching window (see `claimJobs`).
   */
  async runOnce(filter: { tenantId?: string; gameId?: string; flush?: boolean } = {}): Promise<RunResult[]> {
    const jobs = await this.claim(this.options.concurrency ?? 1, filter);
    return Promise.all(jobs.map((job) => this.run(job)));
  }

  /** Claims up to `limit` due jobs of the kinds this worker has handlers for. */
  private claim(limit: number, filter: { tenantId?: string; gameId?: string; flush?: boolean } = {}): Promise<Job[]> {
    return claimJobs(this.db, this.id, { now: this.now(), limit, leaseMs: this.options.leaseMs ?? 60_000, kinds: Object.keys(this.options.handlers) as JobKind[], ...filter });
  }

  /**
   * Runs rounds until no job is due (tests, the CLI, the evaluation harness, a final flush),
   * consolidating at once what is waiting for its batching window.
   */
  async drain(filter: { tenantId?: string; gameId?: string } = {}): Promise<RunResult[]> {
    const all: RunResult[] = [];
    for (;;) {
      const round = await this.runOnce({ ...filter, flush: true });
      if (round.length === 0) return all;
      all.push(...round);
    }
  }

  private async run(job: Job): Promise<RunResult> {
    const handler = this.options.handlers[job.kind];
    const leaseMs = this.options.leaseMs ?? 60_000;
    const renew = setInterval(() => {
      void asWorker(this.db, (tx) =>
        tx.query(
          `UPDATE memory.jobs SET locked_until = $3::timestamptz + make_interval(secs => $4::double precision / 1000)
            WHERE id = $1 AND locked_by = $2 AND state = 'running'`,
          [job.id, this.id, this.now(), leaseMs],
        ),
      ).catch(() => {});
    }, Math.max(1000, leaseMs / 3));
    try {
      if (!handler) throw new Error(`no handler for jobs of kind ${job.kind}`);
      await handler(job);
      clearInterval(renew);
      await completeJob(this.db, job, this.id, this.now());
      return { job, outcome: 'done' };
    } catch (error) {
      clearInterval(renew);
      const delay = this.options.backoffMs?.(job.attempts);
      const outcome = await failJob(this.db, job, this.id, error, this.now(), delay);
      this.options.logger?.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, outcome, err: { code: (error as { code?: string }).code, name: (error as Error).name } }, 'job failed');
      return { job, outcome };
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * Polls in the background until `stop()`, keeping up to `concurrency` jobs running: a job that
   * finishes makes room for the next at once, and an idle worker asks the queue once per `pollMs`
   * however many jobs it may run (one poll, not one per slot).
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const slots = this.options.concurrency ?? 1;
    this.loop = (async () => {
      const inFlight = new Set<Promise<unknown>>();
      while (this.running) {
        let claimed = 0;
        if (inFlight.size < slots) {
          try {
            const jobs = await this.claim(slots - inFlight.size);
            claimed = jobs.length;
            for (const job of jobs) {
              const running: Promise<unknown> = this.run(job).finally(() => {
                inFlight.delete(running);
                this.wake?.(); // a slot is free
              });
              inFlight.add(running);
            }
          } catch (error) {
            this.options.logger?.error({ err: { name: (error as Error).name, code: (error as { code?: string }).code } }, 'job queue poll failed');
          }
        }
        // Full, or nothing due: wait until a job finishes or it is time to poll again.
        if ((claimed === 0 || inFlight.size >= slots) && this.running) {
          await new Promise<void>((resolve) => {
            // (Full: only a finished job or `stop()` wakes it.)
            const timer = inFlight.size >= slots ? undefined : setTimeout(() => this.wake?.(), this.options.pollMs ?? 250);
            this.wake = () => {
              clearTimeout(timer);
              this.wake = undefined;
              resolve();
            };
          });
        }
      }
      await Promise.all(inFlight);
    })();
  }

  /** Stops polling and waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
