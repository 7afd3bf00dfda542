/**
 * `npm start`: the embedded default. One process, PGlite on local disk, the deterministic local
 * embedder, the memory service on its own port. (DATABASE_URL switches to native PostgreSQL.)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from './config.js';
import { openMemorySystem } from './memory/system.js';
import { createTenant } from './memory/credentials.js';
import type { Database } from './memory/db/types.js';

const config = loadConfig();
const logger = pino({ level: config.logLevel });
await mkdir(config.dataDir, { recursive: true });

const memory = await openMemorySystem({
  databaseUrl: config.databaseUrl,
  pgliteDir: config.databaseUrl ? undefined : path.join(config.dataDir, 'pglite'),
  keyringDir: config.keyringDir,
  embeddings: config.embeddings,
  logger,
});
const tenant = await localTenant(memory.db, path.join(config.dataDir, 'local-tenant.json'));
const url = await memory.app.listen({ host: config.host, port: config.memoryPort });

console.log(`
Memory service (MemoryEndpoints) on ${url}   [${memory.db.backend}, embedder ${memory.embedder.id}]
  health:   ${url}/health
  OpenAPI:  ${url}/openapi.json
  tenant "${tenant.name}" keys: ${tenant.file}
`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void memory.close().then(() => process.exit(0));
  });
}

/** The embedded default's own tenant, created on first start; its keys are kept in the data dir. */
async function localTenant(db: Database, file: string): Promise<{ name: string; file: string }> {
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as { name: string };
    return { name: saved.name, file };
  } catch {
    const name = `local-studio-${Date.now().toString(36)}`;
    const keys = await createTenant(db, name);
    await writeFile(file, JSON.stringify({ name, ...keys }, null, 2), { mode: 0o600 });
    return { name, file };
  }
}
