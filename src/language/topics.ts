/**
 * Topics of a life, as the words that name them: what slot a self-disclosure fills ("my hamster
 * Pickles" -> pet) and what a question asks about ("who's my furry friend?" -> pet). Words are
 * matched by lemma, so any inflection counts; the lists name the topics of the memory design's
 * slots (DESIGN section 5), not phrasings of any dataset.
 */
import { clauses, render, type Token } from './index.js';
import { AT_PLACE, type Sense } from './senses.js';

export type Slot = 'name' | 'occupation' | 'home' | 'origin' | 'pet' | 'family' | 'health' | 'allergy' | 'likes' | 'dislikes' | 'fear' | 'trip' | 'hobby' | 'open';

/**
 * Words that say the speaker likes something without saying what kind of thing: a clause whose
 * only topic word is one of them ("obsessed with archery lately") leaves its topic to meaning.
 */
export const GENERIC_LIKING: readonly string[] = ['love', 'like', 'enjoy', 'adore', 'favorite', 'favourite', 'fan', 'obsess', 'obsessed', 'obsession', 'prefer', 'into', 'hooked'];

/** What a liking is of: food or music, the two kinds of taste people tell most. */
const FOOD_WORDS = ['dish', 'meal', 'food', 'cuisine', 'eat', 'cook', 'dinner', 'lunch', 'breakfast', 'snack'];
const MUSIC_WORDS = ['music', 'band', 'song', 'artist', 'listen', 'album', 'concert', 'gig', 'playlist', 'singer'];

/** The kind of taste the words of a text name ("what's my go-to dish?": food), if one. */
export function tasteNamed(toks: readonly Token[]): 'food' | 'music' | undefined {
  if (toks.some((t) => FOOD_WORDS.includes(t.lemma))) return 'food';
  if (toks.some((t) => MUSIC_WORDS.includes(t.lemma))) return 'music';
  return undefined;
}

/** Words for a partner and for a relative by birth (the two sides of a family, `kinOf`). */
const PARTNER_WORDS = ['relationship', 'date', 'dating', 'sweetheart', 'marry', 'married', 'engage', 'engaged', 'wife', 'husband', 'hubby', 'wifey', 'missus', 'bf', 'gf', 'partner', 'girlfriend', 'boyfriend', 'spouse', 'fiance', 'fiancee', 'fiancé', 'fiancée'];
const RELATIVE_WORDS = ['sister', 'brother', 'sibling', 'twin', 'sis', 'bro', 'mother', 'mom', 'mum', 'mommy', 'mummy', 'father', 'dad', 'daddy', 'parent', 'stepmom', 'stepdad', 'son', 'daughter', 'kid', 'child', 'children', 'baby', 'grandmother', 'grandma', 'granny', 'nan', 'grandfather', 'grandpa', 'grandad', 'grandson', 'granddaughter', 'grandchild', 'grandkid', 'stepson', 'stepdaughter', 'stepbrother', 'stepsister', 'aunt', 'auntie', 'uncle', 'cousin', 'niece', 'nephew'];

/** Lemmas that name a slot. Multi-valued slots take the naming noun as their key's last part. */
export const SLOT_LEMMAS: [Slot, readonly string[]][] = [
  ['allergy', ['reaction', 'allergic', 'allergy', 'intolerant', 'intolerance', 'anaphylactic', 'epipen']],
  ['health', ['asthma', 'asthmatic', 'diabetic', 'diabetes', 'vegan', 'vegetarian', 'celiac', 'coeliac', 'migraine', 'insomnia', 'colorblind', 'deaf', 'blind', 'pregnant', 'injury', 'injure', 'surgery', 'sick', 'illness', 'disease', 'condition', 'medication', 'doctor', 'medical']],
  ['fear', ['phobia', 'spook', 'afraid', 'scared', 'scare', 'terrified', 'terrify', 'fear', 'phobia', 'frightened', 'frighten', 'petrified', 'creep', 'freak', 'nightmare', 'dread']],
  ['family', [...PARTNER_WORDS, ...RELATIVE_WORDS, 'kin', 'relative', 'family']],
  ['pet', ['animal', 'furry', 'dog', 'cat', 'puppy', 'pup', 'kitten', 'pet', 'hamster', 'parrot', 'rabbit', 'bunny', 'horse', 'pony', 'goldfish', 'fish', 'tortoise', 'turtle', 'snake', 'lizard', 'ferret', 'gerbil', 'budgie', 'iguana', 'gecko', 'chicken', 'hen', 'goat', 'labrador', 'retriever', 'terrier', 'poodle', 'spaniel', 'collie', 'beagle', 'husky']],
  ['origin', ['root', 'hail', 'youth', 'upbringing', 'grow', 'born', 'bear', 'raise', 'originally', 'hometown', 'native', 'childhood']],
  ['home', ['household', 'address', 'live', 'move', 'reside', 'relocate', 'base', 'home', 'apartment', 'flat', 'house', 'neighborhood', 'neighbourhood', 'rent']],
  ['occupation', ['living', 'business', 'duty', 'coworker', 'workplace', 'work', 'job', 'employ', 'employer', 'career', 'profession', 'shift', 'boss', 'colleague', 'office', 'hire', 'company', 'firm', 'salary', 'retire', 'intern', 'freelance', 'trade']],
  ['trip', ['getaway', 'adventure', 'destination', 'itinerary', 'overseas', 'trip', 'travel', 'visit', 'holiday', 'vacation', 'fly', 'flight', 'backpack', 'journey', 'tour', 'cruise', 'abroad', 'honeymoon']],
  ['hobby', ['unwind', 'relax', 'chill', 'leisure', 'hobby', 'spare', 'weekend', 'pastime', 'collect', 'knit', 'paint', 'bake', 'hike', 'climb', 'garden', 'fish', 'surf', 'ski', 'skate', 'dance', 'sing', 'play', 'practice', 'practise', 'train', 'run', 'swim', 'cycle', 'brew', 'sew', 'draw']],
  ['likes', [...FOOD_WORDS, ...MUSIC_WORDS, ...GENERIC_LIKING]],
  ['dislikes', ['hate', 'dislike', 'loathe', 'despise', 'detest', 'stand']],
];


/** The speaker's own name: "my name is Ada", "call me Ada", "I'm Ada". */
function nameOf(toks: readonly Token[]): string | undefined {
  const lower = toks.map((t) => t.lower);
  const at = (i: number) => (toks[i]?.pos === 'PROPN' || /^[A-Z]/.test(toks[i]?.text ?? '') ? toks[i]!.text : undefined);
  for (let i = 0; i < toks.length; i++) {
    if (lower[i] === 'name' && ['my', 'the'].includes(lower[i - 1] ?? '') && ['is', "'s"].includes(lower[i + 1] ?? '')) return toks[i + 2]?.text;
    if (lower[i] === 'call' && lower[i + 1] === 'me') return at(i + 2);
    if (lower[i] === 'i' && lower[i + 1] === 'am' && toks.length <= 4) return at(i + 2);
    if (lower[i] === 'i' && ['am', "'m"].includes(lower[i + 1] ?? '') && lower[i + 2] === 'called') return at(i + 3);
  }
  return undefined;
}

/**
 * What a clause is about: its slot, the noun that named it, and whether only a generic word of
 * liking did. With the WordNet senses of its nouns (senses.ts), a clause no word of a topic names
 * can still be placed by what its nouns are ("obsessed with archery": a pastime).
 */
export function slotOf(toks: readonly Token[], senses?: ReadonlyMap<string, Sense>): { slot: Slot; noun?: string; generic?: boolean } {
  const found = slotByWords(toks);
  if (!senses) return found;
  const bySense = slotBySense(toks, senses);
  // Being named as a worker ("being a paramedic pays the rent") is what the clause says of the
  // speaker, whatever else its words name; unless it is about someone of theirs ("my sister").
  if (bySense?.slot === 'occupation' && !found.owned) return bySense;
  // Someone of the speaker's family ("my grandson Colt took me fishing") is what the clause is about.
  if (bySense?.slot === 'family' && !found.owned) return bySense;
  if (found.slot !== 'open' && !found.generic) return found;
  return bySense ?? found;
}

/** Activities WordNet files with pastimes that are not one: the game itself, a quarrel, a job. */
const NOT_PASTIMES = new Set(['game', 'fight', 'play', 'thing', 'job', 'work', 'trade', 'competition', 'contest', 'rent', 'phrase', 'music', 'escape', 'search', 'help', 'way', 'turn', 'move', 'try']);

/**
 * The slot a clause's nouns imply: a line of work said of the speaker ("as a nurse", "being a
 * paramedic", "plumber by trade"), an activity ("took up surfing", "obsessed with archery"), a
 * food they like ("could eat curry every day"), an animal of theirs ("got a little rabbit").
 */
function slotBySense(toks: readonly Token[], senses: ReadonlyMap<string, Sense>): { slot: Slot; noun?: string } | undefined {
  const denied = toks.some((t) => ['not', "n't", 'never', 'no'].includes(t.lower));
  const nouns = toks.flatMap((t, i) => (t.pos === 'NOUN' && senses.has(t.lemma) && !groupName(t, i) ? [{ t, i, sense: senses.get(t.lemma)! }] : []));
  const after = (i: number, ...words: string[]) => words.includes(toks[i - 1]?.lower ?? '') || words.includes(toks[i - 2]?.lower ?? '');
  const possessed = (i: number) => ['my', 'our'].includes(toks[i - 1]?.lower ?? '') || (['my', 'our'].includes(toks[i - 2]?.lower ?? '') && toks[i - 1]?.pos === 'ADJ');
  const relative = nouns.find(({ i, sense }) => sense.kin !== undefined && possessed(i));
  if (relative) return { slot: 'family', noun: relative.t.lemma };
  const work = nouns.find(({ t, i, sense }) => sense.kind === 'noun.person' && sense.occupation && !kinOf(t.lemma) && (after(i, 'a', 'an') || toks.slice(0, i).every((x) => x.pos !== 'VERB' && x.pos !== 'AUX' && x.pos !== 'PRON')));
  if (work) return { slot: 'occupation' };
  if (nouns.some(({ t, sense }) => sense.kind === 'noun.act' && !NOT_PASTIMES.has(t.lemma))) return { slot: 'hobby' };
  // Something edible the speaker must keep from ("can't go near kiwis"), or that their body
  // answers ("walnuts make my throat close up"), is about their health; otherwise a liking.
  const edible = nouns.some(({ sense }) => sense.kinds.includes('noun.food'));
  if (edible && (denied || nouns.some(({ sense }) => sense.kind === 'noun.body'))) return { slot: 'allergy' };
  if (edible && nouns.some(({ sense }) => sense.kind === 'noun.food')) return { slot: 'likes' };
  const animal = nouns.find(({ i, sense }) => sense.kind === 'noun.animal' && after(i, 'my', 'our', 'a', 'an'));
  if (animal) return { slot: 'pet', noun: animal.t.lemma };
  return undefined;
}

/** Words that set what follows them apart: "what keeps me busy outside of my job?" is not about the job. */
const SETTING_APART = new Set(['outside', 'besides', 'except', 'beyond', 'apart', 'other']);

/** Where a clause sets what follows apart ("outside", "besides", "apart from", "other than"), or -1. */
function setApartAt(all: readonly Token[]): number {
  return all.findIndex((t, i) => i > 0 && SETTING_APART.has(t.lower) && (t.lower !== 'other' || all[i + 1]?.lower === 'than') && (t.lower !== 'apart' || all[i + 1]?.lower === 'from'));
}

/**
 * A line with what its questions set apart left out ("what keeps me busy outside of my job?" ->
 * "what keeps me busy?"): what it asks about, for reading its meaning. Statements are kept whole.
 */
export function withoutSetApart(text: string): string {
  let out = text;
  for (const c of clauses(text)) {
    const at = c.question ? setApartAt(c.tokens) : -1;
    // (As written; a part the clause splitter re-spelled is left as it is.)
    if (at > 0) out = out.replace(render(c.tokens.slice(at)), '').replace(/\s+([?.!,])/g, '$1').replace(/\s{2,}/g, ' ');
  }
  return out;
}

function slotByWords(all: readonly Token[]): { slot: Slot; noun?: string; generic?: boolean; owned?: boolean } {
  if (nameOf(all)) return { slot: 'name' };
  const apart = setApartAt(all);
  const toks = apart > 0 ? all.slice(0, apart) : all;
  // The first slot named by a word of the clause; a possessed noun ("my sister") wins, as the
  // thing the clause is about.
  const possessed = toks.findIndex((t, i) => i > 0 && ['my', 'our'].includes(toks[i - 1]!.lower) || (i > 1 && ['my', 'our'].includes(toks[i - 2]!.lower) && toks[i - 1]!.pos === 'ADJ'));
  const named = (t: Token): { slot: Slot; noun?: string } | undefined => {
    for (const [slot, lemmas] of SLOT_LEMMAS) if (names(slot, lemmas, t, toks)) return { slot, noun: slot === 'pet' ? t.lemma : slot === 'family' ? familyNoun(t, toks) : undefined };
    return undefined;
  };
  // (A home possessed, "my flat", names where something happens more often than what it is about.)
  const owned = possessed >= 0 && !['flat', 'house', 'home', 'apartment'].includes(toks[possessed]!.lemma) ? named(toks[possessed]!) : undefined;
  if (owned) return { ...owned, owned: true };
  // Otherwise the most specific slot any word names (the table's order): "can't eat peanuts,
  // I'm allergic" is about an allergy before it is about food.
  for (const [slot, lemmas] of SLOT_LEMMAS) {
    const t = toks.find((x) => names(slot, lemmas, x, toks));
    if (t) return { slot, noun: slot === 'pet' ? t.lemma : slot === 'family' ? familyNoun(t, toks) : undefined, ...(slot === 'likes' && !toks.some((x) => x !== t && names(slot, lemmas, x, toks) && !isGeneric(x)) && isGeneric(t) ? { generic: true } : {}) };
  }
  // "I'm in Graz now", "we're over in Ghent": where the speaker is, by name, is where they live.
  const at = toks.findIndex((t) => ['i', 'we'].includes(t.lower));
  if (at >= 0 && ['be', 'am', "'m", 'are', "'re"].includes(toks[at + 1]?.lemma ?? '') && toks.slice(at + 2, at + 5).some((t, i, rest) => t.lower === 'in' && rest[i + 1]?.pos === 'PROPN')) return { slot: 'home' };
  return { slot: 'open' };
}

/**
 * Whether a clause carries a value of a single-valued slot, which then replaces the slot's old one:
 * a place for home and origin (a proper name, or a noun WordNet files as a location), a line of
 * work for an occupation. "You moved to Geneva" fills home; "the flat is freezing" is about home
 * but names no place, and must not replace where the speaker lives.
 */
export function fillsSlot(slot: Slot, toks: readonly Token[], senses: ReadonlyMap<string, Sense>): boolean {
  const sense = (t: Token) => senses.get(t.lemma.toLowerCase());
  // (Not the first word: a sentence's capital makes no name. Nor a name WordNet knows only as
  // something other than a place: "switched to speaking Spanish at home" names a language.)
  const named = toks.some((t, i) => i > 0 && (t.pos === 'PROPN' || /^\p{Lu}/u.test(t.text)) && t.lower !== 'i' && (slot === 'occupation' || sense(t) === undefined || sense(t)!.place !== undefined));
  // (A location other than the words of the topic: "home" is one, and names no place.)
  const own = SLOT_LEMMAS.find(([s]) => s === slot)?.[1] ?? [];
  if (slot === 'home' || slot === 'origin') return named || toks.some((t) => sense(t)?.kind === 'noun.location' && !own.includes(t.lemma));
  // (Who the speaker is, as a person noun that is no kin: "an engineer", "a nurse"; WordNet files
  // an engineer directly under person, so its line of work is not found above it.)
  if (slot === 'occupation') return named || toks.some((t) => (sense(t)?.occupation === true || sense(t)?.kind === 'noun.person') && !kinOf(t.lemma));
  return true;
}

/** Someone else a clause may be about: then a place in it is theirs, not the speaker's. */
const THIRD_PERSON = new Set(['he', 'she', 'they', 'him', 'her', 'them', 'his', 'their', 'hers', 'theirs']);
const LATER = new Set(['will', "'ll", 'gonna', 'shall', 'next', 'tomorrow', 'someday']);

/**
 * The place a clause says its speaker is in now, when it names one without a word of a topic of
 * place: "dentist by day in dublin", "good evening from lagos", "edinburgh is freezing tonight",
 * "cardiff boy checking in". A place (WordNet's instance of a location) after a word of place or
 * opening the clause; not what was ("studied in Oxford"), what will be ("off to Rome tomorrow"),
 * or someone else's ("she's in Dublin").
 */
export function speakerPlace(toks: readonly Token[], senses: ReadonlyMap<string, Sense>): string | undefined {
  if (toks.some((t) => THIRD_PERSON.has(t.lower) || LATER.has(t.lower))) return undefined;
  const content = toks.findIndex((t) => ['NOUN', 'PROPN', 'VERB', 'ADJ', 'NUM'].includes(t.pos));
  // After a word of place ("in dublin"), or a usual place name as what the clause is about
  // ("edinburgh is freezing", "singapore humidity"; not "Mexico fell through") or naming a
  // person ("a Cardiff boy").
  // ("Florence is my sister" names a person: a place does not stand for someone of the speaker's.)
  const someone = toks.some((t, i) => ['my', 'our'].includes(toks[i - 1]?.lower ?? '') && senses.get(t.lemma)?.kind === 'noun.person');
  const opens = (i: number) => i === content && !someone && (toks[i + 1]?.lemma === 'be' || toks[i + 1]?.lower === "'s" || toks[i + 1]?.pos === 'NOUN');
  const at = toks.findIndex((t, i) => {
    const place = t.pos === 'PROPN' ? senses.get(t.lemma)?.place : undefined;
    return place !== undefined && (AT_PLACE.has(toks[i - 1]?.lower ?? '') || (place === 'usual' && (opens(i) || senses.get(toks[i + 1]?.lemma ?? '')?.kind === 'noun.person')));
  });
  if (at < 0) return undefined;
  // (A past before the place, unless the line says it is so now: "moved here from Oslo" tells where they were.)
  const now = toks.some((t) => ['now', 'nowadays', 'currently', 'tonight', 'today'].includes(t.lower));
  const past = toks.slice(0, at).some((t) => (t.pos === 'VERB' && t.lower !== t.lemma && !t.lower.endsWith('ing')) || ['was', 'were', 'used'].includes(t.lower));
  return past && !now ? undefined : toks[at]!.text;
}

/** A family word followed by a more specific one names that one: "my kid sister" is a sister. */
function familyNoun(t: Token, toks: readonly Token[]): string {
  const next = toks[toks.indexOf(t) + 1];
  return next && ['kid', 'baby', 'little', 'big', 'older', 'younger'].includes(t.lemma) && kinOf(next.lemma) ? next.lemma : t.lemma;
}

/** A capitalized plural inside a clause names a group (a team, a band: "the Bears"), not what its word is. */
const groupName = (t: Token, i: number) => i > 0 && /^\p{Lu}/u.test(t.text) && t.lower !== t.lemma && t.lower.endsWith('s');

const isGeneric = (t: Token) => GENERIC_LIKING.includes(t.lemma) || GENERIC_LIKING.includes(t.lower);

function names(slot: Slot, lemmas: readonly string[], t: Token, toks: readonly Token[]): boolean {
  if (!lemmas.includes(t.lemma) && !lemmas.includes(t.lower)) return false;
  // A name is no word of a topic: "a lifelong Bears fan" was not born.
  if (groupName(t, toks.indexOf(t))) return false;
  if (slot === 'home' && t.lemma === 'live' && t.pos !== 'VERB') return false; // "saw them live"
  // A likeness is no liking: "feels like forever", "stuff like that".
  if (slot === 'likes' && t.lemma === 'like' && t.pos === 'ADP') return false;
  if (slot === 'home' && ['house', 'home', 'flat', 'apartment'].includes(t.lemma) && !toks.some((x, i) => ['live', 'move', 'base', 'rent', 'own', 'buy'].includes(x.lemma) || (x === t && ['my', 'our'].includes(toks[i - 1]?.lower ?? '')))) return false;
  // An animal naming another noun is not one: "chicken tikka", "fish tacos", "dog food".
  // (Not one possessed: "my dog biscuit" is a dog called Biscuit.)
  if (slot === 'pet' && toks[toks.indexOf(t) + 1]?.pos === 'NOUN' && !['my', 'our'].includes(toks[toks.indexOf(t) - 1]?.lower ?? '')) return false;
  // "The date on the newspaper" is a day; "my date", "we're dating" a partner.
  if (slot === 'family' && t.lemma === 'date' && t.pos !== 'VERB' && !['my', 'our'].includes(toks[toks.indexOf(t) - 1]?.lower ?? '')) return false;
  if (slot === 'hobby' && t.lemma === 'play' && toks.some((x) => x.lower === 'room' || x.lower === 'game')) return false;
  // A trade is a line of work; to trade is to swap ("traded my Volvo in for a Jeep").
  if (slot === 'occupation' && t.lemma === 'trade' && t.pos === 'VERB') return false;
  // Roots are an upbringing; to root for a side is to support it.
  if (slot === 'origin' && t.lemma === 'root' && t.pos === 'VERB') return false;
  // Growing up is an upbringing; growing tomatoes is not.
  if (slot === 'origin' && t.lemma === 'grow' && toks[toks.indexOf(t) + 1]?.lower !== 'up') return false;
  // "Who keeps me company?": company kept, not a firm.
  if (slot === 'occupation' && t.lemma === 'company' && ['me', 'us', 'you', 'him', 'her', 'them'].includes(toks[toks.indexOf(t) - 1]?.lower ?? '')) return false;
  return true;
}


/** Verbs of taking something in: what one eats, drinks or takes. */
const CONSUMING = new Set(['eat', 'drink', 'have', 'take', 'consume', 'swallow', 'touch']);
const MAY = new Set(['can', 'ca', 'could', 'should', 'shall', 'must', 'may']);

/**
 * Whether a question asks what the speaker must not take in: a denied "may" before eating or
 * drinking ("anything I shouldn't eat?", "what can't I drink?"), or what they must avoid eating.
 * That is health, not taste ("what don't I like to eat?" is a dislike).
 */
function forbidden(toks: readonly Token[]): boolean {
  const at = toks.findIndex((t) => CONSUMING.has(t.lemma) && t.pos === 'VERB');
  if (at < 0) return false;
  const before = toks.slice(0, at);
  const denied = before.some((t, i) => MAY.has(t.lower) && ['not', "n't"].includes(before[i + 1]?.lower ?? ''));
  return denied || before.some((t) => t.lemma === 'avoid');
}

/**
 * The topic a line asks about, by its words: the slot its first question names ("who's my furry
 * friend?": pet); undefined when it asks nothing or names no topic (meaning may still tell one).
 */
export function askedTopic(text: string | undefined): Exclude<Slot, 'open' | 'name'> | undefined {
  const question = text === undefined ? undefined : clauses(text).find((c) => c.question);
  if (!question) return undefined;
  const { slot } = slotOf(question.tokens);
  if (slot === 'likes' && forbidden(question.tokens)) return 'allergy';
  return slot === 'open' || slot === 'name' ? undefined : slot;
}

/** Nouns that ask for no kind of thing in particular ("what kind of company": a company). */
const NO_KIND = new Set(['thing', 'name', 'kind', 'sort', 'type', 'stuff', 'one', 'bit', 'lot', 'part', 'way', 'deal', 'story', 'idea', 'something', 'anything', 'everything']);

/**
 * The kind of thing a question asks for, when it names one: the head noun after "what" or
 * "which" ("what language do I speak?": language; "which football club?": club; "what kind of
 * company?": company). Undefined for "what's my dog's name?" or "where do I live?".
 */
export function askedKind(text: string | undefined): string | undefined {
  const question = text === undefined ? undefined : clauses(text).find((c) => c.question);
  const toks = question?.tokens ?? [];
  const at = toks.findIndex((t) => t.lower === 'what' || t.lower === 'which');
  if (at < 0) return undefined;
  let head: string | undefined;
  for (const t of toks.slice(at + 1)) {
    if (t.pos === 'NOUN' && !NO_KIND.has(t.lemma)) head = t.lemma.toLowerCase();
    else if (!(t.pos === 'ADJ' || t.lower === 'of' || NO_KIND.has(t.lemma) || (t.pos === 'NOUN' && NO_KIND.has(t.lemma)))) break;
  }
  return head;
}

/**
 * Whether a fact's topic is the one asked about. Health and allergies are one topic of the memory
 * design: "what should I avoid for medical reasons?" asks about an allergy as much as a diet.
 */
export function sameTopic(factTopic: string | undefined, asked: string): boolean {
  const group = (t: string | undefined) => (t === 'allergy' ? 'health' : t);
  return group(factTopic) === group(asked);
}

/**
 * Which side of a family a word names: a partner (the one the speaker chose) or a relative by
 * birth (a sibling, a parent, a child, a cousin). Within the family topic, "who am I dating?" asks
 * about a partner and "forget what I said about my sibling" is not about the husband. Words for
 * the whole family ("family", "kin", "relative") name neither.
 */
export type Kin = 'partner' | 'relative';

/** The side a word (a lemma or a key's last part) names, if it names one. */
export function kinOf(word: string | undefined): Kin | undefined {
  if (!word) return undefined;
  return PARTNER_WORDS.includes(word) ? 'partner' : RELATIVE_WORDS.includes(word) ? 'relative' : undefined;
}

/** The side the words of a text name: a partner when any word names one ("my partner's mum": the partner). */
export function kinNamed(toks: readonly Token[]): Kin | undefined {
  const named = toks.map((t) => kinOf(t.lemma) ?? kinOf(t.lower));
  return named.includes('partner') ? 'partner' : named.includes('relative') ? 'relative' : undefined;
}

