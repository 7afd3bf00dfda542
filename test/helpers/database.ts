import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openPGlite } from '../../src/memory/db/pglite.js';
import { openPostgres } from '../../src/memory/db/postgres.js';
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

async function onNode(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

function inDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function createCitusDatabase(coordinatorUrl: string, name: string): Promise<void> {
  for (const worker of citusWorkers) {
    await onNode(worker, `CREATE DATABASE ${name}`);
    await onNode(inDatabase(worker, name), 'CREATE EXTENSION citus', 'CREATE EXTENSION vector');
  }
  const coordinator = new URL(coordinatorUrl);
  await onNode(
    inDatabase(coordinatorUrl, name),
    'CREATE EXTENSION citus',
    'CREATE EXTENSION vector',
    `SELECT citus_set_coordinator_host('${coordinator.hostname}', ${Number(coordinator.port)})`,
    ...citusWorkers.map((w) => `SELECT citus_add_node('${new URL(w).hostname}', ${Number(new URL(w).port)})`),
  );
}

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
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    if (onCitus) await createCitusDatabase(adminUrl, name);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const db = openPostgres(url.toString());
    result = {
      db,
      url: url.toString(),
      async drop() {
        await db.close();
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
        for (const worker of citusWorkers) await onNode(worker, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
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
