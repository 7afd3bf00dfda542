import type { IngestBatch, IngestResult } from './events.js';
import type { ContextRequest, ContextWindow } from './context.js';
import type { EndGameResponse, FlushWorkingMemoryResponse, FLUSH_REASONS, SECRET_KINDS } from './lifecycle.js';

// Spelled out from the contract's constant lists: `Static` of a union built by `map` is `never`.
/** Body of PUT /v1/games/:gameId/secrets (`RegisterSecretsRequest` in lifecycle.ts). */
export interface RegisterSecretsBody {
  secrets: { kind: (typeof SECRET_KINDS)[number]; text: string }[];
}
/** Body of POST /v1/npcs/:npcId/working-memory/flush (`FlushWorkingMemoryRequest` in lifecycle.ts). */
export interface FlushWorkingMemoryBody {
  roomId: string;
  reason: (typeof FLUSH_REASONS)[number];
}

/**
 * The engine process's one client of the memory service over HTTP: the outbox's writes (through
 * `HttpMemoryPort`), the NPC runtime's context requests, the sample NPCs' personas and the QA
 * inspector's relay all go through it. It holds the tenant's runtime API key and mints
 * short-lived game tokens, so every call it makes is scoped by a credential; the admin calls
 * (personas, the inspector) carry the admin key they are given.
 *
 * Failures: an answer that is not 2xx throws `MemoryClientError` (status and the service's stable
 * code); a network failure or a timeout throws what `fetch` throws (a `TypeError`, or a
 * `DOMException` named TimeoutError). Callers decide what is worth retrying.
 */
export class MemoryHttpClient {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    /** (Default: 5000) */
    private readonly timeoutMs = 5000,
  ) {}

  /** A game token for `gameId` and the participants present, reused until a minute before expiry. */
  async gameToken(gameId: string, participantIds: readonly string[] = []): Promise<string> {
    const cacheKey = this.cacheKey(gameId, participantIds);
    const cached = this.tokens.get(cacheKey);
    if (cached && cached.expiresAt - 60 > Date.now() / 1000) return cached.token;
    const minted = await this.call<{ token: string; expiresAt: number }>('POST', '/v1/tokens', this.apiKey, {
      gameId,
      participantIds: [...participantIds],
    });
    if (this.tokens.size > 10_000) this.tokens.clear();
    this.tokens.set(cacheKey, minted);
    return minted.token;
  }

  async ingest(gameId: string, batch: IngestBatch): Promise<IngestResult> {
    return this.withGameToken(gameId, [], (token) => this.call('POST', '/v1/events', token, batch));
  }

  /** PUT /v1/games/:gameId/secrets (tenant API key): the game's secrets, before any of its events. */
  async registerSecrets(gameId: string, body: RegisterSecretsBody): Promise<{ gameId: string; registered: number }> {
    return this.call('PUT', `/v1/games/${encodeURIComponent(gameId)}/secrets`, this.apiKey, body);
  }

  /** POST /v1/games/:gameId/end (tenant API key): the game's episodic memory and clues expire now. */
  async endGame(gameId: string): Promise<EndGameResponse> {
    return this.call('POST', `/v1/games/${encodeURIComponent(gameId)}/end`, this.apiKey);
  }

  /** POST /v1/npcs/:npcId/working-memory/flush (game token): working memory to episodic, then dropped. */
  async flushWorkingMemory(gameId: string, npcId: string, body: FlushWorkingMemoryBody): Promise<FlushWorkingMemoryResponse> {
    return this.withGameToken(gameId, [], (token) =>
      this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/working-memory/flush`, token, body),
    );
  }

  async search(
    gameId: string,
    npcId: string,
    query: { text: string; k?: number; participantIds?: readonly string[] },
  ): Promise<{ memories: { id: string; tier: string; distance: number; text?: string; fact?: { key: string; value: string; summary: string } }[] }> {
    return this.withGameToken(gameId, query.participantIds ?? [], (token) =>
      this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/search`, token, { text: query.text, k: query.k ?? 10 }),
    );
  }

  /** GET /v1/npcs/:npcId/memories (game token): one tier in scope, newest first. */
  async listMemories(
    gameId: string,
    npcId: string,
    query: { tier: string; limit?: number; participantIds?: readonly string[] },
  ): Promise<{ memories: { id: string; tier: string; text?: string; participantId?: string; roomId?: string; ts?: number; createdAt: string }[] }> {
    const search = new URLSearchParams({ tier: query.tier, limit: String(query.limit ?? 50) });
    return this.withGameToken(gameId, query.participantIds ?? [], (token) =>
      this.call('GET', `/v1/npcs/${encodeURIComponent(npcId)}/memories?${search}`, token),
    );
  }

  async writeFact(gameId: string, npcId: string, fact: Record<string, unknown>, participantIds: readonly string[] = []): Promise<{ memory: { id: string } }> {
    return this.withGameToken(gameId, participantIds, (token) => this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/facts`, token, fact));
  }

  /** POST /v1/npcs/:npcId/context (game token for the participants present): the context window of a turn. */
  async context(gameId: string, npcId: string, request: ContextRequest): Promise<ContextWindow> {
    const present = request.participants.map((p) => p.participantId);
    return this.withGameToken(gameId, present, (token) => this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/context`, token, request));
  }

  /** GET /v1/npcs/:npcId/procedural (admin key): the NPC's current persona, or undefined before its first. */
  async procedural(npcId: string, adminKey: string): Promise<{ persona: string } | undefined> {
    const answer = await this.relay('GET', `/v1/npcs/${encodeURIComponent(npcId)}/procedural`, adminKey);
    if (answer.status === 404) return undefined;
    return this.answered<{ procedural: { persona: string } }>(answer).procedural;
  }

  /** PUT /v1/npcs/:npcId/procedural (admin key): a new version of the NPC's persona and directives. */
  async writeProcedural(npcId: string, adminKey: string, body: { persona: string; directives: readonly string[]; core: Record<string, string> }): Promise<void> {
    this.answered(await this.relay('PUT', `/v1/npcs/${encodeURIComponent(npcId)}/procedural`, adminKey, body));
  }

  /**
   * A call made with a credential someone else presented (the QA inspector relays an operator's
   * admin key), answered as it came: status and JSON body, never thrown for a non-2xx.
   */
  async relay(method: 'GET' | 'POST' | 'PUT', path: string, bearer: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    return { status: response.status, json: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  }

  /** Runs `fn` with a game token; a token the service no longer accepts is dropped and minted once more. */
  private async withGameToken<T>(gameId: string, participantIds: readonly string[], fn: (token: string) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.gameToken(gameId, participantIds));
    } catch (error) {
      if (!(error instanceof MemoryClientError) || error.status !== 401) throw error;
      this.tokens.delete(this.cacheKey(gameId, participantIds));
      return fn(await this.gameToken(gameId, participantIds));
    }
  }

  private cacheKey(gameId: string, participantIds: readonly string[]): string {
    return `${gameId}\0${[...participantIds].sort().join(',')}`;
  }

  private async call<T>(method: 'GET' | 'POST' | 'PUT', path: string, bearer: string, body?: unknown): Promise<T> {
    return this.answered<T>(await this.relay(method, path, bearer, body));
  }

  /** The body of a 2xx answer; any other throws `MemoryClientError` with the service's code. */
  private answered<T>({ status, json }: { status: number; json: Record<string, unknown> }): T {
    if (status < 200 || status > 299) {
      const error = (json.error ?? {}) as { code?: string; message?: string };
      throw new MemoryClientError(status, error.code ?? 'HTTP_ERROR', error.message ?? `HTTP ${status}`);
    }
    return json as T;
  }
}

export class MemoryClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'MemoryClientError';
  }
}
