/**
 * One error mapper for the engine's and the memory service's HTTP APIs: every error a route or
 * Fastify raises becomes `{ error: { code, message, details? } }` with a stable code. The parts
 * both services share (schema failures, unreadable bodies, the unexpected) are mapped here; each
 * service adds its own errors (`own`: EngineError; MemoryError, EmbeddingError and a dropped
 * database connection) and the hint its messages end on. What Fastify refuses before a route runs is
 * framework-errors.ts.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { shownPointer, unknownFieldMessage } from './field-names.js';
import { BodyTextError } from './json-body.js';

export interface PublicError {
  statusCode: number;
  code: string;
  message: string;
  details?: unknown;
}

/** An error with its code and status decided where it is thrown (a route's own refusal). */
export class HttpError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface ErrorMapping {
  /** The service's own errors; undefined for any other. */
  own(error: Error): PublicError | undefined;
  /** Who failed, for a 500: "The engine", "The memory service". */
  service: string;
  /** What a client should do after a refusal that changed nothing: "try again", "retry with the same idempotency key". */
  retry: string;
  /** What to send instead of a body that is too large. */
  smaller: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code a schema failure of this route's input gets (Default: INVALID_REQUEST). */
    invalidCode?: string;
  }
}

/** Maps any error to the public shape; `invalidCode` names what a schema failure means on the route. */
export function publicError(error: FastifyError | Error, mapping: ErrorMapping, invalidCode = 'INVALID_REQUEST'): PublicError {
  const own = mapping.own(error);
  if (own) return own;
  if (error instanceof HttpError) return { statusCode: error.statusCode, code: error.code, message: error.message };
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
      return { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: `The request body is too large; ${mapping.smaller}.` };
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
  return { statusCode: 500, code: 'INTERNAL', message: `${mapping.service} failed to handle this request; ${mapping.retry}.` };
}

/** Installs the error and not-found handlers: every failure in the one envelope, a 5xx logged without its text. */
export function answerErrors(app: FastifyInstance, mapping: ErrorMapping): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const e = publicError(error, mapping, request.routeOptions.config?.invalidCode);
    if (e.statusCode >= 500) request.log.error({ err: { name: error.name, code: error.code } }, 'request failed');
    return reply.status(e.statusCode).send({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } });
  });
  app.setNotFoundHandler((_request, reply) => reply.status(404).send({ error: { code: 'ROUTE_NOT_FOUND', message: 'No such endpoint; see GET /openapi.json.' } }));
}
