/**
 * The engine's errors in the one envelope of both services' APIs (src/boundary/http-errors.ts):
 * `{ error: { code, message, details? } }`, the code stable (a client acts on it), the message
 * saying what to do next; each engine error code has its status here.
 */
import { HttpError, publicError, type ErrorMapping, type PublicError } from '../../boundary/http-errors.js';
import { EngineError, type EngineErrorCode } from '../errors.js';

export type TransportErrorCode =
  | EngineErrorCode
  | 'UNKNOWN_FIELD'
  | 'INVALID_REQUEST'
  | 'INVALID_JSON'
  | 'INVALID_UTF8'
  | 'INVALID_TEXT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'ROUTE_NOT_FOUND'
  | 'RATE_LIMITED'
  | 'BAD_REQUEST'
  | 'INTERNAL';

const STATUS: Record<EngineErrorCode, number> = {
  INVALID_MESSAGE: 400,
  INVALID_ACTION: 400,
  INVALID_USERNAME: 400,
  WEAK_PASSWORD: 400,
  INVALID_GAME_DEFINITION: 400,
  INVALID_SESSION: 401,
  INVALID_CREDENTIALS: 401,
  UNKNOWN_GAME: 404,
  UNKNOWN_NPC: 404,
  UNKNOWN_ROOM: 404,
  CHARACTER_NOT_RECOGNIZED: 404,
  NPC_NOT_IN_ROOM: 409,
  NPC_SUSPENDED: 409,
  NPC_ALREADY_ON_ROSTER: 409,
  ROSTER_FULL: 409,
  ROOM_FULL: 409,
  ROOM_NPC_CAP: 409,
  USERNAME_TAKEN: 409,
  STORE_UNAVAILABLE: 503,
  MEMORY_BACKLOG: 503,
  NOT_IN_GAME: 409,
  ALREADY_IN_GAME: 409,
  GAME_ENDED: 410,
  NOT_GAME_CREATOR: 403,
};

/** A refusal decided at the HTTP layer (a rate limit, the front desk not recognizing a name). */
export class TransportError extends HttpError {
  constructor(code: TransportErrorCode, message: string, statusCode: number) {
    super(code, message, statusCode);
    this.name = 'TransportError';
  }
}

export const ENGINE_ERRORS: ErrorMapping = {
  service: 'The engine',
  retry: 'try again',
  smaller: 'a game definition is the largest thing this API takes',
  own(error) {
    if (!(error instanceof EngineError)) return undefined;
    return { statusCode: STATUS[error.code], code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) };
  },
};

/** Maps any error to the public shape (the WebSocket stream closes with it). */
export const toPublicError = (error: Error): PublicError => publicError(error, ENGINE_ERRORS);
