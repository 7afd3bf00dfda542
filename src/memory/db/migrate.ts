import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './types.js';
import { MemoryError } from '../errors.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

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
  return { applied };
}
