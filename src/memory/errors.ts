/**
 * Errors with a stable code a client can act on, an HTTP status, and a message that says
 * what to do next. The cause is kept for the log, never sent to the client.
 */
/** Every code the memory service raises itself, and its HTTP status (the framework's own are in http/errors.ts). */
export const MEMORY_ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_SCOPE: 400,
  SAME_NPC: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  SCOPE_MISMATCH: 403,
  GAME_TOKEN_REQUIRED: 403,
  API_KEY_REQUIRED: 403,
  ADMIN_KEY_REQUIRED: 403,
  ATTRIBUTE_REQUIRED: 403,
  NOT_FOUND: 404,
  OPERATION_NOT_FOUND: 404,
  SOURCE_NOT_FOUND: 404,
  IDEMPOTENCY_CONFLICT: 409,
  GAME_ENDED: 409,
  APPEND_ONLY: 409,
  TRACE_CHANGED: 409,
  LEDGER_EMPTY: 409,
  LEDGER_INVALID: 409,
  SUBJECT_ERASED: 410,
  SCHEMA_NEWER_THAN_CODE: 500,
} as const;

export type MemoryErrorCode = keyof typeof MEMORY_ERROR_STATUS;

export class MemoryError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: MemoryErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MemoryError';
    this.statusCode = MEMORY_ERROR_STATUS[code];
  }
}

export const notFound = () => new MemoryError('NOT_FOUND', 'No memory with this id is visible in your scope.');
