/**
 * English as players write it, for the offline components on both sides of the boundary (the
 * memory service's extractor, the NPC runtime's offline responder). Built on wink-nlp's English
 * model: tokens, parts of speech and lemmas; this module adds what a chat line needs on top:
 * filler and @mentions removed, clauses, person (who a clause is about), and re-voicing a
 * first-person clause in the second or third person ("I keep bees" -> "you keep bees").
 *
 * Nothing here knows a memory tier or a game rule: it only reads language.
 */
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

const nlp = winkNLP(model);
const its = nlp.its;

export interface Token {
  /** As written. */
  text: string;
  /** Lowercase, contractions kept as their own token ("'ve"). */
  lower: string;
  lemma: string;
  /** Universal POS tag (PRON, VERB, AUX, NOUN, PROPN, ADJ, ADP, DET, CCONJ, SCONJ, INTJ, PUNCT, NUM, ...). */
  pos: string;
  /** Whether a space preceded it in the original. */
  spaced: boolean;
}

export interface Clause {
  tokens: Token[];
  text: string;
  question: boolean;
  /** Whether it goes on the sentence of the clause before it (split at a comma or a conjunction). */
  continues?: boolean;
  /** The comma or conjunction it was split from the clause before at. */
  joinedBy?: Token;
  /** Whether a colon closed it: it introduces what follows ("fun fact: ..."). */
  introduces?: boolean;
}

/** Chat filler that carries nothing: dropped at the edges of a clause. */
const FILLER = new Set(
  'ok okay so hmm hm um uh uhh ugh oh ah well lol lmao haha hahaha hehe tbh honestly anyway anyways btw yeah yep yes no nah hey hi hello like guys right omg wow just wait random also brb rn ngl lowkey literally'.split(' '),
);
/** Filler that turns to another subject: what follows it is a clause of its own. */
const CHANGING_SUBJECT = new Set(['anyway', 'anyways', 'btw']);
const OPENING_FILLER = new Set(['wait', 'random', 'also', 'just', 'like', 'right']);
const FIRST_PERSON = new Set(['i', 'me', 'my', 'mine', 'myself', 'we', 'us', 'our', 'ours', 'ourselves']);
const SECOND_PERSON = new Set(['you', 'your', 'yours', 'yourself', 'ya', 'u']);

/** "I'm" and "i'm" are one token in the model; spelled out first so the pronoun is seen. */
function expand(text: string): string {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\b([Ii])'m\b/g, '$1 am')
    .replace(/\b([Ii])m\b(?=\s)/g, '$1 am')
    .replace(/\bim\b(?=\s+(?:a|an|so|really|very|from|in|at|not|allergic|afraid|scared|terrified|into|from)\b)/gi, 'I am');
}

/**
 * Text without @mentions (an address, not content). The punctuation after one stays where it parts
 * two clauses ("quit deloitte @Elias, spotify offered me more"), not where it only closed the
 * address ("@Elias, I'm from Cork").
 */
export const withoutMentions = (text: string) =>
  text
    .replace(/(^|\s)@[\p{L}\p{N}_.-]+/gu, '$1')
    .replace(/^[\s,:]+/, '')
    .replace(/([.!?])\s*[,:]/g, '$1')
    .replace(/\s+([,:])/g, '$1')
    .replace(/([,:])[\s,:]*[,:]/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();

export function tokens(text: string): Token[] {
  const written = expand(withoutMentions(text));
  const meant = respelled(written);
  const doc = nlp.readDoc(meant);
  const all = doc.tokens();
  const raw = all.out() as string[];
  const lemmas = all.out(its.lemma as never) as unknown as string[];
  const pos = all.out(its.pos) as string[];
  const spaces = all.out(its.precedingSpaces) as string[];
  // A respelled word is read as meant and kept as written (a swap keeps every word in its place).
  let at = 0;
  return raw.map((read, i) => {
    const start = meant === written ? -1 : meant.indexOf(read, at);
    const text = start < 0 ? read : written.slice(start, start + read.length);
    if (start >= 0) at = start + read.length;
    const lower = read.toLowerCase();
    return { text, lower, lemma: String(lemmas[i]).toLowerCase(), pos: String(pos[i]), spaced: (spaces[i] ?? '').length > 0 };
  });
}

/**
 * The model's vocabulary ends where the first word it has never seen is numbered: wink-nlp gives
 * every word of its lexicon an id below that, and each new word the next one after it.
 */
const VOCABULARY = Number(nlp.readDoc('qxzvqxzv').tokens().out(its.uniqueId)[0]);
const inVocabulary = (word: string) => Number(nlp.readDoc(word).tokens().out(its.uniqueId)[0]) < VOCABULARY;
const respellings = new Map<string, string | null>();

/**
 * A line with its lowercase words of five letters or more that the model has never seen, typed
 * with two neighbouring letters swapped, spelled as meant when exactly one swap gives a word it
 * knows ("friady" -> "friday", "reaidng" -> "reading"): the commonest slip of fast typing, and
 * one that makes the tagger read a verb or a day as an unknown noun. Names (capitalized) are left
 * alone.
 */
function respelled(text: string): string {
  return text.replace(/(?<![\p{L}'])\p{Ll}{5,}(?![\p{L}'])/gu, (word) => {
    let meant = respellings.get(word);
    if (meant === undefined) {
      meant = null;
      if (!inVocabulary(word)) {
        const swaps = new Set<string>();
        for (let i = 0; i < word.length - 1; i++) if (word[i] !== word[i + 1]) swaps.add(word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2));
        const known = [...swaps].filter(inVocabulary);
        if (known.length === 1) meant = known[0]!;
      }
      if (respellings.size >= RESPELLINGS_LIMIT) respellings.clear();
      respellings.set(word, meant);
    }
    return meant ?? word;
  });
}
const RESPELLINGS_LIMIT = 10_000;

export function render(toks: readonly Token[]): string {
  return toks
    .map((t, i) => (i > 0 && t.spaced ? ' ' : '') + t.text)
    .join('')
    .trim();
}

const isSubject = (t: Token | undefined) => !!t && (t.pos === 'PRON' || t.lower === 'i') && !['it', 'that', 'this', 'what', 'who', 'me', 'us', 'him', 'them', 'whom'].includes(t.lower);

/**
 * Sentences split into clauses at punctuation and coordinating conjunctions, only where what
 * follows can stand alone (a subject and a verb, or "my <noun>"): "I'm allergic to cats and my
 * sister Mia would love this" is two clauses; "two cats, Pixel and Moss" stays one.
 */
export function clauses(text: string): Clause[] {
  const all = tokens(text);
  const out: Clause[] = [];
  let current: Token[] = [];
  // Whether the next clause goes on the sentence of the one just flushed.
  let inSentence = false;
  let boundaryToken: Token | undefined;
  const flush = (endsSentence: boolean, at?: Token, introduces = false) => {
    const trimmed = trimFiller(current);
    const last = current[current.length - 1];
    if (trimmed.length > 0 && trimmed.some((t) => t.pos !== 'PUNCT')) {
      out.push({
        tokens: trimmed,
        text: render(trimmed),
        question: last?.text === '?' || asks(trimmed),
        ...(inSentence ? { continues: true, ...(boundaryToken ? { joinedBy: boundaryToken } : {}) } : {}),
        ...(introduces ? { introduces } : {}),
      });
      inSentence = !endsSentence;
    } else if (endsSentence) inSentence = false;
    boundaryToken = at;
    current = [];
  };
  for (let i = 0; i < all.length; i++) {
    const t = all[i]!;
    if (t.pos === 'PUNCT' && /^[.!?;]+$/.test(t.text)) {
      current.push(t);
      flush(true);
      continue;
    }
    // A colon always ends what came before ("fun fact: ...", "quick q: ...").
    if (t.pos === 'PUNCT' && t.text === ':') {
      flush(true, undefined, true);
      continue;
    }
    const boundary = (t.pos === 'PUNCT' && /^[,\u2013\u2014-]+$/.test(t.text)) || (t.pos === 'CCONJ' && ['and', 'but', 'so', 'or'].includes(t.lower));
    // "Ruben and I used to ...": a conjunction after a verbless start joins two subjects, not two clauses.
    const joinsSubjects = t.pos === 'CCONJ' && !current.some((c) => c.pos === 'VERB' || c.pos === 'AUX');
    // ("Born and raised in Izmir": a conjunction after one word joins two words, not two clauses.)
    const joinsWords = t.pos === 'CCONJ' && trimFiller(current).length === 1;
    if (boundary && !joinsSubjects && !joinsWords && current.length > 0 && startsClause(all, i + 1)) {
      flush(false, t);
      continue;
    }
    current.push(t);
  }
  flush(true);
  return out;
}

const WH = new Set(['what', "what's", 'whats', 'where', "where's", 'wheres', 'who', "who's", 'whom', 'whose', 'which', 'when', 'why', 'how']);
/** Wh-words that open a question and never a relative clause after a comma. */
const ASKING = new Set(['what', 'where', 'how', 'why']);
const INVERTING = new Set(['do', 'does', 'did', 'is', 'are', 'was', 'were', 'can', 'could', 'would', 'will', 'have', 'has', 'am', 'should']);

/**
 * A question written without its question mark: a wh-word first ("where do I live"), an
 * auxiliary before its subject ("do you know my dog's name"), or a request to be told or
 * reminded ("tell me where I work", "remind me what I do"), or an ellipsis ("anything about my family").
 */
function asks(toks: readonly Token[]): boolean {
  const [a, b] = toks;
  if (!a) return false;
  if (WH.has(a.lower)) return true;
  // "sorry I missed it, what did she say": a question after what opens the clause.
  if (toks.some((t, i) => i > 0 && toks[i - 1]!.text === ',' && WH.has(t.lower) && ['AUX', 'VERB'].includes(toks[i + 1]?.pos ?? ''))) return true;
  if (INVERTING.has(a.lower) && b && (b.pos === 'PRON' || b.lower === 'i')) return true;
  if (['tell', 'remind'].includes(a.lower) && b?.lower === 'me') return true;
  // "hey Elias what do I do for work": a name before the question.
  const named = toks.findIndex((t) => t.pos !== 'PROPN');
  if (named > 0 && WH.has(toks[named]!.lower)) return true;
  if (notKnowing(toks)) return true;
  // "any idea where I work", "anything about my family": asking whether there is something to tell.
  return (a.lower === 'any' && toks.some((t) => t.lower === 'idea')) || (['anything', 'something'].includes(a.lower) && ['about', 'on', 'regarding'].includes(b?.lower ?? ''));
}

/** Verbs of knowing: "do you remember", "I forget", "can't recall". */
const KNOWING = new Set(['know', 'remember', 'recall', 'recollect', 'forget']);

/**
 * A question put as not knowing, before what is not known (a wh-word, "if", or something of the
 * speaker's): "I forget what my cat is called", "bet you don't remember where I grew up", "can't
 * recall if I told you what I'm allergic to", "you remember what I do for work", "wonder if you
 * know my job". Not the request "forget what I said" (no subject before it), nor "I know what I
 * want" (only the listener's knowing is asked about; one's own only when it fails).
 */
function notKnowing(toks: readonly Token[]): boolean {
  return toks.some((t, i) => {
    const after = toks.slice(i + 1);
    const before = toks.slice(Math.max(0, i - 3), i).map((x) => x.lower);
    const unknown = after.some((x) => WH.has(x.lower) || ['if', 'whether', 'my'].includes(x.lower));
    if (t.lemma === 'wonder') return unknown && (i === 0 || before.includes('i'));
    if (!KNOWING.has(t.lemma) || !unknown) return false;
    const listener = before.some((w) => SECOND_PERSON.has(w));
    const denied = before.some((w) => ['not', "n't", 'never'].includes(w));
    const forgetting = t.lemma === 'forget' && (before.includes('i') || listener);
    return listener || forgetting || (denied && t.lemma !== 'know');
  });
}

const ADDRESSING_OTHERS = new Set(['anyone', 'anybody', 'everyone', 'everybody', 'someone', 'somebody']);

/** Whether the tokens from `i` can stand alone as a clause. */
function startsClause(all: readonly Token[], i: number): boolean {
  let j = i;
  while (j < all.length && (FILLER.has(all[j]!.lower) || all[j]!.pos === 'INTJ' || (all[j]!.pos === 'CCONJ') || all[j]!.pos === 'PUNCT')) j++;
  const first = all[j];
  if (!first) return false;
  // A word that changes the subject ("..., anyway baker by trade", "..., btw allergic to kiwi")
  // starts a clause whatever follows it.
  if (all.slice(i, j).some((t) => CHANGING_SUBJECT.has(t.lower)) && first.pos !== 'PUNCT') return true;
  if (['my', 'our', 'your'].includes(first.lower) && all[j + 1]?.pos !== undefined) return true;
  // A request to be told: "..., remind me what I do for a living".
  if (['tell', 'remind'].includes(first.lower) && all[j + 1]?.lower === 'me') return true;
  // A turn to the others in the room: "grew up in manila, anyone else filipino here?".
  if (ADDRESSING_OTHERS.has(first.lower)) return true;
  // A question after a statement: "garth brooks is my guy, is that him playing?", "..., what do you think".
  const next = all[j + 1];
  // (Not a relative clause: "my sister, who lives in Oslo, is a nurse".)
  if (next && ((INVERTING.has(first.lower) && (next.pos === 'PRON' || ['that', 'this'].includes(next.lower))) || (ASKING.has(first.lower) && next.pos === 'AUX'))) return true;
  if (isSubject(first) || first.pos === 'PROPN') {
    for (let k = j + 1; k < Math.min(all.length, j + 4); k++) if (all[k]!.pos === 'VERB' || all[k]!.pos === 'AUX') return true;
  }
  // An elided subject: "..., grew up in Halifax", "..., been at Globex for years", "..., gotta ask my wife".
  if (SEMI_MODALS.has(first.lower) && all[j + 1]?.pos === 'VERB') return true;
  if (first.lower === 'been' && all[j + 1] !== undefined) return true;
  return first.pos === 'VERB' && inflected(first) && !['forget', 'scrap', 'ignore'].includes(first.lemma);
}

/**
 * A clause without what it says follows from it: "my day job's at a game studio so i'm judging
 * this room's design" without "so i'm judging ...", "swiftie since 2008, that's why i know the
 * lyric" without "that's why ...". The consequence opens on "so" before a subject or an "if",
 * or on "that's / which is why"; undefined when the clause has none, or nothing before it.
 */
export function beforeConsequence(clause: Clause): Clause | undefined {
  const toks = clause.tokens;
  const at = toks.findIndex((t, i) => i > 0 && consequenceAt(toks, i));
  if (at < 0) return undefined;
  const head = trimFiller(toks.slice(0, at));
  if (!head.some((t) => t.pos !== 'PUNCT')) return undefined;
  return { ...clause, tokens: head, text: render(head), question: asks(head) };
}

function consequenceAt(toks: readonly Token[], i: number): boolean {
  const [t, next, after] = [toks[i]!, toks[i + 1], toks[i + 2]];
  if (t.lower === 'so') return isSubject(next) || next?.lower === 'if';
  // "that's why", "thats why", "which is why"
  return ['that', 'thats', 'which'].includes(t.lower) && (next?.lower === 'why' || (['is', "'s"].includes(next?.lower ?? '') && after?.lower === 'why'));
}

function trimFiller(toks: readonly Token[]): Token[] {
  let a = 0;
  let b = toks.length;
  // "No" before what it denies ("no shrimp for me", "no dairy ever") is the meaning, not filler.
  const denies = (i: number) => toks[i]!.lower === 'no' && ['NOUN', 'ADJ', 'PROPN', 'NUM'].includes(toks[i + 1]?.pos ?? '');
  const edge = (i: number) => {
    const t = toks[i]!;
    return (FILLER.has(t.lower) && !denies(i)) || t.pos === 'INTJ' || t.pos === 'PUNCT' || t.pos === 'CCONJ' || t.pos === 'SYM';
  };
  while (a < b && edge(a)) a++;
  // Some filler only opens a line ("wait, ...", "random but ..."): at the end it is a word ("can't wait").
  while (b > a && edge(b - 1) && !OPENING_FILLER.has(toks[b - 1]!.lower)) b--;
  // "Hi there, ..." leaves "there" as an adverb: a greeting, not content.
  return toks.slice(a, b);
}

/** Who a clause speaks about: the speaker (first person), the listener, or neither. */
export function person(clause: Clause): 'first' | 'second' | 'other' {
  // A "you" in what only qualifies a statement made ("montreal bands hit different when you live
  // here") is anyone, not the listener.
  let qualifying = false;
  let said = false;
  for (const t of clause.tokens) {
    if (FIRST_PERSON.has(t.lower)) return 'first';
    if (SECOND_PERSON.has(t.lower) && !qualifying && !askedToKnow(clause.tokens, t)) return 'second';
    said ||= t.pos === 'VERB' || t.pos === 'AUX';
    qualifying ||= said && QUALIFIERS.has(t.lower);
  }
  // An elided first-person subject: "grew up just outside Halifax", "been at Globex for years".
  if (elidedSubject(clause.tokens)) return 'first';
  return 'other';
}

/**
 * Whether a "you" is only asked whether it knows ("do you know what I do", "bet you don't remember
 * my job"): the clause is about what is to be known.
 */
function askedToKnow(toks: readonly Token[], you: Token): boolean {
  const at = toks.indexOf(you);
  return you.lower !== 'your' && toks.slice(at + 1, at + 4).some((t) => KNOWING.has(t.lemma));
}

/** Words that open what qualifies a statement: when, if, once ... */
export const QUALIFIERS: ReadonlySet<string> = new Set(['when', 'whenever', 'if', 'once', 'unless', 'until', 'till']);

/** What opens a part that qualifies a clause: its qualifiers, and times and causes set beside it. */
const QUALIFYING: ReadonlySet<string> = new Set([...QUALIFIERS, 'while', 'before', 'after', 'since', 'because']);

/**
 * A clause without what qualifies it, where what it is about is said: "what do I do [when I'm not
 * stuck in here]", "[if we win,] who am I calling", "I've been fencing [since I was a kid]". A
 * qualifying part runs to the next comma or the end.
 */
export function unqualified(toks: readonly Token[]): Token[] {
  const out: Token[] = [];
  let qualifying = false;
  for (const t of toks) {
    if (QUALIFYING.has(t.lower)) qualifying = true;
    else if (qualifying && t.text === ',') qualifying = false;
    else if (!qualifying) out.push(t);
  }
  return out;
}

/** Spoken modals the tagger reads as nouns: "gotta ask", "gonna try", "wanna see". */
const SEMI_MODALS = new Set(['gotta', 'gonna', 'wanna']);
const MODALS = new Set(['can', 'ca', 'could', 'would', 'will', 'wo', 'should', 'might', 'must']);

/**
 * Whether a clause opens on its verb, its first-person subject left out: an inflected verb
 * ("grew up just outside Halifax", "thinking of entering a contest"), "been", or a modal before a
 * verb ("could eat curry every day", "can't go near kiwis").
 */
function elidedSubject(toks: readonly Token[]): boolean {
  const [first, second, third] = toks;
  if (!first) return false;
  if (first.lower === 'been') return true;
  // "feels like forever": a third-person verb left its subject ("it") out, not the speaker.
  const thirdPerson = first.lower === `${first.lemma}s` || first.lower === `${first.lemma}es` || first.lower === 'is' || first.lower === 'has';
  if (first.pos === 'VERB' && inflected(first) && !thirdPerson && !FIRST_PERSON.has(first.lower)) return true;
  // A gerund the tagger took for a noun, before what it acts on: "reading every label for celery".
  if (first.pos === 'NOUN' && /ing$/.test(first.lower) && second?.pos === 'DET') return true;
  const next = second && ['not', "n't"].includes(second.lower) ? third : second;
  // ("Have" is a verb of its own after a modal, whatever the tagger says: "can't have celery".)
  return (MODALS.has(first.lower) || SEMI_MODALS.has(first.lower)) && (next?.pos === 'VERB' || next?.lemma === 'have');
}

/**
 * A verb form that is not its lemma ("grew", "thinking"), or that reads as a past or a gerund
 * although the tagger could not lemmatize it (a typo: "statred as a nurse").
 */
function inflected(t: Token): boolean {
  return t.lemma !== t.lower || /(?:ed|ing)$/.test(t.lower);
}

/** A clause whose subject was left out ("grew up in Halifax") gets its speaker back. */
export function withSubject(clause: Clause): Token[] {
  const first = clause.tokens[0];
  if (!first) return [];
  const pronoun = (text: string, spaced = true): Token => ({ text, lower: text.toLowerCase(), lemma: text.toLowerCase(), pos: 'PRON', spaced });
  if (first.lower === 'been') return [pronoun('I', false), { ...pronoun('have'), pos: 'AUX' }, { ...first, spaced: true }, ...clause.tokens.slice(1)];
  // A gerund takes its auxiliary back too: "thinking of a contest" -> "I am thinking of a contest".
  // So does a passive: "born in Lagos" -> "I was born in Lagos".
  const be = /ing$/.test(first.lower) ? [{ ...pronoun('am'), pos: 'AUX' }] : PASSIVE.has(first.lower) ? [{ ...pronoun('was'), pos: 'AUX' }] : [];
  if (elidedSubject(clause.tokens)) return [pronoun('I', false), ...be, { ...first, text: first.lower === 'i' ? first.text : first.text.toLowerCase(), spaced: true }, ...clause.tokens.slice(1)];
  return [...clause.tokens];
}

/** Participles said without their "was" ("born and raised in Izmir"). */
const PASSIVE = new Set(['born', 'raised', 'brought']);

const SECOND: Record<string, string> = {
  i: 'you', me: 'you', my: 'your', mine: 'yours', myself: 'yourself',
  we: 'you', us: 'you', our: 'your', ours: 'yours', ourselves: 'yourselves',
  am: 'are', "'m": "'re",
};
const THIRD: Record<string, string> = {
  i: 'they', me: 'them', my: 'their', mine: 'theirs', myself: 'themselves',
  we: 'they', us: 'them', our: 'their', ours: 'theirs', ourselves: 'themselves',
  am: 'are', "'m": "'re",
};

/**
 * A first-person clause said back to its speaker ("I was born in Cork" -> "You were born in
 * Cork") or about them ("they were born in Cork"). Other words are kept as written.
 */
export function revoice(toks: readonly Token[], to: 'second' | 'third'): string {
  const table = to === 'second' ? SECOND : THIRD;
  const out: Token[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const prev = out[out.length - 1];
    let word = table[t.lower];
    if (t.lower === 'was' && prev && ['you', 'they'].includes(prev.lower)) word = 'were';
    if (t.lower === 'was' && i > 0 && ['i', 'we'].includes(toks[i - 1]!.lower)) word = 'were';
    if (t.lower === 'have' && to === 'third' && prev?.lower === 'they') word = undefined;
    // Inside a hyphenated word ("forget-me-not") nothing is re-voiced.
    if (word && (toks[i - 1]?.text === '-' && !t.spaced || (toks[i + 1]?.text === '-' && !toks[i + 1]!.spaced))) word = undefined;
    if (word) {
      const cased = i === 0 || t.text[0] === t.text[0]!.toUpperCase() && t.lower !== 'i' ? word.charAt(0).toUpperCase() + word.slice(1) : word;
      out.push({ ...t, text: i === 0 ? cased : word, lower: word });
    } else {
      out.push(t);
    }
  }
  return render(out);
}

/** Words that place a statement in the present, against what came before it (and "these days"). */
const NOW = new Set(['now', 'nowadays', 'anymore', 'instead', 'currently']);
/** Where a sentence turns from what was to what is: "Mexico fell through, so it's Kenya now". */
const TURNS = new Set([',', ';', 'so', 'but', '-', '–']);

/**
 * What a statement says is the case now, when it also says what no longer is: "Mexico fell
 * through so it's Kenya now" -> "it's Kenya now"; "you're over curry, it's all paella for you
 * now" -> "it's all paella for you now"; "not in Denver anymore, Austin since March" -> "Austin
 * since March". The text as it is otherwise.
 */
export function currentPart(text: string): string {
  const toks = tokens(text);
  const now = (part: readonly Token[]) => part.some((t, i) => NOW.has(t.lower) || (t.lower === 'these' && part[i + 1]?.lower === 'days'));
  const says = (part: readonly Token[]) => part.some((t) => ['NOUN', 'PROPN', 'ADJ', 'VERB'].includes(t.pos) && !['be', 'have', 'do', 'get'].includes(t.lemma));
  // (A gerund after the verb names a thing too: "picked up climbing instead".)
  const names = (part: readonly Token[]) => part.some((t, i) => ['NOUN', 'PROPN'].includes(t.pos) || (i > 0 && t.pos === 'VERB' && t.lower.endsWith('ing')));
  const denied = (part: readonly Token[]) => part.some((t) => ['not', "n't", 'never', 'no'].includes(t.lower));
  // A state denied from now on: "not in Denver anymore", "no longer a nurse".
  const over = (part: readonly Token[]) => denied(part) && part.some((t) => ['anymore', 'longer', 'more'].includes(t.lower));
  for (let i = toks.length - 2; i > 0; i--) {
    if (!TURNS.has(toks[i]!.lower)) continue;
    const before = toks.slice(0, i);
    let after = toks.slice(i + 1);
    while (after[0] && TURNS.has(after[0].lower)) after = after.slice(1);
    if (now(after) && !now(before) && says(before) && names(after)) return render(after);
    // "Not in Denver anymore, Austin since March": what ended, then what is.
    if (over(before) && !denied(after) && names(after)) return render(after);
    // "I'm a chef now, the plumber thing didn't work out": what is now, without what did not last.
    if (now(before) && !now(after) && denied(after) && names(before)) return render(before);
  }
  // One thing given for another ("swapped violin for the ukulele", "replaced the Golf with a
  // Tesla"): a switch to the other. (Done: "I trade stocks for a living" tells no exchange.)
  const exchange = toks.findIndex((t) => t.pos === 'VERB' && EXCHANGES[t.lemma] !== undefined && /ed$/.test(t.lower));
  if (exchange >= 0) {
    // ("Traded in the Civic": the particle belongs to the verb.)
    const start = exchange + (['in', 'out', 'up'].includes(toks[exchange + 1]?.lower ?? '') ? 2 : 1);
    const by = toks.findIndex((t, i) => i > start && EXCHANGES[toks[exchange]!.lemma]!.includes(t.lower));
    const given = by > 0 ? toks.slice(start, by) : [];
    // (What was given is a thing, a gerund too: "swapped canarying for skating"; `names` reads a
    // gerund as one after the first word, hence the verb and the preposition in front.)
    const thing = (t: Token) => ['NOUN', 'PROPN', 'DET', 'ADJ', 'NUM', 'PRON'].includes(t.pos) || (t.pos === 'VERB' && t.lower.endsWith('ing'));
    if (by > 0 && given.every(thing) && names([toks[exchange]!, ...given]) && names(toks.slice(by))) {
      const switched = tokens('switched to').map((t, i) => (i === 0 ? { ...t, spaced: exchange > 0 } : t));
      return render([...toks.slice(0, exchange), ...switched, ...toks.slice(by + 1)]);
    }
  }
  // A change from one thing to another ("relocated from Auckland to Valencia"): what it is now.
  const from = toks.findIndex((t) => t.lower === 'from');
  const to = from > 0 ? toks.findIndex((t, i) => i > from + 1 && t.lower === 'to') : -1;
  if (to < 0) return text;
  const between = toks.slice(from + 1, to);
  const phrase = between.every((t) => ['NOUN', 'PROPN', 'DET', 'ADJ', 'NUM'].includes(t.pos)) && names(between);
  return phrase && names(toks.slice(to + 1)) ? render([...toks.slice(0, from), ...toks.slice(to)]) : text;
}

/** Verbs of giving one thing for another, and the word before what was taken instead. */
const EXCHANGES: Record<string, readonly string[]> = { swap: ['for'], trade: ['for'], exchange: ['for'], replace: ['with', 'by'] };

/**
 * The stems of a text's content words (Porter2, as wink-nlp gives them): "the swimming" and "you
 * swim every morning" share "swim", whatever part of speech each word is.
 */
export function contentStems(text: string): string[] {
  const doc = nlp.readDoc(expand(withoutMentions(text)));
  const pos = doc.tokens().out(its.pos) as string[];
  const stems = doc.tokens().out(its.stem as never) as unknown as string[];
  const words = doc.tokens().out(its.normal) as string[];
  return stems.filter((_, i) => ['NOUN', 'VERB', 'ADJ', 'PROPN'].includes(pos[i]!) && !FILLER.has(words[i]!)).map((x) => String(x).toLowerCase());
}

/** Content lemmas of a text (nouns, verbs, adjectives, proper nouns, numbers), for matching. */
export function contentLemmas(text: string): string[] {
  return tokens(text)
    .filter((t) => ['NOUN', 'VERB', 'ADJ', 'PROPN', 'NUM'].includes(t.pos) && !FILLER.has(t.lower))
    .map((t) => t.lemma);
}

export interface ForgetRequest {
  /** What to forget, as said ("my husband"), or '' for "that" (what the speaker said last). */
  about: string;
  /**
   * What else the line says, without the request ("scrap that, we moved to Geneva": "we moved to
   * Geneva"): it is told as any line is. The request is about what was said before the line.
   */
  besides?: string;
}

const FORGET_VERBS = new Set(['forget', 'scrap', 'disregard', 'ignore', 'delete', 'erase', 'drop', 'strike', 'unlearn', 'remove']);

/**
 * A request to forget something the speaker said: an imperative (or "please"/"can you") forget
 * verb whose object is what they said or told ("forget what I said about my husband", "scrap
 * that", "please forget my address", "never mind what I told you about the job"). It opens a
 * clause or follows a comma in one ("I overshared, forget everything about the team I support":
 * a clause does not split before an imperative).
 */
export function forgetRequest(text: string): ForgetRequest | undefined {
  // "Can you not remember anything about the allergy? Forget it": "it" is what was named before.
  let named = '';
  const all = clauses(text);
  for (const [i, clause] of all.entries()) {
    const mentionAt = clause.tokens.findIndex((t) => t.lower === 'about' || t.lower === 'regarding');
    if (mentionAt >= 0 && mentionAt < clause.tokens.length - 1) named = render(clause.tokens.slice(mentionAt + 1)).replace(/[?.!]+$/, '');
    const starts = [0, ...clause.tokens.flatMap((t, at) => (t.text === ',' ? [at + 1] : []))];
    for (const start of starts) {
      // The request runs to the next comma that a clause follows: "scrap what I said about the
      // Toyota, it's a Jeep now" (not "forget my address, and my phone number").
      const comma = clause.tokens.findIndex((t, at) => at > start && t.text === ',' && clause.tokens.slice(at + 1).some(verbal));
      const end = comma < 0 ? clause.tokens.length : comma;
      const request = askedToForget(clause.tokens.slice(start, end), named);
      if (request === null) return undefined;
      if (!request) continue;
      const parts = [render(clause.tokens.slice(0, Math.max(0, start - 1))), render(clause.tokens.slice(end + 1))].filter(Boolean).map((text) => ({ text }));
      // (A clause with no verb goes on naming what to forget: "forget my address, and my phone number".)
      const after = all.slice(i + 1);
      const besides = [...all.slice(0, i), ...parts, ...after.filter((c) => c.tokens.some(verbal))].map(asTold).join(' ');
      const more = request.about ? after.filter((c) => !c.tokens.some(verbal)).map((c) => c.text.replace(/[?.!]+$/, '')) : [];
      const asked = more.length ? { about: [request.about, ...more].join(' and ') } : request;
      return besides ? { ...asked, besides } : asked;
    }
  }
  return undefined;
}

const verbal = (t: Token) => t.pos === 'VERB' || t.pos === 'AUX';
/** A clause or part as a sentence of its own, for telling it apart from the line it was in. */
const asTold = (c: { text: string; question?: boolean }) => (/[.!?]$/.test(c.text) ? c.text : `${c.text}${c.question ? '?' : '.'}`);

/** The request to forget that opens `toks`, if one does; null for an attempt on the NPC's instructions. */
function askedToForget(all: readonly Token[], named: string): ForgetRequest | null | undefined {
  const opening = all.findIndex((t) => !(FILLER.has(t.lower) || t.pos === 'PUNCT' || t.pos === 'INTJ'));
  const toks = all.slice(Math.max(0, opening)).filter((t) => !['please', 'pls', 'plz', 'can', 'could', 'would', 'you', 'just', 'kindly', 'actually'].includes(t.lower));
  const first = toks[0];
  if (!first) return undefined;
  const neverMind = first.lower === 'never' && toks[1]?.lower === 'mind';
  // In the imperative: "dropped the gym" tells what the speaker did.
  if (!neverMind && (!FORGET_VERBS.has(first.lemma) || first.lower !== first.lemma)) return undefined;
  const rest = toks.slice(neverMind ? 2 : 1);
  // Not the NPC's own instructions or the game: those are the poisoning guard's.
  if (rest.some((t) => ['instruction', 'instructions', 'rule', 'rules', 'prompt', 'programming', 'persona', 'character'].includes(t.lower))) return null;
  if (rest.length > 0 && ['it', 'that'].includes(rest[0]!.lower) && rest.length === 1) return { about: named };
  const aboutAt = rest.findIndex((t) => t.lower === 'about' || t.lower === 'regarding');
  if (aboutAt >= 0) return { about: render(rest.slice(aboutAt + 1)).replace(/[?.!]+$/, '') };
  const said = rest.some((t) => ['say', 'tell', 'mention', 'share'].includes(t.lemma));
  if (rest.length === 0 || (rest.length === 1 && ['that', 'this', 'it'].includes(rest[0]!.lower)) || said) return { about: '' };
  if (rest[0] && ['my', 'our', 'the', 'that', 'this'].includes(rest[0].lower)) return { about: render(rest).replace(/[?.!]+$/, '') };
  return undefined;
}
