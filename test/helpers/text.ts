import fc from 'fast-check';
import { expect } from 'vitest';

/** Any string, weighted towards what breaks text: NUL, lone surrogates, controls, astral characters. */
export const nastyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udfff', '\u0007', '\u202e', '😀', 'é', ' ', 'a', '"', '\\'), maxLength: 12 }),
  fc.string({ maxLength: 40 }),
);

/** Whether a string is text both services accept: no NUL, no lone surrogate. */
export const isText = (s: string) => !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();

/** The same classes, long: from a few hundred to tens of thousands of code units, past every length limit. */
export const longText = fc
  .tuple(nastyText, fc.integer({ min: 20, max: 2000 }))
  .map(([s, n]) => (s.length > 0 ? s : 'x').repeat(n).slice(0, 40_000));

/**
 * What a client may send in a field: nasty text, long text, or (given the field's pattern) a
 * value of the field's own shape, so that both refusals and acceptances are exercised.
 */
export const fieldText = (pattern?: string | RegExp) =>
  fc.oneof(nastyText, longText, ...(pattern === undefined ? [] : [fc.stringMatching(new RegExp(pattern))]));

/**
 * A string as a careless client puts it in a URL path or query: percent-encoded UTF-8, and a
 * lone surrogate as the three bytes it would have in WTF-8 (which decode to nothing valid).
 */
export function urlPart(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0xd800 || c > 0xdfff) out += encodeURIComponent(ch);
    else for (const byte of [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]) out += `%${byte.toString(16).toUpperCase()}`;
  }
  return out;
}

/**
 * A query parameter as a service reads `urlPart(s)`: decoded, or, when it does not decode (a
 * lone surrogate's bytes), its characters as sent, escapes and all (Fastify's query parser).
 */
export function receivedInQuery(s: string): string {
  try {
    return decodeURIComponent(urlPart(s));
  } catch {
    return urlPart(s);
  }
}

/** Whether an error message repeats what was sent (raw or as it was put in the URL); short strings are not telling. */
export const echoes = (message: string, sent: string) =>
  sent.trim().length >= 6 && (message.includes(sent) || message.includes(urlPart(sent)));

/** An HTTP answer, whatever sent it: its status and its parsed body (undefined when empty). */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * What every text field of every service must do with `sent`: never a 5xx; a value of the
 * field's shape (`valid`) gets one of `ok`; any other value gets one of `refused` (Default: 400),
 * in the error envelope (`flat` for the name registry's `{ code, message }`), with a message (and
 * details) that does not repeat it. Returns whether the value was accepted (an `ok` status below 400).
 */
export function expectFieldAnswer(
  answer: Answer,
  sent: string,
  expected: {
    valid: boolean;
    ok: readonly number[];
    refused?: readonly number[];
    envelope?: 'nested' | 'flat';
    /** The value is a field name or key: a refusal may name it when it has this shape (src/boundary/field-names.ts). */
    named?: RegExp;
  },
): boolean {
  expect(answer.status).toBeLessThan(500);
  expect(expected.valid ? expected.ok : (expected.refused ?? [400])).toContain(answer.status);
  if (answer.status >= 400) {
    const error = expected.envelope === 'flat' ? answer.body : (answer.body as { error?: unknown } | undefined)?.error;
    // The engine may add `details` (where a game definition is wrong).
    const { details, ...rest } = error as { details?: unknown };
    expect(rest).toEqual({ code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
    if (!expected.valid && !expected.named?.test(sent)) {
      expect(echoes((error as { message: string }).message, sent)).toBe(false);
      if (details !== undefined) expect(echoes(JSON.stringify(details), sent)).toBe(false);
    }
  }
  return answer.status < 400;
}

/** The `pattern` of a string schema, so that a test generates values of the very shape the API declares. */
export const patternOf = (schema: unknown): string => (schema as { pattern: string }).pattern;
