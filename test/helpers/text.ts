import fc from 'fast-check';

/** Any string, weighted towards what breaks text: NUL, lone surrogates, controls, astral characters. */
export const nastyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udfff', '\u0007', '\u202e', '😀', 'é', ' ', 'a', '"', '\\'), maxLength: 12 }),
  fc.string({ maxLength: 40 }),
);

/** Whether a string is text both services accept: no NUL, no lone surrogate. */
export const isText = (s: string) => !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();
