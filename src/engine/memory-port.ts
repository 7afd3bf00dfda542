/**
 * The game engine's only outbound interface towards the memory service (MemoryEndpoints.com):
 * what the engine writes. In the engine process, every call to the memory service, these and
 * the NPC runtime's context reads, the sample personas and the inspector's relay, goes through
 * one client, `MemoryHttpClient` (src/boundary/memory-client.ts); this port is the engine's view
 * of it. Why a player's line travels twice (as an event here, and inside the NPC's next context
 * request): the event is the durable record, ordered and retried by the outbox, that becomes an
 * episode and then facts; the context request carries the room as the NPC sees it at its turn
 * (the recent lines, who is present, the state), which may be ahead of what the outbox has
 * delivered. The memory service embeds the line once (its embedder keeps recent vectors by text)
 * and consolidates it once (from the episode; a working-memory summary is mined only for claims
 * about the NPC and the game, never for a participant's facts).
 *
 * Everything passed here is free of accounts, sessions, controller type and telemetry:
 * messages are `BoundaryEvent`s made by the anonymization proxy, and the other calls carry
 * only routing keys and game secrets. The engine never calls a port directly: every call goes
 * through the outbox (`outbox/`), which retries, orders and keys it. Implementations:
 * `HttpMemoryPort` (the boundary contracts over HTTP); tests also use a recording port.
 */
import type { BoundaryEvent } from '../boundary/events.js';
import type { FLUSH_REASONS, GameSecret } from '../boundary/lifecycle.js';
import type { GameId, NpcId, RoomId } from './types.js';

/** A game secret the memory service must keep inside the game (the clue firewall): the boundary's own type. */
export type { GameSecret } from '../boundary/lifecycle.js';

export interface RegisterSecretsRequest {
  readonly gameId: GameId;
  readonly secrets: readonly GameSecret[];
}

export interface FlushWorkingMemoryRequest {
  readonly gameId: GameId;
  readonly roomId: RoomId;
  readonly npcIds: readonly NpcId[];
  /** room_empty: the room's last human left (suspension); npc_moved: the NPC changed rooms. */
  readonly reason: (typeof FLUSH_REASONS)[number];
}

export interface EndGameRequest {
  readonly gameId: GameId;
}

/** Events of one room of one game, in the room's order, under a key that is stable across retries. */
export interface IngestRequest {
  /** The same key on every attempt of this batch, so a retry after a timeout is stored once. */
  readonly idempotencyKey: string;
  readonly events: readonly BoundaryEvent[];
}

export interface MemoryPort {
  /** Stores a batch once per idempotency key. */
  ingest(request: IngestRequest): Promise<void>;
  /** Serialize the NPCs' working memory for (game, room) to episodic memory, then drop it. */
  flushWorkingMemory(request: FlushWorkingMemoryRequest): Promise<void>;
  /** Called once when a game starts, before any event of that game. */
  registerSecrets(request: RegisterSecretsRequest): Promise<void>;
  /** The game is over: its episodic memory and clues expire now. */
  endGame(request: EndGameRequest): Promise<void>;
}

/**
 * A failed port call, classified for the outbox. `retryable` is false when sending the same
 * request again cannot succeed (the memory service refused it: a bad field, a forbidden scope);
 * such a call is set aside as a dead letter instead of blocking the calls behind it.
 * Errors of any other type are treated as retryable (network errors, timeouts).
 */
export class MemoryPortError extends Error {
  constructor(
    /** The memory service's stable error code (e.g. UNKNOWN_FIELD), or a transport code. */
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    options?: { status?: number; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MemoryPortError';
    this.status = options?.status;
  }

  /** HTTP status, when the memory service answered. */
  readonly status: number | undefined;
}

export function isRetryable(error: unknown): boolean {
  return error instanceof MemoryPortError ? error.retryable : true;
}
