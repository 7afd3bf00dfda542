/** What the outbox keeps: the calls to the memory service, their order, and sealed batches. */
import type { BoundaryEvent } from '../../boundary/events.js';
import type { EndGameRequest, FlushWorkingMemoryRequest, RegisterSecretsRequest } from '../memory-port.js';
import type { GameId, RoomId } from '../types.js';

export type OutboxCall =
  | { readonly name: 'ingest'; readonly events: readonly BoundaryEvent[] }
  | { readonly name: 'flushWorkingMemory'; readonly request: FlushWorkingMemoryRequest }
  | { readonly name: 'registerSecrets'; readonly request: RegisterSecretsRequest }
  | { readonly name: 'endGame'; readonly request: EndGameRequest };

export type OutboxCallName = OutboxCall['name'];

export interface OutboxEntry {
  /** Increases with every accepted call, across games; the outbox's total order. */
  readonly id: number;
  readonly gameId: GameId;
  /** The room whose order this call keeps; absent for game-wide calls (secrets, end). */
  readonly roomId?: RoomId;
  readonly call: OutboxCall;
  readonly enqueuedAtMs: number;
}

/** Ingest entries sent together under one idempotency key; fixed before the first attempt. */
export interface SealedBatch {
  readonly ids: readonly number[];
  readonly idempotencyKey: string;
}

export type OutboxRecord =
  | { readonly t: 'put'; readonly entry: OutboxEntry }
  | { readonly t: 'seal'; readonly batch: SealedBatch }
  /** Delivered, or set aside as a dead letter: either way never sent again. */
  | { readonly t: 'done'; readonly ids: readonly number[] };

export interface OutboxSnapshot {
  readonly pending: OutboxEntry[];
  readonly sealed: SealedBatch[];
}
