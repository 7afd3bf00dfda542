/**
 * Engine errors: a stable code a client can act on and a message that says what to do next.
 * Physical failures of in-world actions are not errors; they are `ActionResult`s.
 */
export type EngineErrorCode =
  | 'ROSTER_FULL'
  | 'ROOM_FULL'
  | 'ROOM_NPC_CAP'
  | 'UNKNOWN_ROOM'
  | 'UNKNOWN_GAME'
  | 'UNKNOWN_NPC'
  | 'NPC_ALREADY_ON_ROSTER'
  | 'NPC_NOT_IN_ROOM'
  | 'NPC_SUSPENDED'
  | 'INVALID_MESSAGE'
  | 'INVALID_ACTION'
  | 'INVALID_SESSION'
  | 'INVALID_CREDENTIALS'
  | 'INVALID_USERNAME'
  | 'WEAK_PASSWORD'
  | 'USERNAME_TAKEN'
  | 'NOT_IN_GAME'
  | 'ALREADY_IN_GAME'
  | 'GAME_ENDED'
  | 'NOT_GAME_CREATOR'
  | 'INVALID_GAME_DEFINITION'
  | 'CHARACTER_NOT_RECOGNIZED'
  | 'STORE_UNAVAILABLE'
  | 'MEMORY_BACKLOG';

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown; details?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngineError';
    this.details = options?.details;
  }

  /** Machine-readable specifics, e.g. the JSON pointer of a bad field. */
  readonly details: unknown;
}
