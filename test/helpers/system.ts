import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startSystem, type RunningSystem } from '../../src/system.js';

/**
 * The whole system on a data directory of the test's (PGlite there, or the given native
 * databases), every service on a free port of 127.0.0.1, no logs: what a restart starts again.
 */
export function startSystemOn(dir: string, urls: { databaseUrl?: string; engineDatabaseUrl?: string } = {}): Promise<RunningSystem> {
  return startSystem({
    ...loadConfig({ EMBEDDINGS: 'hash' }),
    ...urls,
    dataDir: dir,
    keyringDir: path.join(dir, 'keys'),
    host: '127.0.0.1',
    memoryPort: 0,
    registryPort: 0,
    enginePort: 0,
    logger: false,
  });
}
