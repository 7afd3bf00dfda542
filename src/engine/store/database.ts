/**
 * The engine's own database: accounts, sessions, games (definition and the log of what was done
 * in them) and the outbox of calls to the memory service. It is not the memory
 * service's database: the two are different parties, and nothing here is readable by the other.
 * PGlite in a directory of its own for the embedded default, native PostgreSQL with
 * `ENGINE_DATABASE_URL`. The schema is made at open (idempotent DDL, numbered by version).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { EngineError } from '../errors.js';

export interface Statement {
  readonly text: string;
  readonly params?: readonly unknown[];
}

export interface EngineDatabase {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: R[] }>;
  /** Runs the statements in one transaction: all of them are kept, or none. */
  transaction(statements: readonly Statement[]): Promise<void>;
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
-- A game is its definition, its roster as the registry gave it, and the log of every command
-- accepted in it (replayed at start): the log is the game's state.
CREATE TABLE IF NOT EXISTS engine.games (
  game_id       text PRIMARY KEY,
  definition    jsonb NOT NULL,
  roster        jsonb NOT NULL,
  creator       text,
  created_at_ms bigint NOT NULL,
  ended_at_ms   bigint
);
CREATE TABLE IF NOT EXISTS engine.game_log (
  game_id  text NOT NULL REFERENCES engine.games ON DELETE CASCADE,
  n        integer NOT NULL,
  at_ms    bigint NOT NULL,
  command  jsonb NOT NULL,
  PRIMARY KEY (game_id, n)
);
-- The transactional outbox: a call to the memory service is written in the same transaction as
-- the command that caused it, and deleted once delivered (or set aside).
CREATE TABLE IF NOT EXISTS engine.outbox (
  id             bigint PRIMARY KEY,
  game_id        text NOT NULL,
  room_id        text,
  call           jsonb NOT NULL,
  enqueued_at_ms bigint NOT NULL,
  -- The idempotency key of the batch this call was sent in, fixed before the first attempt.
  sealed_key     text
);
-- Calls kept before the engine spoke the boundary's words ("room-empty", "item-location").
UPDATE engine.outbox SET call = jsonb_set(call, '{request,reason}', to_jsonb(replace(call #>> '{request,reason}', '-', '_')))
  WHERE call->>'name' = 'flushWorkingMemory' AND call #>> '{request,reason}' LIKE '%-%';
UPDATE engine.outbox SET call = jsonb_set(call, '{request,secrets}', (
    SELECT jsonb_agg(jsonb_set(s, '{kind}', to_jsonb(replace(s->>'kind', '-', '_'))) ORDER BY i)
    FROM jsonb_array_elements(call #> '{request,secrets}') WITH ORDINALITY AS e(s, i)))
  WHERE call->>'name' = 'registerSecrets' AND call #>> '{request,secrets}' LIKE '%item-location%';
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
    async transaction(statements) {
      await lite.transaction(async (tx) => {
        for (const s of statements) await tx.query(s.text, (s.params ?? []) as unknown[]);
      });
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
        throw unavailable(error);
      }
    },
    async transaction(statements) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw unavailable(error);
      }
      // A checked-out client whose connection breaks emits 'error'; without a listener that is fatal.
      const onError = () => {};
      client.on('error', onError);
      let broken: unknown;
      try {
        await client.query('BEGIN');
        for (const s of statements) await client.query(s.text, s.params as unknown[] | undefined);
        await client.query('COMMIT');
      } catch (error) {
        broken = error;
        await client.query('ROLLBACK').catch(() => {});
        throw unavailable(error);
      } finally {
        client.off('error', onError);
        // After a failure the connection's state is unknown: it is closed, not reused.
        client.release(broken !== undefined);
      }
    },
    close: () => pool.end(),
  };
}

const isConnectionError = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(?:08|57P0|53300|E[A-Z]+)/.test(code);
};

function unavailable(error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  return new EngineError('STORE_UNAVAILABLE', 'The engine\'s database is unavailable; nothing was changed. Try again shortly.', { cause: error });
}
