import pg from 'pg';
import type { Database, QueryResult, Tx } from './types.js';

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
    async batch(script) {
      // The simple protocol returns one result per statement (a bare object for a single one).
      const result = (await pool.query({ text: script, types })) as unknown as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(result) ? result : [result]).map((r) => r.rows as Record<string, unknown>[]);
    },
    close: () => pool.end(),
  };
}
