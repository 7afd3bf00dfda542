import { startEphemeralSystem, type RunningSystem } from '../../src/system.js';
import { openTestDatabase } from '../helpers/database.js';

/**
 * The whole system as `npm start` runs it (memory service, registry, engine with the NPC runtime,
 * each on its own port), on a fresh in-memory PGlite or a fresh native database.
 */
export async function startTestSystem(): Promise<{ system: RunningSystem; stop(): Promise<void> }> {
  const database = process.env.DATABASE_URL ? await openTestDatabase({ migrate: false }) : undefined;
  const { system, stop } = await startEphemeralSystem({ databaseUrl: database?.url });
  return {
    system,
    async stop() {
      await stop();
      await database?.drop();
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
