import type { IngestBatch, IngestResult } from './events.js';

/**
 * The engine's client of the memory service over HTTP. It holds the tenant API key and
 * mints short-lived game tokens, so every call it makes is scoped by a credential.
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
    const cacheKey = `${gameId}\0${[...participantIds].sort().join(',')}`;
    const cached = this.tokens.get(cacheKey);
    if (cached && cached.expiresAt - 60 > Date.now() / 1000) return cached.token;
    const minted = await this.call<{ token: string; expiresAt: number }>('POST', '/v1/tokens', this.apiKey, {
      gameId,
      participantIds: [...participantIds],
    });
    this.tokens.set(cacheKey, minted);
    return minted.token;
  }

  async ingest(gameId: string, batch: IngestBatch): Promise<IngestResult> {
    return this.call('POST', '/v1/events', await this.gameToken(gameId), batch);
  }

  async search(
    gameId: string,
    npcId: string,
    query: { text: string; k?: number; participantIds?: readonly string[] },
  ): Promise<{ memories: { id: string; tier: string; distance: number; text?: string; fact?: { key: string; value: string; summary: string } }[] }> {
    const token = await this.gameToken(gameId, query.participantIds ?? []);
    return this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/search`, token, { text: query.text, k: query.k ?? 10 });
  }

  async writeFact(gameId: string, npcId: string, fact: Record<string, unknown>, participantIds: readonly string[] = []): Promise<{ memory: { id: string } }> {
    const token = await this.gameToken(gameId, participantIds);
    return this.call('POST', `/v1/npcs/${encodeURIComponent(npcId)}/facts`, token, fact);
  }

  private async call<T>(method: string, path: string, bearer: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const payload = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
    if (!response.ok) {
      throw new MemoryClientError(response.status, payload.error?.code ?? 'HTTP_ERROR', payload.error?.message ?? response.statusText);
    }
    return payload as T;
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
