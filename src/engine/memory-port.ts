/**
 * The engine's only outbound interface towards the memory service (MemoryEndpoints.com).
 *
 * Everything passed here is free of accounts, sessions, controller type and telemetry:
 * messages are `BoundaryEvent`s made by the anonymization proxy, and the other calls carry
 * only routing keys and game secrets. An HTTP implementation (with the outbox's retries and
 * idempotency keys) is a later piece of work; tests use a recording implementation.
 */
import type { BoundaryEvent } from '../boundary/events.js';
import type { GameId, NpcId, RoomId } from './types.js';

/** A game secret the memory service must keep inside the game (the clue firewall). */
export interface GameSecret {
  readonly kind: 'code' | 'item-location' | 'solution';
  /** The secret itself, e.g. "1847" or "the gate key is in the study safe". */
  readonly text: string;
}

export interface RegisterSecretsRequest {
  readonly gameId: GameId;
  readonly secrets: readonly GameSecret[];
}

export interface FlushWorkingMemoryRequest {
  readonly gameId: GameId;
  readonly roomId: RoomId;
  readonly npcIds: readonly NpcId[];
  /** room-empty: the room's last human left (suspension); npc-moved: the NPC changed rooms. */
  readonly reason: 'room-empty' | 'npc-moved';
}

export interface EndGameRequest {
  readonly gameId: GameId;
}

export interface MemoryPort {
  /** Events of one room, in the room's order. */
  ingest(events: readonly BoundaryEvent[]): Promise<void>;
  /** Serialize the NPCs' working memory for (game, room) to episodic memory, then drop it. */
  flushWorkingMemory(request: FlushWorkingMemoryRequest): Promise<void>;
  /** Called once when a game starts, before any event of that game. */
  registerSecrets(request: RegisterSecretsRequest): Promise<void>;
  /** The game is over: its episodic memory and clues expire now. */
  endGame(request: EndGameRequest): Promise<void>;
}
