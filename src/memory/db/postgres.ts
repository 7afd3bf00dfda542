import pg from 'pg';
import type { Database, PreparedStatement, QueryResult, Tx } from './types.js';
import { DatabaseUnavailableError, isConnectionError } from './unavailable.js';

// Both backends hand back plain numbers for bigint and count(*): our values stay far
// below 2^53 (second timestamps, row counts).
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

function wrap(conn: pg.Pool | pg.PoolClient): Tx {
  return {
    async exec(script: string) {
      await conn.query(script); // no parameters: the simple protocol allows several statements
    },
    async query<R>(text: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      const result = await conn.query({ text, values: params as unknown[], types });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    },
  };
}

/** The rows of each statement of a simple-protocol query (pg gives a bare result for a single one). */
function rowsOf(result: unknown): Record<string, unknown>[][] {
  const results = result as pg.QueryResult | pg.QueryResult[];
  return (Array.isArray(results) ? results : [results]).map((r) => r.rows as Record<string, unknown>[]);
}

/** Whether the database is a Citus coordinator: asked once per pool. */
function citusDetector(): (client: pg.PoolClient) => Promise<boolean> {
  let answer: Promise<boolean> | undefined;
  return (client) => {
    if (!answer) {
      answer = client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'").then((r) => r.rows.length > 0);
      answer.catch(() => (answer = undefined)); // asked again next time
    }
    return answer;
  };
}

/** A connection error as ours (503 to callers); any other error as it is. */
const classified = (error: unknown) => (isConnectionError(error) && !(error instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError({ cause: error }) : error);

/**
 * Prepares named statements on a pooled connection once: it remembers which each connection has
 * (a client object lives as long as its connection; a new connection starts with none).
 */
function preparer(): (client: pg.PoolClient, statements: readonly PreparedStatement[]) => Promise<void> {
  const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
  return async (client, statements) => {
    let names = preparedOn.get(client);
    if (!names) preparedOn.set(client, (names = new Set()));
    for (const { name, text } of statements) {
      if (names.has(name)) continue;
      await client.query(`PREPARE ${name} AS ${text}`);
      names.add(name);
    }
  };
}

/** A client checked out with its own error listener; `done` gives it back, or destroys it if it broke. */
async function checkedOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; done(error?: unknown): void }> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw classified(error);
  }
  let broken: Error | undefined;
  const onError = (error: Error) => (broken ??= error);
  client.on('error', onError);
  return {
    client,
    done(error?: unknown) {
      client.off('error', onError);
      const fatal = broken ?? (isConnectionError(error) ? (error as Error) : undefined);
      client.release(fatal);
    },
  };
}

/**
 * A `pg` pool on native PostgreSQL (15+ with pgvector).
 *
 * Connection loss (a restart, `pg_terminate_backend`, a network cut) never crashes the process:
 * idle clients are watched by the pool, and a client checked out for a transaction or a batch
 * has a listener of its own for as long as it is out. A client that failed is destroyed, not
 * returned to the pool; the caller gets a `DatabaseUnavailableError`. A batch (the read path)
 * that could not even get a connection is tried once more.
 */
export function openPostgres(connectionString: string, options: { max?: number; connectionTimeoutMillis?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000 });
  // An idle client that errors (server restart) must not crash the process; the pool drops it.
  pool.on('error', () => {});
  const sql = wrap(pool);
  const ensurePrepared = preparer();
  const citus = citusDetector();
  const checkout = () => checkedOut(pool);
  return {
    backend: 'postgres',
    async query(text, params) {
      try {
        return await sql.query(text, params);
      } catch (error) {
        throw classified(error);
      }
    },
    async transaction(fn, settings = []) {
      const { client, done } = await checkout();
      try {
        if (settings.length > 0 && !(await citus(client))) await client.query(['BEGIN', ...settings].join(';\n'));
        else {
          await client.query('BEGIN');
          if (settings.length > 0) await client.query(settings.join(';\n'));
        }
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        done();
        return result;
      } catch (error) {
        if (!isConnectionError(error)) await client.query('ROLLBACK').catch(() => {});
        done(error);
        throw classified(error);
      }
    },
    async exec(script) {
      try {
        await sql.exec(script);
      } catch (error) {
        throw classified(error);
      }
    },
    async batch(script, prepare = [], settings = []) {
      let attempt = 0;
      for (;;) {
        let out: Awaited<ReturnType<typeof checkout>>;
        try {
          out = await checkout();
        } catch (error) {
          // Nothing was sent: safe to try once more (a pool of dead connections after a restart).
          if (attempt++ === 0 && isConnectionError(error)) continue;
          throw error;
        }
        const { client, done } = out;
        try {
          await ensurePrepared(client, prepare);
          let results: Record<string, unknown>[][];
          if (settings.length > 0 && (await citus(client))) {
            await client.query('BEGIN');
            await client.query(settings.join(';\n'));
            results = rowsOf(await client.query({ text: `${script};\nCOMMIT`, types })).slice(0, -1);
          } else {
            results = rowsOf(await client.query({ text: [...settings, script].join(';\n'), types })).slice(settings.length);
          }
          done();
          return results;
        } catch (error) {
          if (!isConnectionError(error)) await client.query('ROLLBACK').catch(() => {});
          done(error);
          throw classified(error);
        }
      }
    },
    close: () => pool.end(),
  };
}
