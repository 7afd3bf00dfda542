import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startSystem, type RunningSystem } from '../../src/system.js';

/**
 * The whole system as `npm start` runs it (memory service, registry, engine with the NPC runtime,
 * each on its own port), on a fresh in-memory PGlite or a fresh native database.
 */
export async function startTestSystem(): Promise<{ system: RunningSystem; stop(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'system-'));
  const { openTestDatabase } = await import('../helpers/database.js');
  const database = process.env.DATABASE_URL ? await openTestDatabase({ migrate: false }) : undefined;
  const system = await startSystem({
    ...loadConfig({}),
    databaseUrl: database?.url,
    dataDir: dir,
    keyringDir: path.join(dir, 'keys'),
    inMemory: true,
    host: '127.0.0.1',
    memoryPort: 0,
    registryPort: 0,
    enginePort: 0,
    logger: false,
  });
  return {
    system,
    async stop() {
      await system.close();
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `probe` until it returns a value that is not undefined (or times out). */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
