import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './types.js';
import { MemoryError } from '../errors.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const CITUS_PROFILE = fileURLToPath(new URL('./citus.sql', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Numbered, forward-only migrations: `NNNN_name.sql`, applied in order, all of a run in one transaction (`migrate`). */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file, index) => {
      const version = Number(file.slice(0, 4));
      if (version !== index + 1) throw new Error(`migration ${file} is out of sequence (expected ${index + 1})`);
      return { version, name: file.slice(5, -4), sql: await readFile(path.join(dir, file), 'utf8') };
    }),
  );
}

/**
 * Brings the database up to the code's schema. Refuses a database whose schema is newer than
 * the code (a rollback of the code must not run against a migrated database).
 * Runs as the connecting role, which must own the schema (superuser on a fresh cluster).
 */
export async function migrate(db: Database, migrations?: Migration[]): Promise<{ applied: number[] }> {
  const all = migrations ?? (await loadMigrations());
  const applied: number[] = [];
  await db.transaction(async (tx) => {
    // One migrator at a time per database, from before the bookkeeping table exists:
    // concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on a catalog unique index.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('memory_migrations'))");
    await tx.exec(`
      CREATE TABLE IF NOT EXISTS public.memory_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    await tx.query('LOCK TABLE public.memory_migrations IN EXCLUSIVE MODE');
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM public.memory_migrations ORDER BY version');
    const known = rows.map((r) => r.version);
    const newest = Math.max(0, ...known);
    const codeNewest = Math.max(0, ...all.map((m) => m.version));
    if (newest > codeNewest) {
      throw new MemoryError(
        'SCHEMA_NEWER_THAN_CODE',
        `The database schema is at version ${newest} but this code knows only up to ${codeNewest}; deploy the newer code instead of migrating down.`,
      );
    }
    for (const migration of all) {
      if (known.includes(migration.version)) continue;
      // A failing statement aborts the whole run: nothing is left half-applied.
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO public.memory_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration.version);
    }
  });
  await distribute(db);
  return { applied };
}

/**
 * On Citus (the citus extension is installed in the database), the Citus profile of the schema
 * (`citus.sql`): tables distributed by tenant, reference tables, and the policies in the form
 * Citus takes. Runs after the numbered migrations on every start, in a transaction of its own;
 * each of its steps skips what is done, so it distributes only tables that are new. Nothing
 * happens on PostgreSQL without Citus or on PGlite.
 */
export async function distribute(db: Database): Promise<boolean> {
  if (db.backend !== 'postgres') return false;
  const { rows } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'");
  if (rows.length === 0) return false;
  const profile = await readFile(CITUS_PROFILE, 'utf8');
  // One statement at a time: Citus propagates some statements to the workers as the text of the
  // query they came in, which for a script would be the whole script.
  await db.transaction(async (tx) => {
    for (const statement of statements(profile)) await tx.exec(statement);
  });
  return true;
}

/** The statements of a script whose only quoting that can hide a `;` is `$$`, as citus.sql's. */
function statements(script: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const line of script.split('\n')) {
    current += `${line}\n`;
    const quoted = (current.match(/\$\$/g) ?? []).length % 2 === 1;
    if (!quoted && /;\s*(--.*)?$/.test(line)) {
      parts.push(current);
      current = '';
    }
  }
  if (current.trim()) parts.push(current);
  return parts;
}
