/**
 * What kind of thing a noun names, from WordNet (through wordpos): the lexicographer file of its
 * most frequent sense, WordNet's "supersense" (noun.act: archery, gardening; noun.food: curry;
 * noun.animal: hamster; noun.location: Lisbon), and whether it is someone's line of work (a
 * nurse, a plumber, an accountant: a kind of worker, professional or businessperson).
 *
 * This is how the offline extractor tells the topic of "obsessed with archery lately" or "as a
 * nurse I see some weird stuff" when no word of the line names one: from what the words are, not
 * from a list of phrasings. Lookups read WordNet's files and are cached.
 */
import WordPOS from 'wordpos';

export interface Sense {
  /** The supersense of the most frequent sense: "noun.act", "noun.person", "noun.food", ... */
  kind: string;
  /** The supersenses of all its senses: a kiwi is a plant, a person, a food and an animal. */
  kinds: readonly string[];
  /** A person's occupation: a worker, a professional, a businessperson, ... */
  occupation: boolean;
  /**
   * Whether it names a particular place (a city, a country, a state: an instance of a location
   * in WordNet): `usual` when that is its most frequent sense ("dublin", "kenya"), `possible` when
   * another comes first ("manila" is a paper before it is a city).
   */
  place?: 'usual' | 'possible';
  /** Someone of a family, and which side: a partner ("hubby", "missus") or a relative ("grandson"). */
  kin?: 'partner' | 'relative';
}

/** Hypernyms (WordNet lemmas) that make a person noun a line of work. */
const WORK = new Set(['worker', 'professional', 'businessperson', 'engineer', 'craftsman', 'employee', 'practitioner', 'expert', 'serviceman', 'official', 'scientist', 'artist', 'performer', 'entertainer', 'specialist', 'technician', 'educator', 'merchant', 'assistant', 'defender', 'laborer', 'skilled_worker', 'creator', 'communicator', 'operator', 'trainer', 'enrollee']);
/** Hypernyms (WordNet lemmas) of a partner and of a relative. */
const PARTNERS = new Set(['spouse', 'lover', 'girlfriend', 'boyfriend', 'fiance', 'fiancee', 'betrothed']);
const RELATIVES = new Set(['relative', 'offspring', 'parent', 'sibling', 'grandparent', 'grandchild', 'kin', 'kinsman', 'kinswoman']);
const MAX_DEPTH = 8;
const CACHE_LIMIT = 20_000;

let wordnet: WordPOS | undefined;

/** The sense of each lemma WordNet knows as a noun. */
export async function nounSenses(lemmas: Iterable<string>): Promise<Map<string, Sense>> {
  const unique = [...new Set(lemmas)].filter((l) => /^[\p{L}][\p{L}'-]*$/u.test(l));
  const found = await Promise.all(unique.map((l) => senseOf(l)));
  return new Map(unique.flatMap((l, i) => (found[i] ? [[l, found[i]!] as const] : [])));
}

/** A WordNet lookup remembered by its word (all forgotten at CACHE_LIMIT words); a failed one gives `otherwise`. */
function remembered<T>(look: (word: string) => Promise<T>, otherwise: () => T): (word: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (word) => {
    let hit = cache.get(word);
    if (!hit) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      hit = look(word).catch(otherwise);
      cache.set(word, hit);
    }
    return hit;
  };
}

const senseOf = remembered<Sense | undefined>((lemma) => lookup(lemma), () => undefined);

async function lookup(lemma: string): Promise<Sense | undefined> {
  wordnet ??= new WordPOS();
  const all = await wordnet.lookupNoun(lemma);
  const first = all[0];
  if (!first) return undefined;
  let occupation = false;
  let kin: Sense['kin'];
  if (first.lexName === 'noun.person') {
    // Up the first sense's hypernyms (all of them: a wife is a spouse and a woman): a line of
    // work, or someone of the family.
    let frontier = [first];
    for (let depth = 0; frontier.length > 0 && depth < MAX_DEPTH && !occupation && !kin; depth++) {
      for (const synset of frontier) {
        if (WORK.has(synset.lemma)) occupation = true;
        kin ??= PARTNERS.has(synset.lemma) ? 'partner' : RELATIVES.has(synset.lemma) ? 'relative' : undefined;
      }
      const up = frontier.flatMap((synset) => synset.ptrs.filter((p) => p.pointerSymbol === '@' || p.pointerSymbol === '@i').map((p) => p.synsetOffset));
      frontier = await Promise.all(up.map((offset) => wordnet!.seek(offset, 'n')));
    }
  }
  const instance = (x: (typeof all)[number]) => x.ptrs.some((p) => p.pointerSymbol === '@i');
  const named = (x: (typeof all)[number]) => x.lexName === 'noun.location' && instance(x);
  // Usually the place when that is its first sense, or when the word is a name in every sense
  // (Vancouver the city or the navigator; Wisconsin the state or the river): no common noun
  // ("manila" paper) is typed the same way.
  const place = named(first) || (all.some(named) && all.every(instance)) ? 'usual' : all.some(named) ? 'possible' : undefined;
  return { kind: first.lexName, kinds: [...new Set(all.map((x) => x.lexName))], occupation, ...(place ? { place } : {}), ...(kin ? { kin } : {}) };
}

const KIND_DEPTH = 12;

/**
 * Every kind of thing a noun names, from WordNet's hypernyms of all its senses (and the synsets'
 * other lemmas): "swahili" is a language, "denver" a city, "sax" a musical instrument, "basil" a
 * herb. Lemmas are lower-case, WordNet's spaces as underscores. Cached.
 */
export const kindsOf: (lemma: string) => Promise<ReadonlySet<string>> = remembered((lemma) => ancestors(lemma), () => new Set<string>());

async function ancestors(lemma: string): Promise<ReadonlySet<string>> {
  wordnet ??= new WordPOS();
  const out = new Set<string>();
  const seen = new Set<number>();
  let frontier = /^[\p{L}][\p{L}'-]*$/u.test(lemma) ? await wordnet.lookupNoun(lemma) : [];
  for (let depth = 0; depth < KIND_DEPTH && frontier.length > 0; depth++) {
    const up: number[] = [];
    for (const synset of frontier) {
      if (seen.has(synset.synsetOffset)) continue;
      seen.add(synset.synsetOffset);
      for (const l of synset.synonyms ?? [synset.lemma]) out.add(l.toLowerCase());
      for (const p of synset.ptrs) if (p.pointerSymbol === '@' || p.pointerSymbol === '@i') up.push(p.synsetOffset);
    }
    frontier = await Promise.all(up.map((offset) => wordnet!.seek(offset, 'n')));
  }
  return out;
}

/** Words before a place that say someone is, or comes from, there: "in dublin", "from lagos". */
export const AT_PLACE = new Set(['in', 'from', 'at', 'near', 'outside', 'around']);

/**
 * The text with the names of places written in lower case capitalized, as chat writes them
 * ("edinburgh is freezing", "good evening from lagos"): a word whose most frequent sense is a
 * particular place, or that has such a sense and follows a word of place ("grew up in manila").
 * The rest of the text is as written.
 */
export function withPlaceNames(text: string, senses: ReadonlyMap<string, Sense>): string {
  let out = text;
  for (const [lemma, sense] of senses) {
    if (!sense.place || !/^\p{Ll}[\p{L}'-]*$/u.test(lemma)) continue;
    const word = lemma.replace(/[-']/g, (c) => `\\${c}`);
    const before = sense.place === 'usual' ? '' : `(?<=\\b(?:${[...AT_PLACE].join('|')})\\s+)`;
    // (A possessive is still the name: "tulsa's got nothing like this".)
    out = out.replace(new RegExp(`${before}(?<![\\p{L}@'-])${word}(?![\\p{L}-]|'(?!s\\b))`, 'gu'), (w) => w.charAt(0).toUpperCase() + w.slice(1));
  }
  return out;
}

/**
 * Synsets (by a lemma of theirs) of putting an end to something one had or did: to discontinue
 * ("quit", "stop"), give up, abandon, get rid of, sell, call off, die ("the civic finally died"),
 * break up (a relation: "split up", "divorced").
 */
const ENDINGS = new Set(['discontinue', 'give_up', 'abandon', 'get_rid_of', 'forsake', 'call_off', 'drop_out', 'die', 'sell', 'break_up']);
const ENDING_SENSES = 2;
/**
 * In the past tense a verb tells what the speaker did, and a sense of ending further down its list
 * is what is meant ("dropped german": drop's 7th sense, "kicked the habit": kick's 6th); in the
 * present ("I drop the kids at school") only its most frequent senses are.
 */
const ENDING_SENSES_IN_PAST = 7;
const ENDING_DEPTH = 3;

/**
 * Whether a verb (a lemma, or a phrasal verb with WordNet's underscore: "give_up") says that
 * something came to an end in one of its two most frequent senses, from the verb's synsets and
 * their hypernyms: "quit", "gave up", "ditched", "sold", "got cancelled", "died". Cached.
 */
export const ends: (verb: string) => Promise<boolean> = remembered((verb) => endsNow(verb, ENDING_SENSES), () => false);

/** Whether a verb in the past tense ("dropped", "kicked") says that something came to an end. Cached. */
export const endedInPast: (verb: string) => Promise<boolean> = remembered((verb) => endsNow(verb, ENDING_SENSES_IN_PAST), () => false);

async function endsNow(verb: string, senses: number): Promise<boolean> {
  if (!/^[\p{L}][\p{L}_-]*$/u.test(verb)) return false;
  wordnet ??= new WordPOS();
  let frontier = (await wordnet.lookupVerb(verb)).slice(0, senses);
  for (let depth = 0; depth <= ENDING_DEPTH && frontier.length > 0; depth++) {
    if (frontier.some((synset) => (synset.synonyms ?? [synset.lemma]).some((l) => ENDINGS.has(l.toLowerCase())))) return true;
    const up = frontier.flatMap((synset) => synset.ptrs.filter((p) => p.pointerSymbol === '@').map((p) => p.synsetOffset));
    frontier = await Promise.all(up.map((offset) => wordnet!.seek(offset, 'v')));
  }
  return false;
}
