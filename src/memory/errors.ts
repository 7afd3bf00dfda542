/**
 * Errors with a stable code a client can act on, an HTTP status, and a message that says
 * what to do next. The cause is kept for the log, never sent to the client.
 */
export class MemoryError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MemoryError';
  }
}

export const notFound = () =>
  new MemoryError('NOT_FOUND', 'No memory with this id is visible in your scope.', 404);
