import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Database } from './db/types.js';
import { openPGlite } from './db/pglite.js';
import { openPostgres } from './db/postgres.js';
import { migrate } from './db/migrate.js';
import { LocalKeyring, type Keyring } from './crypto/keyring.js';
import type { Embedder } from './embeddings/types.js';
import { OpenAIEmbedder } from './embeddings/openai.js';
import { SentenceEncoderEmbedder } from './embeddings/sentence-encoder.js';
import { MemoryService } from './service.js';
import { Credentials } from './credentials.js';
import { buildMemoryApp } from './http/app.js';
import { adminServices, type AdminServices } from './admin/services.js';
import path from 'node:path';
import { Consolidator } from './consolidation/consolidator.js';
import { LlmExtractor, type LlmExtractorConfig } from './consolidation/extract/llm.js';
import { enqueue } from './jobs/queue.js';
import { Worker } from './jobs/worker.js';
import { Lifecycle } from './lifecycle/lifecycle.js';
import { asWorker, type Clock } from './roles.js';
import { closeWithin } from '../boundary/close.js';

export interface MemoryConfig {
  /** Native PostgreSQL connection string; when absent the embedded PGlite is used. */
  databaseUrl?: string;
  /** PGlite data directory; undefined keeps the database in memory. */
  pgliteDir?: string;
  /** Directory of the local keyring (key-encryption keys, outside the database). */
  keyringDir: string;
  /** OpenAI-compatible embeddings; when absent `embedder`, else the local sentence encoder (USE-Lite, shared per process). */
  embeddings?: { baseUrl: string; model: string; apiKey?: string; similarityThreshold?: number };
  /** An embedder to use when `embeddings` is absent (e.g. `new LocalHashEmbedder()` in tests and benchmarks). */
  embedder?: Embedder;
  logger?: Logger | false;
  /** Consolidation and the memory lifecycle (consolidation/, lifecycle/). */
  lifecycle?: {
    /** Consolidation jobs run at once in the background. (Default: 4 in openMemorySystem, 0 in buildMemorySystem: tests drain `jobs` themselves) */
    workers?: number;
    /**
     * Batching window of ingest-triggered consolidation, in ms: what is said within it is
     * consolidated in one run, after the window. (Default: 2000 in openMemorySystem, 0 in buildMemorySystem)
     */
    consolidationWindowMs?: number;
    /** An OpenAI-compatible chat endpoint for extraction; the rule extractor when absent. */
    llm?: LlmExtractorConfig;
    /** (Default: 30 days) */
    auditWindowMs?: number;
    /** Injectable time (tests move it across the audit window). */
    clock?: Clock;
  };
}

export interface MemorySystem {
  db: Database;
  keyring: Keyring;
  embedder: Embedder;
  service: MemoryService;
  credentials: Credentials;
  /** Ledger, consent, cloning and lineage. */
  admin: AdminServices;
  consolidator: Consolidator;
  lifecycle: Lifecycle;
  /** A queue worker that is not polling: `jobs.drain()` runs every due job now. */
  jobs: Worker;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Wires the memory service: database (migrated), keyring, embedder, service and HTTP app. */
export async function openMemorySystem(config: MemoryConfig): Promise<MemorySystem> {
  const db = config.databaseUrl ? openPostgres(config.databaseUrl) : await openPGlite(config.pgliteDir);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  const system = await buildMemorySystem(db, { ...config, lifecycle: { workers: 4, consolidationWindowMs: 2000, ...config.lifecycle } });
  // Load the sentence encoder now, in its worker, so the first turn does not wait for it (a
  // failure shows as an EmbeddingError at the first embed, which loads again).
  if (system.embedder instanceof SentenceEncoderEmbedder) system.embedder.ready().catch(() => undefined);
  return system;
}

/** The same wiring over an already-migrated database (tests, benchmarks). */
export async function buildMemorySystem(db: Database, config: Omit<MemoryConfig, 'databaseUrl' | 'pgliteDir'>): Promise<MemorySystem> {
  const keyring = new LocalKeyring(config.keyringDir);
  const embedder: Embedder = config.embeddings ? new OpenAIEmbedder(config.embeddings) : (config.embedder ?? new SentenceEncoderEmbedder());
  const service = new MemoryService(db, keyring, embedder, {
    onIntegrityFailure: (rowId) =>
      (config.logger || undefined)?.error({ rowId }, 'memory row failed authentication (altered or moved ciphertext); not shown'),
    consolidationWindowMs: config.lifecycle?.consolidationWindowMs,
  });
  const credentials = new Credentials(db, keyring);
  // Signed ledger checkpoints live beside the keyring, outside the database.
  const admin = adminServices(db, keyring, service.keys, path.join(config.keyringDir, 'audit-checkpoints'));
  const logger = config.logger || undefined;
  const clock = config.lifecycle?.clock ?? (() => new Date());
  const consolidator = new Consolidator(service, {
    extractor: config.lifecycle?.llm ? new LlmExtractor(config.lifecycle.llm) : undefined,
    clock,
    logger,
  });
  const lifecycle = new Lifecycle(db, service, keyring, {
    auditWindowMs: config.lifecycle?.auditWindowMs,
    clock,
    logger,
    consolidate: (target) => consolidator.consolidate(target),
  });
  const handlers = {
    consolidate: async (job: { tenantId: string; gameId: string; npcId: string }) => {
      await consolidator.consolidate(job);
    },
    shred: async (job: { tenantId: string; gameId: string }) => {
      const report = await lifecycle.shredGame(job.tenantId, job.gameId);
      // The window was lengthened since the job was queued: come back when it has passed.
      if (report.status === 'not_due' && report.shredAfter) {
        await asWorker(db, (tx) => enqueue(tx, { tenantId: job.tenantId, kind: 'shred', gameId: job.gameId, reason: 'audit_window' }, { runAt: new Date(report.shredAfter!), maxAttempts: 10 }));
      }
    },
  };
  const jobs = new Worker(db, { handlers, clock, logger });
  // One background worker running `workers` jobs at once: one poll of the queue while idle.
  const slots = config.lifecycle?.workers ?? 0;
  const workers = slots > 0 ? [new Worker(db, { handlers, clock, logger, concurrency: slots })] : [];
  for (const w of workers) w.start();
  const app = await buildMemoryApp({ service, credentials, admin, lifecycle, logger: config.logger });
  return {
    db,
    keyring,
    embedder,
    service,
    credentials,
    admin,
    consolidator,
    lifecycle,
    jobs,
    app,
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await closeWithin(app);
      await db.close();
    },
  };
}
