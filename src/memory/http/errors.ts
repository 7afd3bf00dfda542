/** The memory service's errors in the one envelope (src/boundary/http-errors.ts). */
import type { ErrorMapping } from '../../boundary/http-errors.js';
import { MemoryError } from '../errors.js';
import { EmbeddingError } from '../embeddings/types.js';
import { isConnectionError } from '../db/unavailable.js';

/** Nothing of a refused request was stored: sending it again under its key is safe. */
const RETRY = 'retry with the same idempotency key';

export const MEMORY_ERRORS: ErrorMapping = {
  service: 'The memory service',
  retry: RETRY,
  smaller: 'send fewer events per batch',
  own(error) {
    if (error instanceof MemoryError) return { statusCode: error.statusCode, code: error.code, message: error.message };
    if (error instanceof EmbeddingError) {
      return { statusCode: 503, code: 'EMBEDDINGS_UNAVAILABLE', message: `The embedding model is unavailable; nothing was stored. ${cap(RETRY)}.` };
    }
    if (isConnectionError(error)) {
      return { statusCode: 503, code: 'DATABASE_UNAVAILABLE', message: `The database is unavailable; nothing was stored. ${cap(RETRY)}.` };
    }
    return undefined;
  },
};

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
