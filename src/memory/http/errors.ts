import type { FastifyError } from 'fastify';
import { MemoryError } from '../errors.js';
import { EmbeddingError } from '../embeddings/types.js';
import { isConnectionError } from '../db/unavailable.js';
import { BodyTextError } from '../../boundary/json-body.js';
import { shownPointer, unknownFieldMessage } from '../../boundary/field-names.js';

/** Maps any error to the public shape: a status, a stable code and a message saying what to do. */
export function toPublicError(error: FastifyError): { statusCode: number; code: string; message: string } {
  if (error instanceof MemoryError) return { statusCode: error.statusCode, code: error.code, message: error.message };
  if (error instanceof BodyTextError) return { statusCode: 400, code: error.code, message: error.message };
  if (error instanceof EmbeddingError) {
    return { statusCode: 503, code: 'EMBEDDINGS_UNAVAILABLE', message: 'The embedding model is unavailable; nothing was stored. Retry with the same idempotency key.' };
  }
  if (isConnectionError(error)) {
    return { statusCode: 503, code: 'DATABASE_UNAVAILABLE', message: 'The database is unavailable; nothing was stored. Retry with the same idempotency key.' };
  }
  if (error.validation) {
    const first = error.validation[0];
    if (first?.keyword === 'additionalProperties') {
      const field = (first.params as { additionalProperty?: string }).additionalProperty;
      const where = `${error.validationContext ?? 'body'}${first.instancePath || ''}`;
      return { statusCode: 400, code: 'UNKNOWN_FIELD', message: `${unknownFieldMessage(where, field)} (telemetry never crosses the boundary)` };
    }
    return { statusCode: 400, code: 'INVALID_REQUEST', message: `${shownPointer(`${error.validationContext ?? 'body'}${first?.instancePath ?? ''}`)} ${first?.message ?? 'is invalid'}` };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large; send fewer events per batch' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' };
  }
  if (error instanceof SyntaxError) return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON' };
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return { statusCode: error.statusCode, code: 'BAD_REQUEST', message: 'The request could not be read; check its headers and body' };
  }
  return { statusCode: 500, code: 'INTERNAL', message: 'The memory service failed; retry with the same idempotency key' };
}
