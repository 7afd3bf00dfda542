/**
 * The outbox: every call the engine makes to the memory service is accepted here synchronously
 * (play never waits for the memory service), recorded in a store, and delivered in the background.
 *
 * Guarantees, per game:
 * - Order: calls of one room leave in the engine's order (one lane per room, one call in flight
 *   per lane). Game-wide calls are barriers: `registerSecrets` goes before any call of the game,
 *   `endGame` after every call accepted before it. Rooms do not wait for each other.
 * - Once: ingest batches carry an idempotency key fixed (and stored) before the first attempt, so a
 *   retry after a timeout, or after an engine restart with the database store, is stored once by
 *   the memory service's idempotent ingest. Flushes, secrets and end are idempotent by nature.
 * - Durable first: with a store that keeps calls asynchronously, a call is not sent before its
 *   record is kept, so the memory service never holds what a restarted engine would not know of.
 * - Retries: a retryable failure (network error, timeout, 408/425/429/5xx) is retried for as long
 *   as it takes, with exponential backoff and jitter; the lane waits, so nothing overtakes it.
 *   A non-retryable refusal (e.g. 400 UNKNOWN_FIELD) is reported, set aside as a dead letter, and
 *   the lane moves on. If a game's secrets are refused, the game's later calls are dead letters
 *   too (SECRETS_NOT_REGISTERED): without its secrets the clue firewall could not hold.
 * - Backlogs coalesce: consecutive queued messages of a room go out as one batch (up to the
 *   boundary's batch limit), so a memory service coming back is not sent one request per line.
 */
import { randomBytes } from 'node:crypto';
import { MAX_EVENTS_PER_BATCH } from '../../boundary/events.js';
import { isRetryable, MemoryPortError, type MemoryPort } from '../memory-port.js';
import { within } from '../within.js';
import type { GameId, RoomId } from '../types.js';
import { MemoryOutboxStore, type OutboxCall, type OutboxCallName, type OutboxEntry, type OutboxSnapshot, type OutboxStore, type SealedBatch } from './store.js';

export interface OutboundFailure {
  readonly name: OutboxCallName;
  readonly gameId: GameId;
  readonly roomId?: RoomId;
  /** 1 for the first failed attempt of this call. */
  readonly attempt: number;
  /** false: the call is a dead letter and will not be sent again. */
  readonly willRetry: boolean;
}

export type OutboundErrorHandler = (error: unknown, failure: OutboundFailure) => void;

export interface RetryPolicy {
  /** Delay after the first failure (Default: 200 ms). */
  initialDelayMs?: number;
  /** Longest delay between attempts (Default: 30 s). */
  maxDelayMs?: number;
}

export interface OutboxOptions {
  /** (Default: in process only, `MemoryOutboxStore`) */
  store?: OutboxStore;
  retry?: RetryPolicy;
  /** Calls in flight at once, across all games (Default: 32). */
  maxConcurrent?: number;
  /** Most events in one ingest batch (Default and upper bound: the boundary's 500). */
  maxEventsPerBatch?: number;
  /** Told about every failed attempt (Default: dead letters and first failures to stderr). */
  onError?: OutboundErrorHandler;
  /** Jitter source, [0, 1) (Default: Math.random). */
  random?: () => number;
  /** Past this many undelivered calls the outbox is full: `accepting` turns false (Default: 100000). */
  maxPending?: number;
}

export interface DeadLetter {
  readonly entries: readonly OutboxEntry[];
  readonly code: string;
  readonly message: string;
  readonly atMs: number;
}

export interface OutboxStats {
  /** Calls accepted and not yet delivered or set aside. */
  readonly pending: number;
  readonly inFlight: number;
  /** Lanes waiting to retry after a failure. */
  readonly retrying: number;
  readonly delivered: number;
  readonly deadLetters: number;
  /** Age of the oldest pending call (0 when none). */
  readonly oldestPendingMs: number;
}

interface Lane {
  readonly game: GameQueues;
  /** undefined: the game-wide lane (barriers). */
  readonly roomId: RoomId | undefined;
  readonly queue: OutboxEntry[];
  sealed?: SealedBatch;
  /** After a refused batch of several calls: send calls up to this id one by one, to find the bad one. */
  soloThrough?: number;
  busy: boolean;
  attempt: number;
  timer?: NodeJS.Timeout;
}

interface GameQueues {
  readonly gameId: GameId;
  /** Pending entries of the game, in id order (Map keeps insertion order; ids only grow). */
  readonly pending: Map<number, OutboxEntry>;
  readonly barrier: Lane;
  readonly rooms: Map<RoomId, Lane>;
  /** Set once the game's secrets were refused: everything after is a dead letter. */
  refused?: MemoryPortError;
}

const MAX_DEAD_LETTERS_KEPT = 1000;

const defaultOnError: OutboundErrorHandler = (error, f) => {
  if (!f.willRetry) console.error(`Memory service refused ${f.name} for game ${f.gameId}; set aside as a dead letter.`, error);
  else if (f.attempt === 1) console.error(`Memory service call ${f.name} for game ${f.gameId} failed; retrying until it succeeds.`, error);
};

export class Outbox {
  readonly #port: MemoryPort;
  readonly #store: OutboxStore;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxConcurrent: number;
  readonly #maxEvents: number;
  readonly #onError: OutboundErrorHandler;
  readonly #random: () => number;
  readonly #maxPending: number;

  readonly #games = new Map<GameId, GameQueues>();
  /** Every pending entry, in id order: the first key is the oldest. */
  readonly #pending = new Map<number, OutboxEntry>();
  /** Accepted, but the store has not kept them yet: not sent until it has. */
  readonly #unkept = new Set<number>();
  readonly #ready: Lane[] = [];
  readonly #idleWaiters: { upTo: number; gameId?: GameId; resolve: () => void }[] = [];
  readonly #dead: DeadLetter[] = [];
  #deadCount = 0;
  #delivered = 0;
  #nextId = 1;
  #inFlight = 0;
  #retrying = 0;
  #closed = false;

  constructor(port: MemoryPort, options: OutboxOptions = {}) {
    this.#port = port;
    this.#store = options.store ?? new MemoryOutboxStore();
    this.#initialDelayMs = options.retry?.initialDelayMs ?? 200;
    this.#maxDelayMs = options.retry?.maxDelayMs ?? 30_000;
    this.#maxConcurrent = options.maxConcurrent ?? 32;
    this.#maxEvents = Math.min(options.maxEventsPerBatch ?? MAX_EVENTS_PER_BATCH, MAX_EVENTS_PER_BATCH);
    this.#onError = options.onError ?? defaultOnError;
    this.#random = options.random ?? Math.random;
    this.#maxPending = options.maxPending ?? 100_000;
  }

  /**
   * False once `maxPending` calls wait (the memory service far behind or away): the engine then
   * refuses new lines rather than hold an unbounded backlog. Calls are still accepted if made.
   */
  get accepting(): boolean {
    return this.#pending.size < this.#maxPending;
  }

  /** Takes back what a previous process left undelivered (from its store), before anything new. */
  restore(snapshot: OutboxSnapshot): void {
    if (this.#nextId !== 1) throw new Error('An outbox is restored before it accepts its first call.');
    for (const entry of snapshot.pending) {
      this.#nextId = Math.max(this.#nextId, entry.id + 1);
      this.#admit(entry);
    }
    for (const batch of snapshot.sealed) {
      const first = this.#pending.get(batch.ids[0]!);
      if (first && batch.ids.every((id) => this.#pending.has(id))) this.#laneOf(first).sealed = batch;
    }
    for (const game of this.#games.values()) this.#pump(game);
  }

  // ---- accepting calls (synchronous, never throw for the memory service's sake) ----------------

  registerSecrets(call: Extract<OutboxCall, { name: 'registerSecrets' }>['request']): void {
    this.#accept(call.gameId, undefined, { name: 'registerSecrets', request: call });
  }

  ingest(gameId: GameId, roomId: RoomId, events: Extract<OutboxCall, { name: 'ingest' }>['events']): void {
    if (events.length === 0) return;
    // A message heard by more NPCs than one batch holds is split; the order is kept by the lane.
    for (let i = 0; i < events.length; i += this.#maxEvents) {
      this.#accept(gameId, roomId, { name: 'ingest', events: events.slice(i, i + this.#maxEvents) });
    }
  }

  flushWorkingMemory(call: Extract<OutboxCall, { name: 'flushWorkingMemory' }>['request']): void {
    this.#accept(call.gameId, call.roomId, { name: 'flushWorkingMemory', request: call });
  }

  endGame(gameId: GameId): void {
    this.#accept(gameId, undefined, { name: 'endGame', request: { gameId } });
  }

  /**
   * Ends a game ahead of its queues: the memory service is told at once, not after the calls
   * still waiting in the game's lanes, so it closes the game's memory now; resolves true once it
   * confirms within `timeoutMs`. The barrier call is accepted too (end is idempotent), so the end
   * is retried like any call if this attempt fails. Lines still queued for the game then meet an
   * ended game and are refused (GAME_ENDED): what was said in the last moments is not kept.
   */
  endNow(gameId: GameId, timeoutMs: number): Promise<boolean> {
    this.endGame(gameId);
    return within(this.#port.endGame({ gameId }), timeoutMs);
  }

  // ---- observing ------------------------------------------------------------------------------

  /** Resolves once every call accepted so far (of `gameId`, when given) is delivered or set aside. */
  idle(gameId?: GameId): Promise<void> {
    const upTo = this.#nextId - 1;
    if (this.#settledUpTo(upTo, gameId)) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push({ upTo, gameId, resolve }));
  }

  stats(): OutboxStats {
    const oldest = this.#pending.values().next().value;
    return {
      pending: this.#pending.size,
      inFlight: this.#inFlight,
      retrying: this.#retrying,
      delivered: this.#delivered,
      deadLetters: this.#deadCount,
      oldestPendingMs: oldest ? Math.max(0, Date.now() - oldest.enqueuedAtMs) : 0,
    };
  }

  /** The most recent dead letters (at most 1000), oldest first. */
  deadLetters(): readonly DeadLetter[] {
    return this.#dead;
  }

  /** Stops retry timers. Calls in flight finish, but nothing new starts. */
  close(): void {
    this.#closed = true;
    for (const game of this.#games.values()) {
      for (const lane of [game.barrier, ...game.rooms.values()]) if (lane.timer) clearTimeout(lane.timer);
    }
  }

  // ---- internals ------------------------------------------------------------------------------

  #accept(gameId: GameId, roomId: RoomId | undefined, call: OutboxCall): void {
    if (this.#closed) throw new Error('The outbox is closed.');
    const entry: OutboxEntry = { id: this.#nextId++, gameId, ...(roomId !== undefined ? { roomId } : {}), call, enqueuedAtMs: Date.now() };
    const kept = this.#store.append({ t: 'put', entry });
    const game = this.#admit(entry);
    if (kept) {
      this.#unkept.add(entry.id);
      void kept.then(() => {
        this.#unkept.delete(entry.id);
        // After every call kept by the same commit is marked (their callbacks are queued ahead), so they leave as one batch.
        queueMicrotask(() => this.#pump(game));
      });
    }
    this.#pump(game);
  }

  #admit(entry: OutboxEntry): GameQueues {
    let game = this.#games.get(entry.gameId);
    if (!game) {
      const g: GameQueues = { gameId: entry.gameId, pending: new Map(), barrier: undefined as unknown as Lane, rooms: new Map() };
      (g as { barrier: Lane }).barrier = { game: g, roomId: undefined, queue: [], busy: false, attempt: 0 };
      game = g;
      this.#games.set(entry.gameId, game);
    }
    game.pending.set(entry.id, entry);
    this.#pending.set(entry.id, entry);
    this.#laneOf(entry).queue.push(entry);
    return game;
  }

  #laneOf(entry: OutboxEntry): Lane {
    const game = this.#games.get(entry.gameId)!;
    if (entry.roomId === undefined) return game.barrier;
    let lane = game.rooms.get(entry.roomId);
    if (!lane) {
      lane = { game, roomId: entry.roomId, queue: [], busy: false, attempt: 0 };
      game.rooms.set(entry.roomId, lane);
    }
    return lane;
  }

  /** Marks every lane of the game whose head may leave now as ready, then dispatches. */
  #pump(game: GameQueues): void {
    if (this.#closed) return;
    const oldest = game.pending.keys().next().value;
    const barrierHead = game.barrier.queue[0];
    // A barrier leaves once everything of its game accepted before it has settled.
    if (barrierHead && barrierHead.id === oldest && !this.#unkept.has(barrierHead.id)) this.#markReady(game.barrier);
    for (const lane of game.rooms.values()) {
      const head = lane.queue[0];
      // A room's call waits for every earlier barrier of its game (secrets first, end last).
      if (head && !this.#unkept.has(head.id) && (!barrierHead || head.id < barrierHead.id)) this.#markReady(lane);
    }
    this.#dispatch();
  }

  #markReady(lane: Lane): void {
    if (lane.busy || lane.timer) return;
    lane.busy = true;
    this.#ready.push(lane);
  }

  #dispatch(): void {
    while (!this.#closed && this.#inFlight < this.#maxConcurrent && this.#ready.length > 0) {
      const lane = this.#ready.shift()!;
      this.#inFlight += 1;
      void this.#send(lane).finally(() => {
        this.#inFlight -= 1;
        this.#dispatch();
      });
    }
  }

  async #send(lane: Lane): Promise<void> {
    const { game } = lane;
    const { entries, sealing } = this.#batchOf(lane);
    const head = entries[0]!;
    if (game.refused && head.call.name !== 'registerSecrets') {
      this.#setAside(lane, entries, secretsNotRegistered(game.refused));
      return;
    }
    try {
      // A batch's key is kept before the batch is first sent (the store never rejects; it retries).
      await sealing;
      await this.#deliver(head.call, entries, lane.sealed);
    } catch (error) {
      if (this.#closed) return;
      const where = { name: head.call.name, gameId: game.gameId, ...(lane.roomId !== undefined ? { roomId: lane.roomId } : {}) };
      lane.attempt += 1;
      if (isRetryable(error)) {
        this.#report(error, { ...where, attempt: lane.attempt, willRetry: true });
        this.#retryLater(lane);
        return;
      }
      if (entries.length > 1) {
        // The service stored nothing of a refused batch; resend its calls one by one under new
        // keys, so that one bad call does not take the good ones with it.
        lane.soloThrough = entries.at(-1)!.id;
        delete lane.sealed;
        lane.busy = false;
        this.#pump(game);
        return;
      }
      this.#report(error, { ...where, attempt: lane.attempt, willRetry: false });
      const refusal = error instanceof MemoryPortError ? error : new MemoryPortError('REFUSED', String(error), false, { cause: error });
      // Marked before anything else can leave: settling the secrets lets the game's lanes move.
      if (head.call.name === 'registerSecrets') game.refused = refusal;
      this.#setAside(lane, entries, refusal);
      if (head.call.name === 'registerSecrets') this.#refuseGame(game, refusal);
      return;
    }
    if (this.#closed) return;
    this.#delivered += entries.length;
    this.#settle(lane, entries);
  }

  /** The lane's next call: its sealed batch, or a new one (sealed, and stored before sending). */
  #batchOf(lane: Lane): { entries: OutboxEntry[]; sealing?: void | Promise<void> } {
    if (lane.sealed) return { entries: lane.sealed.ids.map((id) => this.#pending.get(id)!) };
    const head = lane.queue[0]!;
    if (head.call.name !== 'ingest' || (lane.soloThrough !== undefined && head.id <= lane.soloThrough)) {
      return { entries: [head], ...(head.call.name === 'ingest' ? { sealing: this.#seal(lane, [head]) } : {}) };
    }
    const barrierHead = lane.game.barrier.queue[0];
    const batch: OutboxEntry[] = [];
    let events = 0;
    for (const entry of lane.queue) {
      if (entry.call.name !== 'ingest' || (barrierHead && entry.id > barrierHead.id) || this.#unkept.has(entry.id)) break;
      if (batch.length > 0 && events + entry.call.events.length > this.#maxEvents) break;
      batch.push(entry);
      events += entry.call.events.length;
    }
    return { entries: batch, sealing: this.#seal(lane, batch) };
  }

  #seal(lane: Lane, batch: readonly OutboxEntry[]): void | Promise<void> {
    lane.sealed = { ids: batch.map((e) => e.id), idempotencyKey: `ob-${randomBytes(16).toString('base64url')}` };
    return this.#store.append({ t: 'seal', batch: lane.sealed });
  }

  async #deliver(call: OutboxCall, entries: readonly OutboxEntry[], sealed: SealedBatch | undefined): Promise<void> {
    switch (call.name) {
      case 'ingest':
        return this.#port.ingest({
          idempotencyKey: sealed!.idempotencyKey,
          events: entries.flatMap((e) => (e.call.name === 'ingest' ? e.call.events : [])),
        });
      case 'flushWorkingMemory':
        return this.#port.flushWorkingMemory(call.request);
      case 'registerSecrets':
        return this.#port.registerSecrets(call.request);
      case 'endGame':
        return this.#port.endGame(call.request);
    }
  }

  #retryLater(lane: Lane): void {
    const exp = Math.min(this.#maxDelayMs, this.#initialDelayMs * 2 ** Math.min(lane.attempt - 1, 30));
    // "Equal jitter": at least half the delay, so lanes that failed together spread out.
    const delay = exp / 2 + (exp / 2) * this.#random();
    this.#retrying += 1;
    lane.timer = setTimeout(() => {
      this.#retrying -= 1;
      delete lane.timer;
      lane.busy = false;
      this.#pump(lane.game);
    }, delay);
    lane.timer.unref();
  }

  #setAside(lane: Lane, entries: readonly OutboxEntry[], error: MemoryPortError): void {
    this.#deadCount += entries.length;
    this.#dead.push({ entries, code: error.code, message: error.message, atMs: Date.now() });
    if (this.#dead.length > MAX_DEAD_LETTERS_KEPT) this.#dead.shift();
    this.#settle(lane, entries);
  }

  /**
   * The game's secrets were refused: everything of the game still queued is set aside now (and
   * recorded as such, so a restarted process does not send it either), and so is anything later.
   */
  #refuseGame(game: GameQueues, refusal: MemoryPortError): void {
    const reason = secretsNotRegistered(refusal);
    for (const lane of [game.barrier, ...game.rooms.values()]) {
      // Lanes wait behind the secrets, so none is in flight; a lane waiting to retry is stopped.
      if (lane.busy || lane.queue.length === 0) continue;
      if (lane.timer) {
        clearTimeout(lane.timer);
        delete lane.timer;
        this.#retrying -= 1;
      }
      this.#setAside(lane, [...lane.queue], reason);
    }
  }

  #settle(lane: Lane, entries: readonly OutboxEntry[]): void {
    const { game } = lane;
    const ids = entries.map((e) => e.id);
    void this.#store.append({ t: 'done', ids });
    for (const id of ids) {
      game.pending.delete(id);
      this.#pending.delete(id);
    }
    lane.queue.splice(0, entries.length);
    delete lane.sealed;
    if (lane.soloThrough !== undefined && (lane.queue[0]?.id ?? Infinity) > lane.soloThrough) delete lane.soloThrough;
    lane.attempt = 0;
    lane.busy = false;
    if (lane.roomId !== undefined && lane.queue.length === 0) game.rooms.delete(lane.roomId);
    // A refused game stays known, so that nothing of it is ever sent without its secrets.
    if (game.pending.size === 0 && !game.refused) this.#games.delete(game.gameId);
    else this.#pump(game);
    this.#wakeIdleWaiters();
  }

  #settledUpTo(upTo: number, gameId?: GameId): boolean {
    // Both maps hold ids in acceptance order, so the first key is the oldest pending call.
    const pending = gameId === undefined ? this.#pending : this.#games.get(gameId)?.pending;
    const oldest = pending?.keys().next().value;
    return oldest === undefined || oldest > upTo;
  }

  #wakeIdleWaiters(): void {
    for (let i = this.#idleWaiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.#idleWaiters[i]!;
      if (this.#settledUpTo(waiter.upTo, waiter.gameId)) {
        this.#idleWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  #report(error: unknown, failure: OutboundFailure): void {
    try {
      this.#onError(error, failure);
    } catch {
      // A failing reporter must not stop delivery.
    }
  }
}

const secretsNotRegistered = (cause: MemoryPortError) =>
  new MemoryPortError(
    'SECRETS_NOT_REGISTERED',
    `Not sent: the memory service refused this game's secrets (${cause.code}), and without them the clue firewall cannot hold.`,
    false,
    { cause },
  );
