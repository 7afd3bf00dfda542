/**
 * The clue firewall. A candidate that carries one of the game's registered secrets, or looks
 * like a secret (codes, combinations, passwords, hiding places, solutions), is a game clue:
 * bound to its game, it expires with it and can never reach the social tier, lore, an
 * anonymous fragment or a clone. When in doubt, a candidate is a clue: a false positive costs
 * a cross-game memory, a false negative leaks a puzzle.
 */
import type { SECRET_KINDS } from '../../boundary/lifecycle.js';
import { tokens, type Token } from '../../language/index.js';

export type SecretKind = (typeof SECRET_KINDS)[number];
/** A registered secret as consolidation sees it (decrypted, in memory only). */
export interface GameSecret {
  kind: SecretKind;
  text: string;
}

const NUMBER_WORDS: Record<string, string> = {
  zero: '0', oh: '0', o: '0', nought: '0', nil: '0',
  one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9',
  first: '1', second: '2', third: '3', fourth: '4', fifth: '5', sixth: '6', seventh: '7', eighth: '8', ninth: '9',
};
const TEENS: Record<string, string> = {
  ten: '10', eleven: '11', twelve: '12', thirteen: '13', fourteen: '14', fifteen: '15', sixteen: '16',
  seventeen: '17', eighteen: '18', nineteen: '19', twenty: '20', thirty: '30', forty: '40', fifty: '50',
  sixty: '60', seventy: '70', eighty: '80', ninety: '90', hundred: '00',
};

const CODE_WORDS =
  /\b(?:codes?|combinations?|combo|pass-?codes?|pass-?words?|pass-?phrases?|pins?|keypad|key ?pad|padlock|lock(?:ed|s)?|safe|vault|dial|digits?|numbers?|cipher|unlock(?:s|ed|ing)?|opens? (?:with|it|the)|solution|answer (?:is|to)|riddle|puzzle|secret (?:word|passage|door|compartment|room|drawer|panel)|the secret is|magic word|sequence|entry code|access code)\b/i;
const HIDING =
  /\b(?:hidden|hides?|hid|hiding(?: place| spot)?|stash(?:ed)?|tucked|taped|buried|concealed|stored)\b[^.?!]{0,60}\b(?:under(?:neath)?|behind|inside|in|beneath|below|on top of|above|within|between|at the bottom of|taped to)\b/i;
const LOCATION_OF_ITEM =
  /\b(?:key|keys|map|note|letter|coin|gem|card|book|box|device|clue|lever|button|switch|scroll|amulet|ring|crowbar|flashlight|torch|fuse|disk|tape|document|envelope|it)\b[^.?!]{0,40}\b(?:is|was|are|were|lies|sits|hangs|waits)\s+(?:hidden\s+|kept\s+|stashed\s+|tucked\s+)?(?:under(?:neath)?|behind|inside|beneath|below|on top of|within|between|at the bottom of|in the)\b/i;
const LOOK_UNDER = /\b(?:look|check|search|try looking|reach|dig)\s+(?:under|behind|inside|beneath|below|in)\b/i;
const TRY_NUMBER = /\b(?:try|enter|type|punch in|dial|press|use)\s+[\d]/i;

/** Digit strings in `text`, with number words turned to digits ("four seven nine two" -> "4792"). */
export function digitRuns(text: string): string[] {
  const tokens = text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  const runs: string[] = [];
  let run = '';
  let words = 0;
  const flush = () => {
    if (run.length > 0 && (words !== 1 || run.length > 1)) runs.push(run);
    run = '';
    words = 0;
  };
  for (const token of tokens) {
    if (/^\d+$/.test(token)) {
      run += token;
      words += 2; // a literal number always counts
    } else if (token in NUMBER_WORDS && (token !== 'o' || run.length > 0)) {
      run += NUMBER_WORDS[token];
      words += 1;
    } else if (token in TEENS) {
      run += TEENS[token];
      words += 1;
    } else if (token === 'dash' || token === 'then' || token === 'and' || token === 'comma') {
      continue;
    } else {
      flush();
    }
  }
  flush();
  return runs;
}

const YEAR_CONTEXT = /\b(?:in|since|from|of|a|an|the|year|circa|born|until|till|by|back in|around|early|late|mid)\s+(1[89]\d\d|20\d\d)s?\b/gi;

/** Whether a text has a number that could be a code: not a count ("500 hours", "type 1") or a year. */
export const codeLike = (text: string): boolean => codeLikeRuns(text).length > 0;

/** Digit runs of 3 or more that are not plainly a year ("a 1967 Mustang", "since 1999"). */
function codeLikeRuns(text: string): string[] {
  const years = new Set<string>();
  for (const m of text.matchAll(YEAR_CONTEXT)) years.add(m[1]!);
  const models = CODE_WORDS.test(text) ? new Set<string>() : new Set([...text.matchAll(MODEL_NAME)].map((m) => m[1]!));
  return digitRuns(uncounted(text.replace(QUANTITY, ' '))).filter((run) => run.length >= 3 && !years.has(run) && !models.has(run));
}

/**
 * A number that is part of a name after a brand's capitalized word, not a code: "a little Fiat
 * 500", "my old Peugeot 308" (a registered secret is still found in it by `carries`). Not at the
 * start of a sentence, where any word is capitalized ("Room 4471 is locked").
 */
const MODEL_NAME = /(?<=\p{Ll}\s+)\p{Lu}\p{Ll}+\s+(\d{3,4})\b/gu;

/**
 * The text without the numbers that count what follows them, a plural noun ("100 degrees today")
 * or an acronym's plural, which the tagger reads as a name ("like 300 LPs"), when no word of it
 * speaks of a code ("try 482 turns" is still a code's text).
 */
function uncounted(text: string): string {
  if (CODE_WORDS.test(text) || TRY_NUMBER.test(text)) return text;
  const toks = tokens(text);
  const plural = (t: Token | undefined) => (t?.pos === 'NOUN' && t.lower !== t.lemma) || /^\p{Lu}{2,}s$/u.test(t?.text ?? '');
  const counts = toks.flatMap((t, i) => (t.pos === 'NUM' && /^\d+$/.test(t.text) && plural(toks[i + 1]) ? [t.text] : []));
  return counts.reduce((out, n) => out.replace(new RegExp(`\\b${n}\\b`), ' '), text);
}

/** A count of something ("my first 18 years", "3 weeks to go", "two kids"): a quantity, not a code. */
const QUANTITY = /\b(?:(?:first|last|next|past)\s+)?\d{1,3}\s+(?:years?|months?|weeks?|days?|hours?|minutes?|times?|kids?|children|cats?|dogs?|siblings?|brothers?|sisters?|km|miles?|kilos?|pounds?)\b/gi;

export interface SecretMatcher {
  /** The registered secrets of the game (plaintext, in memory only while consolidating). */
  readonly secrets: readonly GameSecret[];
}

/**
 * Whether `text` carries a registered secret or looks like one; the kind of secret, or
 * undefined when it looks safe.
 */
export function secretIn(text: string, registered: readonly GameSecret[] = []): SecretKind | undefined {
  return secretShaped(text, registered) ?? (CODE_WORDS.test(text) ? 'solution' : undefined);
}

/** What any text carrying a secret contains: a registered one, a code, a password, a hiding place, a number to try. */
function secretShaped(text: string, registered: readonly GameSecret[]): SecretKind | undefined {
  for (const secret of registered) if (carries(text, secret)) return secret.kind;
  // A year in a life story ("my grandmother's 1958 Vespa") is not a code, unless a code word is near.
  const runs = codeLikeRuns(text);
  if (runs.some((r) => !/^(?:1[89]\d\d|20[0-4]\d)$/.test(r)) || (runs.length > 0 && CODE_WORDS.test(text))) return 'code';
  if (/\bpass-?(?:word|phrase|code)s?\b|\bmagic word\b/i.test(text)) return 'password';
  if (LOCATION_OF_ITEM.test(text) || HIDING.test(text) || LOOK_UNDER.test(text)) return 'item_location';
  if (TRY_NUMBER.test(text)) return 'code';
  return undefined;
}

/** Progress in the room: something found, opened or solved ("we cracked the safe"). */
const PROGRESS =
  /\b(?:i|we)\s+(?:just\s+|finally\s+)?(?:found|opened|unlocked|solved|cracked|discovered|escaped|hid|figured out|worked out)\b[^.?!]{0,30}\b(?:key|keys|code|clue|door|lock|box|safe|puzzle|riddle|note|map|chest|drawer|passage|exit|way out|combination|cipher|it|this|that|room|vault|hatch|panel)\b/i;
/** Thinking aloud about the room's answer: "I think the answer is ..." is about the game, not the speaker. */
const SURMISE = /\b(?:i|we)\s+(?:think|guess|bet|reckon|believe|suspect|know)\b/i;

/**
 * Whether a clause carries a game detail. A clause about the speaker's own life
 * (`aboutSpeaker`) is judged by what a game detail must contain, a registered secret, a code,
 * a password, a hiding place, progress in the room, or a surmise about the answer, and not by a
 * game word alone: "my wife's the puzzle genius of the two of us" is about the wife.
 */
export function gameDetail(text: string, aboutSpeaker: boolean, registered: readonly GameSecret[] = []): SecretKind | undefined {
  if (!aboutSpeaker) return secretIn(text, registered) ?? (PROGRESS.test(text) ? 'solution' : undefined);
  const shaped = secretShaped(text, registered);
  if (shaped) return shaped;
  if (PROGRESS.test(text)) return 'solution';
  if (CODE_WORDS.test(text) && SURMISE.test(text)) return 'solution';
  return undefined;
}

function carries(text: string, secret: GameSecret): boolean {
  const normalized = normalize(text);
  const target = normalize(secret.text);
  if (target.length > 0 && normalized.includes(target)) return true;
  // A code, however it is spelled: "4792", "4-7-9-2", "four seven nine two".
  const secretDigits = digitRuns(secret.text).join('');
  if (secretDigits.length >= 3) {
    const runs = digitRuns(text);
    if (runs.some((r) => r.includes(secretDigits)) || runs.join('').includes(secretDigits)) return true;
  }
  // A phrase, paraphrased: most of its content words, at least two of them.
  const words = contentWords(secret.text);
  if (words.size >= 2) {
    const present = contentWords(text);
    let hits = 0;
    for (const w of words) if (present.has(w)) hits++;
    if (hits >= 2 && hits / words.size >= 0.6) return true;
  }
  // A one-word answer ("moby dick" counts as a phrase above): as a whole word.
  if (words.size === 1) {
    const [w] = [...words];
    if (w && w.length >= 4 && contentWords(text).has(w)) return true;
  }
  return false;
}

const normalize = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

const FILLER = new Set([
  'the', 'a', 'an', 'is', 'are', 'was', 'were', 'in', 'on', 'at', 'of', 'to', 'and', 'or', 'it', 'its', 'this', 'that',
  'under', 'behind', 'inside', 'with', 'for', 'by', 'from', 'be', 'has', 'have', 'hidden', 'kept', 'there', 'into',
]);

function contentWords(s: string): Set<string> {
  return new Set(
    normalize(s)
      .split(' ')
      .filter((w) => w.length >= 3 && !FILLER.has(w))
      .map((w) => w.replace(/(?:es|s)$/, '')),
  );
}

/** What a generalized fragment must not contain. */
export interface GeneralizeContext {
  /** Names heard in this batch (speakers' names, relatives' names): removed. */
  names: readonly string[];
  /** Ids of the scope (game, room, npc, participants): a fragment carrying one is dropped. */
  ids: readonly string[];
  registered: readonly GameSecret[];
}

/**
 * A candidate's value made into an anonymous fragment: no ids, no names, no game details.
 * Returns undefined when it cannot be made safe (it is then not kept as a fragment at all).
 */
export function generalize(value: string, ctx: GeneralizeContext): string | undefined {
  if (secretIn(value, ctx.registered)) return undefined;
  const lower = value.toLowerCase();
  if (ctx.ids.some((id) => id.length >= 3 && lower.includes(id.toLowerCase()))) return undefined;
  let text = value;
  for (const name of ctx.names) {
    if (name.length < 2) continue;
    text = text.replace(new RegExp(`\\b${escapeRegExp(name)}\\b`, 'gi'), 'someone');
  }
  // Contact details and handles are identifiers too.
  text = text
    .replace(/\S+@\S+\.\S+/g, '')
    .replace(/@\w+/g, '')
    .replace(/https?:\/\/\S+/g, '')
    .replace(/\+?\d[\d\s().-]{6,}\d/g, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
  // Capitalized words inside the value (not its first word) are likely names: refuse rather than guess,
  // except for a make-and-model after a year ("a 1967 Mustang").
  const inner = text.split(/\s+/).slice(1);
  const suspicious = inner.filter((w, i) => /^[A-Z][a-z]+/.test(w) && !/^(?:1[89]\d\d|20\d\d)$/.test(inner[i - 1] ?? text.split(/\s+/)[0] ?? ''));
  if (suspicious.length > 0) return undefined;
  return text.length >= 3 ? text : undefined;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
