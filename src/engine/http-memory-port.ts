/**
 * `MemoryPort` over HTTP: the boundary contracts (`src/boundary/`) sent with `MemoryHttpClient`.
 * The outbox calls it with the boundary's own types (no words to map) and it classifies failures:
 *
 * | failure                                               | retryable |
 * |-------------------------------------------------------|-----------|
 * | no answer (connection refused, reset, timeout)        | yes       |
 * | 408, 425, 429, 5xx (incl. 503 EMBEDDINGS_UNAVAILABLE) | yes       |
 * | any other 4xx (400 UNKNOWN_FIELD, 403, 404, 409, ...) | no        |
 *
 * The memory service stores nothing of a request it refuses, so a non-retryable failure loses
 * only that call; the outbox sets it aside as a dead letter and reports it.
 */
import { MemoryClientError, type MemoryHttpClient } from '../boundary/memory-client.js';
import {
  MemoryPortError,
  type EndGameRequest,
  type FlushWorkingMemoryRequest,
  type IngestRequest,
  type MemoryPort,
  type RegisterSecretsRequest,
} from './memory-port.js';

const RETRYABLE_STATUS = new Set([408, 425, 429]);

export class HttpMemoryPort implements MemoryPort {
  constructor(private readonly client: MemoryHttpClient) {}

  async ingest(request: IngestRequest): Promise<void> {
    const gameId = request.events[0]?.gameId;
    if (gameId === undefined) return;
    if (request.events.some((e) => e.gameId !== gameId)) {
      throw new MemoryPortError('MIXED_GAMES', 'An ingest batch holds the events of one game; the outbox never mixes them.', false);
    }
    await classified(() => this.client.ingest(gameId, { idempotencyKey: request.idempotencyKey, events: [...request.events] }));
  }

  async flushWorkingMemory(request: FlushWorkingMemoryRequest): Promise<void> {
    // One call per NPC; flushing an already flushed NPC is a no-op, so a retry of the whole list is safe.
    for (const npcId of request.npcIds) {
      await classified(() =>
        this.client.flushWorkingMemory(request.gameId, npcId, { roomId: request.roomId, reason: request.reason }),
      );
    }
  }

  async registerSecrets(request: RegisterSecretsRequest): Promise<void> {
    const secrets = request.secrets.map((s) => ({ kind: s.kind, text: s.text }));
    await classified(() => this.client.registerSecrets(request.gameId, { secrets }));
  }

  async endGame(request: EndGameRequest): Promise<void> {
    await classified(() => this.client.endGame(request.gameId));
  }
}

async function classified<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toPortError(error);
  }
}

/** A failure of the HTTP client as the outbox needs it: a code and whether to try again. */
export function toPortError(error: unknown): MemoryPortError {
  if (error instanceof MemoryPortError) return error;
  if (error instanceof MemoryClientError) {
    const retryable = error.status >= 500 || RETRYABLE_STATUS.has(error.status);
    return new MemoryPortError(error.code, error.message, retryable, { status: error.status, cause: error });
  }
  const name = (error as { name?: unknown } | null)?.name;
  const code = name === 'TimeoutError' || name === 'AbortError' ? 'TIMEOUT' : 'UNREACHABLE';
  return new MemoryPortError(code, `The memory service did not answer (${String((error as Error)?.message ?? error)}).`, true, { cause: error });
}
