/**
 * The database could not be reached, or dropped the connection mid-request (a restart, a
 * failover, an administrator ending sessions). Nothing of the request is known to have been
 * written: the caller answers 503 and the client retries (with the same idempotency key).
 */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
  constructor(options?: { cause?: unknown }) {
    super('the database is unavailable', options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** SQLSTATEs of a lost or refused connection: class 08, and the shutdown and start-up states of 57P. */
const CONNECTION_STATES = /^(?:08|57P0[1-4]|53300)/;
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Whether `error` says the connection is gone (or never came), rather than what was asked failed. */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_STATES.test(code) || NODE_CODES.has(code))) return true;
  // node-postgres's own words when the socket closes under a query.
  return /Connection terminated|connection error|Client was closed|terminating connection/i.test(error.message);
}
