/** One small interface over both backends: PGlite (embedded) and a `pg` pool (native PostgreSQL). */

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** Something that runs parameterized SQL: a connection, a pool or an open transaction. */
export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

/** An open transaction; `exec` runs a parameterless script of several statements. */
export interface Tx extends Sql {
  exec(script: string): Promise<void>;
}

export type Backend = 'pglite' | 'postgres';

/** A statement a `batch` script runs by name (`EXECUTE name(...)`); see `prepared()` in literal.ts. */
export interface PreparedStatement {
  name: string;
  text: string;
}

export interface Database extends Sql {
  readonly backend: Backend;
  /**
   * Runs `fn` in one transaction on one connection; commits if it resolves, rolls back if it
   * throws. Runtime code never calls this directly: it goes through `inScope` (scope.ts).
   *
   * `settings` are `SET LOCAL` statements the transaction opens with (its scope): on one node
   * they go in the same round trip as `BEGIN`; on Citus (see `batch`), on their own after it.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, settings?: readonly string[]): Promise<T>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Runs a parameterless script of several statements in one round trip, as one implicit
   * transaction, and returns every statement's rows. See `readInScope` (scope.ts).
   *
   * `prepare` names the statements the script EXECUTEs: each is prepared on the connection that
   * runs the script the first time that connection needs it (its own round trip, once), so
   * PostgreSQL plans the statement and its row-level security policies once per connection
   * instead of on every call. A prepared plan re-checks its role at execution and is
   * re-planned if a policy or table changes.
   *
   * `settings` are `SET LOCAL` statements the script runs under; only the script's
   * own results are returned. On one node they go in the same round trip. On Citus, which sends
   * the whole text of the query a `SET LOCAL` came in to its workers, they go first, on their own,
   * in an explicit transaction.
   */
  batch(script: string, prepare?: readonly PreparedStatement[], settings?: readonly string[]): Promise<Record<string, unknown>[][]>;
  close(): Promise<void>;
}
