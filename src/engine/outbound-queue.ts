/**
 * Serializes a game's calls to the memory service so they leave in the engine's order
 * (secrets first, then events and flushes as they happened, end last). No retries here:
 * a failed call is reported and dropped. Retries with idempotency keys, and play continuing
 * while the memory service is down, are the outbox's job (not built yet).
 */
import type { BoundaryEvent } from '../boundary/events.js';
import type { FlushWorkingMemoryRequest, MemoryPort, RegisterSecretsRequest } from './memory-port.js';
import type { GameId } from './types.js';

export type OutboundCallName = 'ingest' | 'flushWorkingMemory' | 'registerSecrets' | 'endGame';

export type OutboundErrorHandler = (error: unknown, call: { name: OutboundCallName; gameId: GameId }) => void;

export class OutboundQueue {
  #tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly gameId: GameId,
    private readonly port: MemoryPort,
    private readonly onError: OutboundErrorHandler,
  ) {}

  ingest(events: readonly BoundaryEvent[]): void {
    if (events.length > 0) this.#enqueue('ingest', () => this.port.ingest(events));
  }

  flushWorkingMemory(request: FlushWorkingMemoryRequest): void {
    this.#enqueue('flushWorkingMemory', () => this.port.flushWorkingMemory(request));
  }

  registerSecrets(request: RegisterSecretsRequest): void {
    this.#enqueue('registerSecrets', () => this.port.registerSecrets(request));
  }

  endGame(): void {
    this.#enqueue('endGame', () => this.port.endGame({ gameId: this.gameId }));
  }

  /** Resolves when every call queued so far has settled. */
  idle(): Promise<void> {
    return this.#tail;
  }

  #enqueue(name: OutboundCallName, call: () => Promise<void>): void {
    this.#tail = this.#tail.then(call).catch((error: unknown) => {
      try {
        this.onError(error, { name, gameId: this.gameId });
      } catch {
        // A failing error reporter must not stop the calls queued behind this one.
      }
    });
  }
}
