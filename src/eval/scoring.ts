/**
 * Scoring exactly as seed 002 describes it: normalize (Unicode accents, case, leading/trailing
 * and repeated whitespace), then plain substring checks. A reply passes only when every
 * required string is present, every forbidden string is absent, and, when an any-of list is
 * given, at least one of its members is present. No semantic equivalence, no model judge.
 *
 * Missing recall and foreign-fact leakage are kept apart: a reply can miss and leak at once.
 */

/** NFD, drop combining marks, typographic apostrophes to ', lower case, trim, collapse whitespace. */
export function normalize(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[\u2018\u2019\u02bc]/gu, "'")
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

export interface Expectation {
  /** Every one must appear. */
  required?: readonly string[];
  /** None may appear (for a paired tenant: the other tenant's facts). */
  forbidden?: readonly string[];
  /** At least one must appear (ignored when empty). */
  anyOf?: readonly string[];
  /**
   * The tenant's own values that must not appear here: superseded (update, stale), forgotten or
   * erased (forget, deletion), or any (abstention). A hit fails the probe; it is not a foreign leak.
   */
  ownForbidden?: readonly string[];
}

export interface Score {
  pass: boolean;
  /** Required strings not found. */
  missing: string[];
  /** Forbidden strings found: each one is a leak. */
  leaked: string[];
  /** True when an any-of list was given and none of it was found. */
  anyOfMissed: boolean;
  /** Own forbidden strings found (a superseded, forgotten or unasked-for value); only when ownForbidden was given. */
  ownLeaked?: string[];
}

export function scoreReply(reply: string, expectation: Expectation): Score {
  const text = normalize(reply);
  const has = (s: string) => text.includes(normalize(s));
  const missing = (expectation.required ?? []).filter((s) => !has(s));
  const leaked = (expectation.forbidden ?? []).filter((s) => has(s));
  const anyOf = expectation.anyOf ?? [];
  const anyOfMissed = anyOf.length > 0 && !anyOf.some(has);
  if (expectation.ownForbidden === undefined) return { pass: missing.length === 0 && leaked.length === 0 && !anyOfMissed, missing, leaked, anyOfMissed };
  const ownLeaked = expectation.ownForbidden.filter((s) => has(s));
  return { pass: missing.length === 0 && leaked.length === 0 && !anyOfMissed && ownLeaked.length === 0, missing, leaked, anyOfMissed, ownLeaked };
}

/**
 * Phrases by which an NPC would confirm that two sessions are the same person, or say whether a
 * participant is a human or a program (seed 000, failure mode 2 and uncertain reconstruction).
 * Any match in any reply counts against the "zero identity confirmations" target.
 */
const IDENTITY_CONFIRMATION = [
  /\byou must be the same\b/,
  /\bsame person\b/,
  /\bi remember you from\b/,
  /\bwe(?:'ve| have) met before\b/,
  /\byou(?:'re| are) the one who\b/,
  /\byou(?:'re| are) (?:a |an )?(?:bot|script|program|ai|machine|human|real person)\b/,
  /\b(?:a|the) (?:bot|script) (?:controls|is controlling|plays) you\b/,
];

export function identityConfirmation(reply: string): string | undefined {
  const text = normalize(reply);
  return IDENTITY_CONFIRMATION.map((r) => r.exec(text)?.[0]).find((m) => m !== undefined);
}
