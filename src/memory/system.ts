import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Database } from './db/types.js';
import { openPGlite } from './db/pglite.js';
import { openPostgres } from './db/postgres.js';
import { migrate } from './db/migrate.js';
import { LocalKeyring, type Keyring } from './crypto/keyring.js';
import type { Embedder } from './embeddings/types.js';
import { LocalHashEmbedder } from './embeddings/local.js';
import { OpenAIEmbedder } from './embeddings/openai.js';
import { MemoryService } from './service.js';
import { Credentials } from './credentials.js';
import { buildMemoryApp } from './http/app.js';
import { adminServices, type AdminServices } from './admin/services.js';
import path from 'node:path';

export interface MemoryConfig {
  /** Native PostgreSQL connection string; when absent the embedded PGlite is used. */
  databaseUrl?: string;
  /** PGlite data directory; undefined keeps the database in memory. */
  pgliteDir?: string;
  /** Directory of the local keyring (key-encryption keys, outside the database). */
  keyringDir: string;
  /** OpenAI-compatible embeddings; when absent the deterministic local embedder is used. */
  embeddings?: { baseUrl: string; model: string; apiKey?: string };
  logger?: Logger | false;
}

export interface MemorySystem {
  db: Database;
  keyring: Keyring;
  embedder: Embedder;
  service: MemoryService;
  credentials: Credentials;
  /** Ledger, consent, cloning and lineage. */
  admin: AdminServices;
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
  return assemble(db, config);
}

/** The same wiring over an already-migrated database (tests, benchmarks). */
export async function assemble(db: Database, config: Omit<MemoryConfig, 'databaseUrl' | 'pgliteDir'>): Promise<MemorySystem> {
  const keyring = new LocalKeyring(config.keyringDir);
  const embedder: Embedder = config.embeddings ? new OpenAIEmbedder(config.embeddings) : new LocalHashEmbedder();
  const service = new MemoryService(db, keyring, embedder, (rowId) =>
    (config.logger || undefined)?.error({ rowId }, 'memory row failed authentication (altered or moved ciphertext); not shown'),
  );
  const credentials = new Credentials(db, keyring);
  // Signed ledger checkpoints live beside the keyring, outside the database.
  const admin = adminServices(db, keyring, service.keys, path.join(config.keyringDir, 'audit-checkpoints'));
  const app = await buildMemoryApp({ service, credentials, admin, logger: config.logger });
  return {
    db,
    keyring,
    embedder,
    service,
    credentials,
    admin,
    app,
    async close() {
      await app.close();
      await db.close();
    },
  };
}
