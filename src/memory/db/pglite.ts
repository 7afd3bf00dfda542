import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database, QueryResult, Tx } from './types.js';

interface PGliteLike {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  exec(script: string): Promise<{ rows: Record<string, unknown>[] }[]>;
}

function wrap(conn: PGliteLike): Tx {
  return {
    async exec(script: string) {
      await conn.exec(script);
    },
    async query<R>(text: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      const result = await conn.query<R>(text, params as unknown[]);
      // PGlite reports 0 affected rows for a SELECT; callers expect the row count there.
      return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
    },
  };
}

/**
 * PGlite with pgvector: PostgreSQL compiled to WASM, in this process.
 * @param dataDir a directory to persist to, or undefined for an in-memory database (tests).
 */
export async function openPGlite(dataDir?: string): Promise<Database> {
  const pg = await PGlite.create(dataDir, { extensions: { vector } });
  const sql = wrap(pg);
  // One connection: each named statement is prepared once (concurrent first users share the promise).
  const prepared = new Map<string, Promise<unknown>>();
  const prepare = (name: string, text: string) => {
    let ready = prepared.get(name);
    if (!ready) {
      ready = pg.exec(`PREPARE ${name} AS ${text}`);
      prepared.set(name, ready);
      ready.catch(() => prepared.delete(name));
    }
    return ready;
  };
  return {
    backend: 'pglite',
    query: sql.query,
    // PGlite has one connection; its transaction() queues concurrent callers.
    transaction: (fn, settings = []) =>
      pg.transaction(async (tx) => {
        if (settings.length > 0) await tx.exec(settings.join(';\n'));
        return fn(wrap(tx));
      }),
    exec: sql.exec,
    async batch(script, statements = [], settings = []) {
      for (const { name, text } of statements) await prepare(name, text);
      const results = await pg.exec([...settings, script].join(';\n'));
      return results.slice(settings.length).map((r) => r.rows as Record<string, unknown>[]);
    },
    close: () => pg.close(),
  };
}
