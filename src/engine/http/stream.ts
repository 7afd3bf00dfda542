/**
 * The stream WebSocket: one socket per session and game, pushing that participant's feed (the
 * ordered stream of whatever room they are in) as it happens.
 *
 * Protocol (JSON text frames):
 * - client -> server, first frame within 5 s: `{ "type": "hello", "token": "<session token>", "after"?: <cursor> }`
 * - server -> client: `{ "type": "ready", "cursor": n }`, then `{ "type": "entry", "cursor": n, "entry": {...} }`
 *   for every entry after `after` (missed ones first, then live), in order, without gaps.
 * - client -> server: `{ "type": "ping" }` -> `{ "type": "pong" }`; anything else is an error.
 * - server -> client before closing: `{ "type": "error", "code", "message" }` or
 *   `{ "type": "closed", "reason": "left" | "ended" | "signed-out" }`; an ended game's also says
 *   whether the NPCs' memory of it is already closed: `"memory": "closed" | "closing"`.
 *
 * The cursor is the entry's position in the participant's own feed (from 1); reconnecting with
 * the last cursor seen resumes exactly. A socket that falls too far behind is closed (4008); the
 * client reconnects with its cursor and loses nothing.
 */
import type { WebSocket } from 'ws';
import { Compile } from 'typebox/compile';
import type { GameEngine } from '../engine.js';
import { EngineError } from '../errors.js';
import type { GameId, SessionToken, StreamEntry } from '../types.js';
import { StreamHello, StreamPing } from './schemas.js';
import { toPublicError } from './errors.js';

const helloValidator = Compile(StreamHello);
const pingValidator = Compile(StreamPing);

/** Close codes: 4000 + the HTTP status the same failure would have. */
const CLOSE_CODE = { 400: 4400, 401: 4401, 404: 4404, 409: 4409, 410: 4410, 408: 4408 } as Record<number, number>;
const SLOW_CONSUMER = 4008;

export interface StreamHubOptions {
  /** Close a socket whose unsent data passes this many bytes (Default: 1 MiB). */
  maxBufferedBytes?: number;
  /** Time allowed for the hello frame (Default: 5000 ms). */
  helloTimeoutMs?: number;
}

interface Subscriber {
  readonly token: SessionToken;
  readonly gameId: GameId;
  readonly socket: WebSocket;
  unsubscribe(): void;
}

/** An entry serialized once, however many sockets it goes to. */
const entryJson = new WeakMap<StreamEntry, string>();
const serialized = (entry: StreamEntry) => {
  let json = entryJson.get(entry);
  if (json === undefined) {
    json = JSON.stringify(entry);
    entryJson.set(entry, json);
  }
  return json;
};

export class StreamHub {
  readonly #byGame = new Map<GameId, Set<Subscriber>>();
  readonly #maxBuffered: number;
  readonly #helloTimeoutMs: number;

  constructor(
    private readonly engine: GameEngine,
    options: StreamHubOptions = {},
  ) {
    this.#maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
    this.#helloTimeoutMs = options.helloTimeoutMs ?? 5000;
  }

  /** Takes over a freshly upgraded socket for `gameId`. */
  accept(socket: WebSocket, gameId: GameId): void {
    let subscriber: Subscriber | undefined;
    const timer = setTimeout(() => fail(socket, 408, 'HELLO_TIMEOUT', 'Send { "type": "hello", "token": ... } first.'), this.#helloTimeoutMs);
    socket.on('message', (raw, isBinary) => {
      const message = isBinary ? undefined : parse(raw.toString());
      if (subscriber) {
        if (pingValidator.Check(message)) send(socket, '{"type":"pong"}');
        else fail(socket, 400, 'INVALID_REQUEST', 'After hello, only { "type": "ping" } is accepted; speak and act over HTTP.');
        return;
      }
      clearTimeout(timer);
      if (!helloValidator.Check(message)) {
        fail(socket, 400, 'INVALID_REQUEST', 'The first frame is { "type": "hello", "token": "<session token>", "after"?: <cursor> }.');
        return;
      }
      try {
        subscriber = this.#subscribe(socket, gameId, message.token, message.after ?? 0);
      } catch (error) {
        const e = toPublicError(error as Error);
        fail(socket, e.statusCode, e.code, e.message);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (subscriber) this.#drop(subscriber);
    });
    socket.on('error', () => socket.terminate());
  }

  /** The participant left the game: their sockets for it close. */
  left(token: SessionToken, gameId: GameId): void {
    for (const s of this.#byGame.get(gameId) ?? []) if (s.token === token) this.#close(s, 'left');
  }

  /** The game ended; `memory` says whether the memory service has closed the game's memory yet. */
  ended(gameId: GameId, memory: 'closed' | 'closing'): void {
    for (const s of this.#byGame.get(gameId) ?? []) this.#close(s, 'ended', { memory });
  }

  signedOut(token: SessionToken): void {
    for (const set of this.#byGame.values()) for (const s of set) if (s.token === token) this.#close(s, 'signed-out');
  }

  get sockets(): number {
    let n = 0;
    for (const set of this.#byGame.values()) n += set.size;
    return n;
  }

  #subscribe(socket: WebSocket, gameId: GameId, token: SessionToken, after: number): Subscriber {
    // Backlog and subscription in one synchronous step: no entry can fall between them.
    const feed = this.engine.feed(token, gameId);
    if (after > feed.length) throw new EngineError('INVALID_MESSAGE', `Cursor ${after} is ahead of this feed (${feed.length} entries); resume from a cursor you received.`);
    const unsubscribe = this.engine.subscribe(token, gameId, (entry, cursor) => {
      if (socket.bufferedAmount > this.#maxBuffered) {
        fail(socket, SLOW_CONSUMER, 'SLOW_CONSUMER', 'This socket fell too far behind; reconnect with your last cursor.');
        return;
      }
      send(socket, `{"type":"entry","cursor":${cursor},"entry":${serialized(entry)}}`);
    });
    const subscriber: Subscriber = { token, gameId, socket, unsubscribe };
    const set = this.#byGame.get(gameId) ?? new Set();
    set.add(subscriber);
    this.#byGame.set(gameId, set);
    send(socket, `{"type":"ready","cursor":${feed.length}}`);
    for (let i = after; i < feed.length; i += 1) send(socket, `{"type":"entry","cursor":${i + 1},"entry":${serialized(feed[i]!)}}`);
    return subscriber;
  }

  #close(s: Subscriber, reason: 'left' | 'ended' | 'signed-out', extra: { memory?: 'closed' | 'closing' } = {}): void {
    this.#drop(s);
    send(s.socket, JSON.stringify({ type: 'closed', reason, ...extra }));
    s.socket.close(1000, reason);
  }

  #drop(s: Subscriber): void {
    s.unsubscribe();
    const set = this.#byGame.get(s.gameId);
    set?.delete(s);
    if (set?.size === 0) this.#byGame.delete(s.gameId);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(socket: WebSocket, text: string): void {
  if (socket.readyState === socket.OPEN) socket.send(text);
}

function fail(socket: WebSocket, status: number, code: string, message: string): void {
  send(socket, JSON.stringify({ type: 'error', code, message }));
  socket.close(CLOSE_CODE[status] ?? (status >= 4000 ? status : 4400), code);
}
