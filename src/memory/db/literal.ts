/**
 * Renders a parameterized statement with its values inlined, for `Database.batch`, which
 * runs several statements in one round trip and therefore cannot bind parameters.
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
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]::text[]`;
  throw new TypeError(`cannot inline a value of type ${typeof value}`);
}

/** Replaces `$1`..`$n` in `text` with inlined literals (highest numbers first, so $10 is not read as $1). */
export function inline(text: string, params: readonly unknown[]): string {
  let out = text;
  for (let i = params.length; i >= 1; i--) out = out.split(`$${i}`).join(literal(params[i - 1]));
  if (/\$\d/.test(out)) throw new Error('statement refers to a parameter that was not supplied');
  return out;
}
