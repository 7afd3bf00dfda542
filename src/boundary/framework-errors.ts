/**
 * Errors Fastify raises before any route runs (a URL it cannot decode, a path parameter over the
 * length limit), answered in the envelope of both services, `{ error: { code, message } }`,
 * without echoing the URL back.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export function frameworkErrors(error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, code, message] =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? [414, 'PATH_TOO_LONG', 'A path parameter is longer than this API accepts; ids are at most 100 characters.']
      : error.code === 'FST_ERR_BAD_URL'
        ? [400, 'BAD_URL', 'The URL is not valid: a percent-escape does not decode; escape ids with encodeURIComponent.']
        : [400, 'BAD_REQUEST', 'The request could not be routed; check its method and path.'];
  void reply.status(status).send({ error: { code, message } });
}
