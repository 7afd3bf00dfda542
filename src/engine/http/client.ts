/**
 * A client of the engine's public API, for bots (scripted participants) and tests: only HTTP and
 * the stream WebSocket, nothing in-process. A web page makes the same calls with `fetch` and the
 * browser's `WebSocket`. A bot declares `controller: "script"` when it opens its session; the engine
 * keeps that to itself.
 */
import WebSocket from 'ws';
import type { ActionResult, GameId, RoomId, StreamEntry } from '../types.js';

export class EngineClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(`${code}: ${message}`);
    this.name = 'EngineClientError';
  }
}

export interface StreamItem {
  readonly cursor: number;
  readonly entry: StreamEntry;
}

export interface StreamHandle {
  /** Resolves when the server has sent everything after the cursor asked for and is live. */
  readonly ready: Promise<void>;
  /** Cursor of the last entry received (resume from it after a disconnect). */
  readonly cursor: number;
  /** Resolves when the socket closes, with the server's reason or error code. */
  /** How it closed; for an ended game, also whether its memory was closed yet. */
  readonly closed: Promise<{ code: number; reason: string; memory?: 'closed' | 'closing' }>;
  close(): void;
}

export class EngineClient {
  private constructor(
    readonly baseUrl: string,
    readonly token: string,
    readonly displayName: string,
  ) {}

  static async signUp(baseUrl: string, username: string, password: string): Promise<void> {
    await request(baseUrl, 'POST', '/v1/accounts', undefined, { username, password });
  }

  static async signIn(baseUrl: string, username: string, password: string, options: { controller?: 'human' | 'script' } = {}): Promise<EngineClient> {
    const s = await request<{ token: string; displayName: string }>(baseUrl, 'POST', '/v1/sessions', undefined, { username, password, ...options });
    return new EngineClient(baseUrl, s.token, s.displayName);
  }

  static async anonymous(baseUrl: string, options: { displayName?: string; controller?: 'human' | 'script' } = {}): Promise<EngineClient> {
    const s = await request<{ token: string; displayName: string }>(baseUrl, 'POST', '/v1/sessions/anonymous', undefined, options);
    return new EngineClient(baseUrl, s.token, s.displayName);
  }

  /** A bot: an anonymous session whose controller is a script. */
  static bot(baseUrl: string, displayName?: string): Promise<EngineClient> {
    return EngineClient.anonymous(baseUrl, { controller: 'script', ...(displayName ? { displayName } : {}) });
  }

  async createGame(definition?: unknown): Promise<GameId> {
    return (await this.#call<{ gameId: GameId }>('POST', '/v1/games', definition === undefined ? {} : { definition })).gameId;
  }

  join(gameId: GameId): Promise<{ roomId: RoomId; description: string }> {
    return this.#call('POST', `/v1/games/${encodeURIComponent(gameId)}/join`);
  }

  async leave(gameId: GameId): Promise<void> {
    await this.#call('POST', `/v1/games/${encodeURIComponent(gameId)}/leave`);
  }

  async say(gameId: GameId, text: string, target?: string): Promise<StreamEntry> {
    const body = target === undefined ? { text } : { text, target };
    return (await this.#call<{ entry: StreamEntry }>('POST', `/v1/games/${encodeURIComponent(gameId)}/say`, body)).entry;
  }

  act(gameId: GameId, action: unknown): Promise<ActionResult> {
    return this.#call('POST', `/v1/games/${encodeURIComponent(gameId)}/act`, action);
  }

  /** One page (at most 500 entries) after `after`; `more` when the next page has some. */
  feed(gameId: GameId, after = 0): Promise<{ entries: StreamItem[]; cursor: number; more: boolean }> {
    return this.#call('GET', `/v1/games/${encodeURIComponent(gameId)}/feed?after=${after}`);
  }

  async endGame(gameId: GameId): Promise<void> {
    await this.#call('POST', `/v1/games/${encodeURIComponent(gameId)}/end`);
  }

  visit(name: string | { first: string; middle: string; last: string }, gameId?: GameId): Promise<{ ok: true; npc: { npcId: string }; whereabouts: { gameId: GameId; roomId: RoomId }[] }> {
    const query = typeof name === 'string' ? { fullName: name } : name;
    return this.#call('POST', '/v1/front-desk', gameId === undefined ? query : { ...query, gameId });
  }

  async signOut(): Promise<void> {
    await this.#call('DELETE', '/v1/sessions/current');
  }

  /** Opens the stream WebSocket; `onEntry` gets every entry after `after`, in order, then live ones. */
  stream(gameId: GameId, onEntry: (item: StreamItem) => void, options: { after?: number } = {}): StreamHandle {
    const url = new URL(`/v1/games/${encodeURIComponent(gameId)}/stream`, this.baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    let cursor = options.after ?? 0;
    let lastError: string | undefined;
    let memory: 'closed' | 'closing' | undefined;
    let markReady: () => void = () => {};
    let failReady: (e: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    ready.catch(() => {}); // also reported through `closed`
    const closed = new Promise<{ code: number; reason: string; memory?: 'closed' | 'closing' }>((resolve) => {
      socket.on('close', (code, reason) => {
        const why = lastError ?? reason.toString();
        failReady(new EngineClientError(code, why || 'CLOSED', 'The stream closed before it was ready.'));
        resolve({ code, reason: why, ...(memory ? { memory } : {}) });
      });
    });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'hello', token: this.token, after: cursor })));
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as { type: string; cursor?: number; entry?: StreamEntry; code?: string; reason?: string; memory?: 'closed' | 'closing' };
      if (message.type === 'ready') markReady();
      else if (message.type === 'entry') {
        cursor = message.cursor!;
        onEntry({ cursor: message.cursor!, entry: message.entry! });
      } else if (message.type === 'error') lastError = message.code;
      else if (message.type === 'closed') {
        lastError = message.reason;
        memory = message.memory;
      }
    });
    socket.on('error', () => {}); // surfaces as close
    return {
      ready,
      get cursor() {
        return cursor;
      },
      closed,
      close: () => socket.close(1000),
    };
  }

  #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return request<T>(this.baseUrl, method, path, this.token, body);
  }
}

async function request<T>(baseUrl: string, method: string, path: string, token: string | undefined, body?: unknown): Promise<T> {
  const sendBody = body !== undefined || method === 'POST';
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(sendBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(sendBody ? { body: JSON.stringify(body ?? {}) } : {}),
  });
  if (response.status === 204) return undefined as T;
  const payload = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string; details?: unknown } };
  if (!response.ok) {
    throw new EngineClientError(response.status, payload.error?.code ?? 'HTTP_ERROR', payload.error?.message ?? response.statusText, payload.error?.details);
  }
  return payload as T;
}
