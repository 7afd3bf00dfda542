import pg from 'pg';
import type { Database, PreparedStatement, QueryResult, Tx } from './types.js';

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

/** A `pg` pool on native PostgreSQL (15+ with pgvector). */
export function openPostgres(connectionString: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10 });
  // An idle client that errors (server restart) must not crash the process.
  pool.on('error', () => {});
  const sql = wrap(pool);
  // The named statements each pooled connection has prepared (a client object lives as long as
  // its connection; a new connection starts with none).
  const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
  const ensurePrepared = async (client: pg.PoolClient, statements: readonly PreparedStatement[]) => {
    let names = preparedOn.get(client);
    if (!names) preparedOn.set(client, (names = new Set()));
    for (const { name, text } of statements) {
      if (names.has(name)) continue;
      await client.query(`PREPARE ${name} AS ${text}`);
      names.add(name);
    }
  };
  return {
    backend: 'postgres',
    query: sql.query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    exec: sql.exec,
    async batch(script, prepare = []) {
      const client = await pool.connect();
      try {
        await ensurePrepared(client, prepare);
        // The simple protocol returns one result per statement (a bare object for a single one).
        const result = (await client.query({ text: script, types })) as unknown as pg.QueryResult | pg.QueryResult[];
        client.release();
        return (Array.isArray(result) ? result : [result]).map((r) => r.rows as Record<string, unknown>[]);
      } catch (error) {
        client.release(error as Error); // as pool.query does: a connection that failed is not reused
        throw error;
      }
    },
    close: () => pool.end(),
  };
}
