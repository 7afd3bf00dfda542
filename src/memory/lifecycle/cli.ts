/**
 * Lifecycle commands of `npm run memory -- <command>`: the queue, shredding and erasure, run by
 * the operator (the schema owner running this tool; statements still run as the lifecycle and
 * worker roles).
 *
 * - `jobs [--state dead]`: queue depth, lag, and jobs;
 * - `jobs-retry <id>`: put a dead-lettered job back in the queue;
 * - `shred [--now <iso>] [--window-days <n>]`: queue a shred job for every ended game past its
 *   audit window, then run the due shred jobs (a cron-free safety net for the workers);
 * - `consolidate`: run every due consolidation job now;
 * - `erase --tenant <uuid> <participantId>`: erase a participant and print the receipt.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import type { Database } from '../db/types.js';
import { buildMemorySystem } from '../system.js';
import { configuredEmbedding } from '../embeddings/configured.js';
import { listJobs, queueStats, retryDeadJob, type JobState } from '../jobs/queue.js';

type WithDatabase = <T>(fn: (db: Database) => Promise<T>) => Promise<T>;

const DAY_MS = 24 * 60 * 60 * 1000;

async function withSystem<T>(db: Database, options: { now?: string; windowDays?: string }, fn: (system: Awaited<ReturnType<typeof buildMemorySystem>>) => Promise<T>): Promise<T> {
  const now = options.now ? new Date(options.now) : undefined;
  if (now && Number.isNaN(now.getTime())) throw new Error('--now must be an ISO-8601 date-time');
  const windowDays = options.windowDays === undefined ? undefined : Number(options.windowDays);
  if (windowDays !== undefined && !(windowDays >= 0)) throw new Error('--window-days must be a number of days');
  const config = loadConfig();
  const system = await buildMemorySystem(db, {
    keyringDir: config.keyringDir,
    // Consolidation writes vectors: the same embedder as the service.
    ...configuredEmbedding(config),
    logger: false,
    lifecycle: { workers: 0, clock: now ? () => now : undefined, auditWindowMs: windowDays === undefined ? undefined : windowDays * DAY_MS },
  });
  try {
    return await fn(system);
  } finally {
    await system.app.close();
  }
}

export function registerLifecycleCommands(program: Command, withDatabase: WithDatabase): void {
  program
    .command('jobs')
    .option('--state <state>', 'queued, running, done or dead')
    .description('show the job queue: depth, lag and jobs')
    .action((options: { state?: JobState }) =>
      withDatabase(async (db) => {
        console.log(JSON.stringify({ stats: await queueStats(db, new Date()), jobs: await listJobs(db, { state: options.state }) }, null, 2));
      }),
    );

  program
    .command('jobs-retry')
    .argument('<id>', 'a dead-lettered job id')
    .description('put a dead-lettered job back in the queue with fresh attempts')
    .action((id: string) =>
      withDatabase(async (db) => {
        console.log((await retryDeadJob(db, id)) ? 'queued again' : 'no dead job with that id (or one is already queued for the same work)');
      }),
    );

  program
    .command('shred')
    .option('--now <iso>', 'act as if it were this moment (Default: now)')
    .option('--window-days <n>', 'the audit window in days (Default: 30)')
    .description('destroy the keys and purge the rows of every ended game past its audit window')
    .action((options: { now?: string; windowDays?: string }) =>
      withDatabase((db) =>
        withSystem(db, options, async (system) => {
          const queued = await system.lifecycle.sweep();
          const ran = await system.jobs.drain();
          const shreds = ran.filter((r) => r.job.kind === 'shred');
          console.log(JSON.stringify({ queued, shredded: shreds.filter((r) => r.outcome === 'done').map((r) => `${r.job.tenantId}/${r.job.gameId}`), failed: shreds.filter((r) => r.outcome !== 'done').length }, null, 2));
        }),
      ),
    );

  program
    .command('consolidate')
    .description('run every due consolidation job now')
    .action(() =>
      withDatabase((db) =>
        withSystem(db, {}, async (system) => {
          const ran = await system.jobs.drain();
          console.log(JSON.stringify({ done: ran.filter((r) => r.outcome === 'done').length, failed: ran.filter((r) => r.outcome !== 'done').length }));
        }),
      ),
    );

  program
    .command('erase')
    .requiredOption('--tenant <uuid>', 'tenant id')
    .argument('<participantId>', 'the participant to erase')
    .description('erase a participant (GDPR) and print the receipt')
    .action((participantId: string, options: { tenant: string }) =>
      withDatabase((db) =>
        withSystem(db, {}, async (system) => console.log(JSON.stringify(await system.lifecycle.eraseParticipant(options.tenant, participantId, 'operator'), null, 2))),
      ),
    );
}
