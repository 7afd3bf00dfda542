/**
 * The real memory service for engine tests: a migrated test database (PGlite, or native
 * PostgreSQL when DATABASE_URL is set), one tenant, and an HTTP app on a real port that a test can
 * stop and start again on the same port and database, as an outage would.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { MemoryHttpClient } from '../../../src/boundary/memory-client.js';
import { createTenant } from '../../../src/memory/credentials.js';
import { buildMemorySystem, type MemorySystem } from '../../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../../helpers/database.js';

export interface RunningMemoryService {
  readonly url: string;
  readonly tenant: { tenantId: string; runtimeKey: string; adminKey: string };
  /** A client holding the tenant's runtime key (short timeout, so outages are noticed fast). */
  client(timeoutMs?: number): MemoryHttpClient;
  readonly up: boolean;
  /** Closes the HTTP app: connections are refused until `start()`. The database stays. */
  stop(): Promise<void>;
  /** A new app on the same database and keyring, listening on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startMemoryService(): Promise<RunningMemoryService> {
  const database: TestDatabase = await openTestDatabase();
  const keys = await tempDir('engine-keyring');
  const tenant = await createTenant(database.db, `engine-${Math.random().toString(36).slice(2, 8)}`);
  let system: MemorySystem | undefined = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false });
  // Loaded before listening, as openMemorySystem does at start: the first ingest does not wait
  // for the model (the clients' timeouts are short).
  await system.embedder.embed(['warm up']);
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (system.app.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    tenant,
    client: (timeoutMs = 2000) => new MemoryHttpClient(url, tenant.runtimeKey, timeoutMs),
    get up() {
      return system !== undefined;
    },
    async stop() {
      await system?.app.close();
      system = undefined;
    },
    async start() {
      if (system) return;
      system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false });
      await system.app.listen({ port, host: '127.0.0.1' });
    },
    async close() {
      await system?.app.close();
      system = undefined;
      await database.drop();
      await keys.remove();
    },
  };
}

/** Starts the memory service before the file's tests and closes it (and the engine databases) after; returns a getter. */
export function memoryServiceForFile(cleanup: () => Promise<void> = async () => {}): () => RunningMemoryService {
  let service: RunningMemoryService | undefined;
  beforeAll(async () => {
    service = await startMemoryService();
  });
  afterAll(async () => {
    await service?.close();
    await cleanup();
  });
  return () => service!;
}
