/**
 * One error shape for every answer of the engine's API: `{ error: { code, message, details? } }`.
 * The code is stable (a client acts on it), the message says what to do next.
 */
import type { FastifyError } from 'fastify';
import { EngineError, type EngineErrorCode } from '../errors.js';
import { BodyTextError } from '../../boundary/json-body.js';
import { shownPointer, unknownFieldMessage } from '../../boundary/field-names.js';

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
  | 'NOT_GAME_CREATOR'
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
};

export class TransportError extends Error {
  constructor(
    readonly code: TransportErrorCode,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export interface PublicError {
  statusCode: number;
  code: TransportErrorCode;
  message: string;
  details?: unknown;
}

/** Maps any error to the public shape; `invalidCode` names what a schema failure means on this route. */
export function toPublicError(error: FastifyError | Error, invalidCode: TransportErrorCode = 'INVALID_REQUEST'): PublicError {
  if (error instanceof EngineError) {
    return { statusCode: STATUS[error.code], code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) };
  }
  if (error instanceof TransportError) return { statusCode: error.statusCode, code: error.code, message: error.message };
  if (error instanceof BodyTextError) return { statusCode: 400, code: error.code, message: error.message };
  const fe = error as FastifyError;
  if (fe.validation) {
    const first = fe.validation[0];
    const where = shownPointer(`${fe.validationContext ?? 'body'}${first?.instancePath ?? ''}`);
    // In a union (an action, a front-desk query) a stray field only means "not this branch".
    const inUnion = fe.validation.some((e) => e.keyword === 'anyOf');
    if (first?.keyword === 'additionalProperties' && !inUnion) {
      const field = (first.params as { additionalProperty?: string }).additionalProperty;
      return { statusCode: 400, code: 'UNKNOWN_FIELD', message: `${unknownFieldMessage(where, field)}.` };
    }
    return { statusCode: 400, code: invalidCode, message: `${where} ${first?.message ?? 'is invalid'}; see GET /openapi.json for the shape.` };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON.' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json.' };
  }
  if (error instanceof SyntaxError) return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON.' };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { statusCode: fe.statusCode, code: 'BAD_REQUEST', message: 'The request could not be read; check its headers and body.' };
  }
  return { statusCode: 500, code: 'INTERNAL', message: 'The engine failed to handle this request; try again.' };
}
