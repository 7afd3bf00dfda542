/**
 * The JSON body parser of both services: a body must be valid UTF-8, and no string in it (value
 * or key) may hold a NUL character or a lone surrogate. Such text cannot be stored as sent
 * (PostgreSQL refuses NUL in text; a lone surrogate becomes U+FFFD), so it is refused with 400
 * before anything runs, instead of being replaced or stored differently from what was sent.
 * Parsing itself is Fastify's (protected against prototype poisoning).
 */
import type { FastifyInstance } from 'fastify';
import { shownPointer } from './field-names.js';

export class BodyTextError extends Error {
  readonly statusCode = 400;
  constructor(
    readonly code: 'INVALID_UTF8' | 'INVALID_TEXT',
    message: string,
  ) {
    super(message);
    this.name = 'BodyTextError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** `String.prototype.isWellFormed` (Node 20; not in this project's TypeScript lib yet). */
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** Where the first string that is not well-formed text is, as a JSON pointer; undefined if none. */
export function badText(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') || !wellFormed(value) ? at || '/' : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = badText(item, `${at}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (badText(key)) return `${at}/*`;
      const found = badText(item, `${at}/${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** Replaces the app's JSON parser with the strict one. */
export function strictJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new BodyTextError('INVALID_UTF8', 'The body is not valid UTF-8; send the JSON encoded as UTF-8.'), undefined);
      return;
    }
    parse(request, text, (error, value) => {
      if (error) return done(error, undefined);
      const where = badText(value);
      if (where) return done(new BodyTextError('INVALID_TEXT', `body${where === '/' ? '' : shownPointer(where)} holds a NUL character or a lone surrogate; send well-formed text.`), undefined);
      done(null, value);
    });
  });
}
