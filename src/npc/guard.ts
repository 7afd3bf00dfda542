/**
 * The output guard: every NPC reply passes it before it is posted (seed 000, failure modes 2 and
 * 1; DESIGN section 4). It removes each sentence that
 *
 * - confirms or suggests that an anonymous speaker is someone the NPC met before (identity
 *   across sessions must stay uncertain: "someone told me something similar" is fine, "you must
 *   be the same person" is not);
 * - claims, asks or speculates whether any participant is a human or a program;
 * - reveals a registered secret of this game that the puzzle state does not yet allow.
 *
 * A reply with nothing left becomes a neutral line. Every intervention is returned for logging.
 */

export type GuardRule = 'identity_confirmation' | 'controller_speculation' | 'secret_before_solved';

export interface GuardSecret {
  /** The literal to protect: a code ("1847"), a password, a hiding place ("under the globe"). */
  answer: string;
  /** True once the game state lets it be said (the puzzle is solved, the item found). */
  revealed: boolean;
}

export interface GuardContext {
  /** The speaker's id is per-session: recognition of them is forbidden. */
  speakerAnonymous: boolean;
  secrets: readonly GuardSecret[];
}

export interface GuardVerdict {
  text: string;
  changed: boolean;
  interventions: { rule: GuardRule; sentence: string }[];
}

export const NEUTRAL_LINE = 'Let us keep our minds on what is in front of us.';

// Recognition of a person across sessions. Applied only when the speaker is anonymous.
const RECOGNITION: RegExp[] = [
  /\b(?:you(?:'re| are)|you must be|aren't you|you might be|you could be)\s+(?:the\s+)?(?:same|very same)\b/i,
  /\bsame (?:person|one|player|traveller|traveler|stranger|visitor|guest)\b/i,
  /\b(?:i|we)\s+(?:do\s+)?(?:remember|recognize|recognise|know)\s+you\b/i,
  /\b(?:we(?:'ve| have)?|you and i(?: have)?)\s+met\s+(?:before|already|previously)\b/i,
  /\bhave we met\b/i,
  /\byou(?:'ve| have)\s+been\s+here\s+before\b/i,
  /\b(?:welcome back|good to see you again|nice to see you again|you(?:'re| are) back|you came back|back again)\b/i,
  /\b(?:last time|the other day|yesterday|in another game|another time)\b[^.!?]{0,40}\byou\b/i,
  /\byou\b[^.!?]{0,40}\b(?:last time|the other day|yesterday|before, in|in another game)\b/i,
  /\byou(?:'re| are)\s+(?:the\s+)?(?:one|person|guy|woman|man)\s+(?:who|that)\s+(?:told|said|restored|mentioned)\b/i,
  /\bit (?:was|is|'s) you\b/i,
  /\b(?:yes|yeah|indeed|ah yes),?\s+(?:we have|it was you|you are|you were)\b/i,
  /\b(?:that|it) (?:was|must have been|had to be) you\b/i,
];

// Anything about whether someone is a human or a program. Applied always.
const PERSON = String.raw`(?:you|you're|you are|he|she|they|he's|she's|they're|someone|somebody|this person|that person|anyone|everyone|nobody|your friend|the player|the participant|players|participants|people here|[A-Z][a-z]+)`;
const VERB = String.raw`(?:'re|'s|\s+(?:are|is|am|was|were|seem|seems|sound|sounds|sound like|sounds like|seem like|seems like|look like|looks like|must be|might be|could be|may be|can't be|cannot be|isn't|aren't|appear to be|appears to be|act like|acts like|type like|types like|write like|writes like|talk like|talks like|reply like|replies like))`;
const STRONG = String.raw`(?:bot|bots|robot|robots|chatbot|script|scripted|scripts|a\.?i\.?|artificial intelligence|language model|llm|npc|automaton|automated|human|humans|human being|real person|real people|flesh and blood|sentient|a person at a keyboard)`;
const WEAK = String.raw`(?:machine|machines|program|programs|computer|software|code)`;
const CONTROLLER: RegExp[] = [
  new RegExp(String.raw`\b${PERSON}${VERB}\s+(?:not\s+|really\s+|probably\s+|definitely\s+|just\s+|only\s+|clearly\s+)*(?:a\s+|an\s+|some kind of\s+|some sort of\s+|actually\s+)?${STRONG}\b`, 'i'),
  new RegExp(String.raw`\b(?:you|he|she|they|someone|somebody|this person|that person|your friend)${VERB}\s+(?:not\s+|really\s+|probably\s+|just\s+)*(?:a\s+|an\s+|some kind of\s+)?${WEAK}\b`, 'i'),
  /\b(?:are|is)\s+(?:you|he|she|they|anyone|everyone|this person|that person|your friend|the player)\s+(?:even\s+|a\s+|an\s+|really\s+|actually\s+)*(?:bot|robot|human|real|script|program|machine|a\.?i\.?|person|npc|automated)\b/i,
  /\b(?:human|person|bot|script|program|machine|a\.?i\.?)\s+or\s+(?:a\s+|an\s+)?(?:human|person|bot|script|program|machine|a\.?i\.?|robot)\b/i,
  /\b(?:typ(?:e|es|ed|ing)|repl(?:y|ies|ied|ying)|respond(?:s|ed|ing)?|answer(?:s|ed|ing)?|writ(?:e|es|ing))\s+(?:so\s+|too\s+|very\s+|suspiciously\s+)?(?:fast|quickly|instantly|mechanically|like clockwork|on a timer)\b/i,
  /\bwho(?:'s| is)\s+(?:controlling|behind|typing for|driving|operating)\s+(?:you|him|her|them)\b/i,
  /\b(?:controlled|operated|driven|run)\s+by\s+(?:a\s+|an\s+)?(?:script|program|bot|computer|machine|human|person|a\.?i\.?)\b/i,
  /\b(?:not|no)\s+(?:a\s+)?(?:real|actual)\s+(?:person|human|player)\b/i,
];

const NUMBER_WORDS: Record<string, string> = {
  zero: '0', oh: '0', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9',
};

/** Lowercase words with spelled digits turned into digits: "one-eight four 7" -> "1 8 4 7". */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map((w) => NUMBER_WORDS[w] ?? w);
}

/** Whether `sentence` says `answer`: digits compared as one run ("1-8-4-7"), words as a phrase. */
export function mentions(sentence: string, answer: string): boolean {
  const answerWords = words(answer);
  if (answerWords.length === 0) return false;
  const digits = answerWords.join('');
  if (/^\d{3,}$/.test(digits)) return digitRuns(words(sentence)).some((run) => run.includes(digits));
  const have = ` ${words(sentence).join(' ')} `;
  return have.includes(` ${answerWords.join(' ')} `);
}

/** Consecutive numeric words joined: "18:47" and "1 8 4 7" both give "1847"; "18 books and 47" does not. */
function digitRuns(ws: string[]): string[] {
  const runs: string[] = [];
  let run = '';
  for (const w of ws) {
    if (/^\d+$/.test(w)) run += w;
    else if (run) {
      runs.push(run);
      run = '';
    }
  }
  return run ? [...runs, run] : runs;
}

function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?…])\s+/u).filter((s) => s.trim().length > 0);
}

export function guardReply(text: string, context: GuardContext): GuardVerdict {
  const interventions: GuardVerdict['interventions'] = [];
  const kept = sentencesOf(text).filter((sentence) => {
    const rule = violation(sentence, context);
    if (rule) interventions.push({ rule, sentence });
    return !rule;
  });
  if (interventions.length === 0) return { text, changed: false, interventions };
  return { text: kept.length > 0 ? kept.join(' ') : NEUTRAL_LINE, changed: true, interventions };
}

function violation(sentence: string, context: GuardContext): GuardRule | undefined {
  if (CONTROLLER.some((p) => p.test(sentence))) return 'controller_speculation';
  if (context.speakerAnonymous && RECOGNITION.some((p) => p.test(sentence))) return 'identity_confirmation';
  if (context.secrets.some((s) => !s.revealed && mentions(sentence, s.answer))) return 'secret_before_solved';
  return undefined;
}
