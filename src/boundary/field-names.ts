/**
 * Field names and JSON pointers as the error messages of every service show them. A name of the
 * shape an API's own fields and keys have is shown as sent, so the client can find the field; a
 * name a client made up of anything else (quotes, spaces, markup, control or bidi characters,
 * hundreds of characters) is not repeated back, only said to be there.
 */

/** Letters, digits, `_ . : -`, at most 64: every field name and record key of these APIs. */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

/** The name as a message shows it, or undefined when it is not to be repeated. */
export function shownName(name: unknown): string | undefined {
  return typeof name === 'string' && NAME.test(name) ? name : undefined;
}

/** A JSON pointer (`/events/0/text`) with each segment that is not a name or an index replaced by `*`. */
export function shownPointer(pointer: string): string {
  return pointer
    .split('/')
    .map((segment, i) => (i === 0 || shownName(segment) !== undefined ? segment : '*'))
    .join('/');
}

/** The message of an UNKNOWN_FIELD refusal: where, and which field when its name can be shown. */
export function unknownFieldMessage(where: string, field: unknown): string {
  const name = shownName(field);
  return name === undefined
    ? `${shownPointer(where)} has a field that this API does not accept (its name is not one this API uses); remove it`
    : `${shownPointer(where)} has a field "${name}" that this API does not accept; remove it`;
}
