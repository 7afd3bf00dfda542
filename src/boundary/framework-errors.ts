/**
 * Errors raised before any route runs, answered in a service's error envelope without echoing
 * the request back: what Fastify refuses before routing (a URL it cannot decode, a path
 * parameter over the length limit) and what Node's HTTP parser refuses before Fastify sees a
 * request (a request line or headers over Node's size limit, a request that is not HTTP).
 *
 * The memory service and the engine answer `{ error: { code, message } }` (the default); the
 * name registry gives its own flat `{ code, message }` (src/registry/http-app.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The longest path parameter accepted: ids (ScopeId, ParticipantId) are at most 128 characters. */
export const MAX_PARAM_LENGTH = 128;

/** A service's error body for a code and a message. */
export type ErrorBodyOf = (code: string, message: string) => unknown;
const envelope: ErrorBodyOf = (code, message) => ({ error: { code, message } });

/** Fastify's `frameworkErrors` option. */
export function frameworkErrorsAs(body: ErrorBodyOf) {
  return (error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply): void => {
    const [status, code, message] =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [414, 'PATH_TOO_LONG', `A path parameter is longer than this API accepts; ids are at most ${MAX_PARAM_LENGTH} characters.`]
        : error.code === 'FST_ERR_BAD_URL'
          ? [400, 'BAD_URL', 'The URL is not valid: a percent-escape does not decode; escape ids with encodeURIComponent.']
          : [400, 'BAD_REQUEST', 'The request could not be routed; check its method and path.'];
    void reply.status(status).send(body(code, message));
  };
}

/** Fastify's `clientErrorHandler` option: what Node's HTTP parser refused, answered once, then the connection closes. */
export function clientErrorsAs(body: ErrorBodyOf) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'REQUEST_TOO_LARGE', 'The URL or the headers are larger than this API accepts; send long text in a JSON body.']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time; send it again.']
          : [400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1.'];
    if (socket.writable) {
      const json = JSON.stringify(body(code, message));
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      );
    }
    socket.destroy(error);
  };
}

/** The memory service's and the engine's: `{ error: { code, message } }`. */
export const frameworkErrors = frameworkErrorsAs(envelope);
export const clientErrors = clientErrorsAs(envelope);
