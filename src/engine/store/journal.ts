/**
 * The journal: every change the engine makes to its games reaches its database through here, by
 * group commit. What is written in one tick (a command's log row and the outbox calls it caused)
 * lands in the same transaction, with whatever else arrived while the previous commit was in
 * flight, so a line costs one transaction only under no load and a fraction of one under load.
 *
 * A record is acknowledged (its promise resolves) only once its transaction committed. A failed
 * commit is retried, with backoff, until it lands: the statements are idempotent (inserts ignore
 * rows already there), so a commit whose answer was lost is harmless to repeat. While a commit is
 * failing, or too much is waiting, `accepting` is false: the engine refuses new commands (503)
 * before changing anything, rather than pile up what it could not keep.
 */
import type { OutboxEntry, SealedBatch } from '../outbox/types.js';
import type { GameId } from '../types.js';
import type { EngineDatabase, Statement } from './database.js';

export type JournalRecord =
  | { readonly t: 'game'; readonly gameId: GameId; readonly definition: unknown; readonly roster: unknown; readonly creator?: string; readonly atMs: number }
  | { readonly t: 'log'; readonly gameId: GameId; readonly n: number; readonly atMs: number; readonly command: unknown }
  /** A game ended: its log (what was said and done in it) is deleted; its definition stays. */
  | { readonly t: 'ended'; readonly gameId: GameId; readonly atMs: number }
  | { readonly t: 'put'; readonly entry: OutboxEntry }
  | { readonly t: 'seal'; readonly batch: SealedBatch }
  | { readonly t: 'done'; readonly ids: readonly number[] };

export interface JournalOptions {
  /** Refuse new commands while this many records wait for a commit (Default: 20000). */
  maxPending?: number;
  /** Delay after the first failed commit (Default: 100 ms); doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  /** (Default: 5 s) */
  maxRetryDelayMs?: number;
  /** Told about each failed commit (Default: the first of a run to stderr). */
  onError?: (error: unknown, attempt: number) => void;
}

interface Batch {
  readonly records: JournalRecord[];
  readonly waiters: (() => void)[];
}

const newBatch = (): Batch => ({ records: [], waiters: [] });

export class Journal {
  readonly #db: EngineDatabase;
  readonly #maxPending: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly #onError: (error: unknown, attempt: number) => void;
  #open = newBatch();
  #inFlight: Batch | undefined;
  #failures = 0;
  #scheduled = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(db: EngineDatabase, options: JournalOptions = {}) {
    this.#db = db;
    this.#maxPending = options.maxPending ?? 20_000;
    this.#retryDelayMs = options.retryDelayMs ?? 100;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    this.#onError =
      options.onError ??
      ((error, attempt) => {
        if (attempt === 1) console.error('The engine\'s database refused a commit; retrying until it lands. New commands are refused meanwhile.', error);
      });
  }

  /** Resolves once the record is committed (never rejects: a failing commit is retried). */
  write(record: JournalRecord): Promise<void> {
    this.#open.records.push(record);
    const committed = new Promise<void>((resolve) => this.#open.waiters.push(resolve));
    this.#schedule();
    return committed;
  }

  /** Resolves once everything written so far is committed. */
  flushed(): Promise<void> {
    if (this.#open.records.length === 0 && !this.#inFlight) return Promise.resolve();
    const batch = this.#open.records.length > 0 ? this.#open : this.#inFlight!;
    return new Promise((resolve) => batch.waiters.push(resolve));
  }

  /** Runs `effect` once everything written so far is committed: at once when nothing waits. */
  after(effect: () => void): void {
    if (this.#open.records.length === 0 && !this.#inFlight) effect();
    else (this.#open.records.length > 0 ? this.#open : this.#inFlight!).waiters.push(effect);
  }

  /** False while commits fail or too much waits: take no new command now. */
  get accepting(): boolean {
    return this.#failures === 0 && this.pending < this.#maxPending;
  }

  /** Records not yet committed. */
  get pending(): number {
    return this.#open.records.length + (this.#inFlight?.records.length ?? 0);
  }

  /** Waits (at most `timeoutMs`) for what is written to land, then stops retrying. */
  async close(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flushed(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight || this.#closed) return;
    this.#scheduled = true;
    // Everything written in this tick joins the same transaction.
    setImmediate(() => {
      this.#scheduled = false;
      this.#commitNext();
    });
  }

  #commitNext(): void {
    if (this.#inFlight || this.#closed || this.#open.records.length === 0) return;
    this.#inFlight = this.#open;
    this.#open = newBatch();
    void this.#commit(this.#inFlight);
  }

  async #commit(batch: Batch): Promise<void> {
    try {
      await this.#db.transaction(statementsOf(batch.records));
    } catch (error) {
      this.#failures += 1;
      try {
        this.#onError(error, this.#failures);
      } catch {
        // a failing reporter must not stop the retries
      }
      if (this.#closed) return;
      const delay = Math.min(this.#maxRetryDelayMs, this.#retryDelayMs * 2 ** Math.min(this.#failures - 1, 20));
      this.#timer = setTimeout(() => void this.#commit(batch), delay);
      return;
    }
    this.#failures = 0;
    this.#inFlight = undefined;
    for (const waiter of batch.waiters) {
      try {
        waiter();
      } catch (error) {
        console.error('An effect run after a commit threw; the commit stands.', error);
      }
    }
    this.#commitNext();
  }
}

/** One statement per kind of record, in an order that lets a batch hold a call's whole life. */
function statementsOf(records: readonly JournalRecord[]): Statement[] {
  const by = <T extends JournalRecord['t']>(t: T) => records.filter((r): r is Extract<JournalRecord, { t: T }> => r.t === t);
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const statements: Statement[] = [];
  const games = by('game');
  if (games.length > 0) {
    statements.push({
      text: `INSERT INTO engine.games (game_id, definition, roster, creator, created_at_ms)
             SELECT x.game_id, x.definition, x.roster, x.creator, x.at_ms
             FROM jsonb_to_recordset($1::jsonb) AS x(game_id text, definition jsonb, roster jsonb, creator text, at_ms bigint)
             ON CONFLICT DO NOTHING`,
      params: [json(games.map((g) => ({ game_id: g.gameId, definition: g.definition, roster: g.roster, creator: g.creator ?? null, at_ms: g.atMs })))],
    });
  }
  const log = by('log');
  if (log.length > 0) {
    statements.push({
      text: `INSERT INTO engine.game_log (game_id, n, at_ms, command)
             SELECT x.game_id, x.n, x.at_ms, x.command FROM jsonb_to_recordset($1::jsonb) AS x(game_id text, n integer, at_ms bigint, command jsonb)
             ON CONFLICT DO NOTHING`,
      params: [json(log.map((l) => ({ game_id: l.gameId, n: l.n, at_ms: l.atMs, command: l.command })))],
    });
  }
  const puts = by('put');
  if (puts.length > 0) {
    statements.push({
      text: `INSERT INTO engine.outbox (id, game_id, room_id, call, enqueued_at_ms)
             SELECT x.id, x.game_id, x.room_id, x.call, x.at_ms FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, game_id text, room_id text, call jsonb, at_ms bigint)
             ON CONFLICT DO NOTHING`,
      params: [json(puts.map(({ entry: e }) => ({ id: e.id, game_id: e.gameId, room_id: e.roomId ?? null, call: e.call, at_ms: e.enqueuedAtMs })))],
    });
  }
  const seals = by('seal');
  if (seals.length > 0) {
    statements.push({
      text: `UPDATE engine.outbox o SET sealed_key = x.key FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, key text) WHERE o.id = x.id`,
      params: [json(seals.flatMap(({ batch }) => batch.ids.map((id) => ({ id, key: batch.idempotencyKey }))))],
    });
  }
  const done = by('done').flatMap((d) => d.ids);
  if (done.length > 0) statements.push({ text: 'DELETE FROM engine.outbox WHERE id = ANY($1::bigint[])', params: [done] });
  const ended = by('ended');
  if (ended.length > 0) {
    const ids = ended.map((e) => e.gameId);
    statements.push(
      {
        text: `UPDATE engine.games g SET ended_at_ms = x.at_ms FROM jsonb_to_recordset($1::jsonb) AS x(game_id text, at_ms bigint)
               WHERE g.game_id = x.game_id AND g.ended_at_ms IS NULL`,
        params: [json(ended.map((e) => ({ game_id: e.gameId, at_ms: e.atMs })))],
      },
      { text: 'DELETE FROM engine.game_log WHERE game_id = ANY($1::text[])', params: [ids] },
    );
  }
  return statements;
}
