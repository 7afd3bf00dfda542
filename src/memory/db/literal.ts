import { createHash } from 'node:crypto';
import type { PreparedStatement } from './types.js';

/**
 * Renders a value as an SQL literal, for `Database.batch`, which runs several statements in one
 * round trip and therefore cannot bind parameters: the `EXECUTE` arguments of prepared
 * statements and the scope's `SET LOCAL` values.
 *
 * Deliberately narrow: it accepts only numbers, booleans, null, and strings (or arrays of
 * strings) free of quotes, backslashes and NUL, i.e. the ids, uuids and vector literals the
 * read path uses. Anything else throws rather than being escaped, so no quoting rule of the
 * server (standard_conforming_strings, encodings) can matter. Free text never comes here.
 */
const SAFE_STRING = /^[^'\\\0]*$/;

export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('cannot inline a non-finite number');
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string') {
    if (!SAFE_STRING.test(value)) throw new TypeError('refusing to inline a string containing a quote, backslash or NUL');
    return `'${value}'`;
  }
  if (Array.isArray(value)) {
    // An untyped array literal, so it takes the type the statement expects (text[], uuid[]).
    if (!value.every((v) => typeof v === 'string' && SAFE_STRING.test(v) && !v.includes('"'))) {
      throw new TypeError('refusing to inline an array other than of plain strings');
    }
    return `'{${value.map((v) => `"${v}"`).join(',')}}'`;
  }
  throw new TypeError(`cannot inline a value of type ${typeof value}`);
}

/**
 * A parameterized statement as a named prepared statement and the `EXECUTE` that runs it with
 * these values inlined (by `literal`). The name is derived from the text, so the same statement
 * is prepared once per connection however many callers build it.
 */
export function prepared(text: string, params: readonly unknown[]): { statement: PreparedStatement; execute: string } {
  const name = `q_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  const args = params.length > 0 ? `(${params.map(literal).join(', ')})` : '';
  return { statement: { name, text }, execute: `EXECUTE ${name}${args}` };
}

/**
 * Renders a setting's value for `SET LOCAL name = ...`, which binds no parameters. Unlike
 * `literal`, any text is accepted: an escape string (E'...') escapes quotes and backslashes the
 * same way whatever standard_conforming_strings says. Only NUL, which no setting can hold, throws.
 */
export function settingLiteral(value: string): string {
  if (value.includes('\0')) throw new TypeError('a setting cannot hold a NUL character');
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
