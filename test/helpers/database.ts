import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openPGlite } from '../../src/memory/db/pglite.js';
import { openPostgres } from '../../src/memory/db/postgres.js';
import { createCitusDatabase, dropCitusDatabase, inDatabase } from '../../src/memory/db/citus-nodes.js';
import { migrate, type Migration } from '../../src/memory/db/migrate.js';
import type { Database } from '../../src/memory/db/types.js';

/**
 * The backend under test: native PostgreSQL when DATABASE_URL is set (each call gets a fresh
 * database of its own), else an in-memory PGlite. The same tests run on both.
 */
export const backend = process.env.DATABASE_URL ? 'postgres' : 'pglite';

/**
 * On Citus (`npm run test:citus`), DATABASE_URL is the coordinator and CITUS_WORKER_URLS lists the
 * workers: a fresh database is created on every node with the citus and vector extensions, and the
 * workers are registered with the coordinator in it, so that migrate() distributes its tables.
 */
export const citusWorkers = (process.env.CITUS_WORKER_URLS ?? '').split(',').filter(Boolean);
export const onCitus = citusWorkers.length > 0;

export interface TestDatabase {
  db: Database;
  /** Connection string of the fresh database (native PostgreSQL only). */
  url?: string;
  drop(): Promise<void>;
}

export async function openTestDatabase(options: { migrations?: Migration[]; migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  let result: TestDatabase;
  if (!adminUrl) {
    const db = await openPGlite();
    result = { db, drop: () => db.close() };
  } else {
    const name = `memory_test_${randomBytes(6).toString('hex')}`;
    let url: string;
    if (onCitus) {
      url = await createCitusDatabase(adminUrl, citusWorkers, name);
    } else {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      url = inDatabase(adminUrl, name);
    }
    const db = openPostgres(url);
    result = {
      db,
      url,
      async drop() {
        await db.close();
        if (onCitus) return dropCitusDatabase(adminUrl, citusWorkers, name);
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  if (options.migrate !== false) await migrate(result.db, options.migrations);
  return result;
}

export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
