/**
 * The engine's own database: accounts and sessions (and, later, games). It is not the memory
 * service's database: the two are different parties, and nothing here is readable by the other.
 * PGlite in a directory of its own for the embedded default, native PostgreSQL with
 * `ENGINE_DATABASE_URL`. The schema is made at open (idempotent DDL, numbered by version).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { EngineError } from '../errors.js';

export interface EngineDatabase {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: R[] }>;
  close(): Promise<void>;
}

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS engine;
CREATE TABLE IF NOT EXISTS engine.accounts (
  account_id    uuid PRIMARY KEY,
  username      text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
-- A session is found by the hash of its token: the database never holds a usable token.
CREATE TABLE IF NOT EXISTS engine.sessions (
  token_hash    text PRIMARY KEY,
  session       jsonb NOT NULL,
  display_name  text NOT NULL,
  expires_at_ms bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expiry ON engine.sessions (expires_at_ms);
`;

/** Opens (and creates) the engine's database: `url` for PostgreSQL, else PGlite in `dir` (in memory without one). */
export async function openEngineDatabase(options: { url?: string; dir?: string } = {}): Promise<EngineDatabase> {
  const db = options.url ? postgres(options.url) : await pglite(options.dir);
  await db.query(SCHEMA);
  return db;
}

async function pglite(dir?: string): Promise<EngineDatabase> {
  const lite = await PGlite.create(dir);
  return {
    async query(text, params) {
      if (!params?.length) {
        const results = await lite.exec(text);
        return { rows: (results.at(-1)?.rows ?? []) as never[] };
      }
      return { rows: (await lite.query(text, params as unknown[])).rows as never[] };
    },
    close: () => lite.close(),
  };
}

function postgres(url: string): EngineDatabase {
  const pool = new pg.Pool({ connectionString: url, max: 5, connectionTimeoutMillis: 5_000 });
  // A connection the server ends while idle must not crash the process; the pool drops it.
  pool.on('error', () => {});
  return {
    async query(text, params) {
      try {
        return { rows: (await pool.query(text, params as unknown[] | undefined)).rows };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && /^(?:08|57P0|53300|E[A-Z]+)/.test(code)) {
          throw new EngineError('STORE_UNAVAILABLE', 'The engine\'s database is unavailable; nothing was changed. Try again shortly.', { cause: error });
        }
        throw error;
      }
    },
    close: () => pool.end(),
  };
}
