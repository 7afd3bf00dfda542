/**
 * The offline extractor: open-domain, built on the language module (wink-nlp's English model).
 *
 * Every clause of an utterance is read for who it is about:
 * - a request to forget ("forget what I said about my husband", "scrap that") is a `forget`;
 * - an attempt on the NPC's persona or the world's rules goes to the poisoning guard (the rule
 *   extractor's guard rules, rules.ts);
 * - a first-person clause is a self-disclosure: it becomes a fact about the speaker, said back
 *   in the second person ("You keep bees on a rooftop in Lyon."), with a slot key where its words
 *   name one (home, origin, pets, family, health, fears, trips, ...) and an open key otherwise;
 *   unless it carries a game detail (a code, a hiding place, progress in the puzzle), which
 *   makes it a clue;
 * - a clause about neither: a game detail is a clue, a statement about the world is lore.
 *
 * Slots are recognized from lemmas (what a word is, in any inflection), not from phrasings: the
 * same fact said in any word order lands in the same slot. A line with an update marker ("now",
 * "actually", "just moved", "not any more") updates its slot: consolidation then supersedes the
 * old value even when the new fact's key is not the same.
 */
import { beforeConsequence, clauses, forgetRequest, person, render, revoice, tokens, unqualified, withSubject, type Clause, type ForgetRequest, type Token } from '../../../language/index.js';
import { SLOT_LEMMAS, fillsSlot, slotOf, speakerPlace, type Slot } from '../../../language/topics.js';
import { endedInPast, ends, nounSenses, withPlaceNames, type Sense } from '../../../language/senses.js';
import { codeLike, gameDetail } from '../firewall.js';
import { GRAND_TITLES, guardCandidates, worldFact } from './rules.js';
import { SINGLE_VALUED, SLOT_KIND, SLOTS, slug, type Candidate, type EpisodeInput, type Extractor } from './types.js';



const SINGLE: ReadonlySet<Slot> = SINGLE_VALUED;
const TOPIC_WORDS: ReadonlySet<string> = new Set(SLOT_LEMMAS.flatMap(([, words]) => words));

/** Markers of a changed value ("we've just moved", "actually ...", "not any more", "I'm a nurse now"). */
const UPDATE_LEMMAS = new Set(['now', 'actually', 'anymore', 'instead', 'switch', 'change', 'swap', 'trade', 'replace', 'ditch', 'upgrade', 'nowadays', 'lately', 'since', 'recently', 'finally']);
const UPDATE_PHRASES = /\b(?:no longer|no more|not any ?more|just moved|moved to|new job|changed? (?:my|jobs?|careers?)|these days|turns out|correction|i meant|scratch that and)\b/i;

/** States of the moment in a game, not facts about a life ("I'm stuck", "I'm back"). */
const MOMENTARY = new Set('fine ok okay good great sorry here back ready done sure tired hungry lost stuck bored confused busy alone right wrong close sure certain curious excited nervous listening trying looking waiting thinking coming going'.split(' '));
/** Verbs of the moment and of thinking aloud: what follows is a plan or an opinion about the room. */
const TRANSIENT_AUX = new Set(['will', "'ll", 'shall', 'should', 'could', 'might', 'must', 'can', 'gonna', 'wanna', 'let', "'d"]);
const COGNITION = new Set(['think', 'guess', 'bet', 'reckon', 'believe', 'suppose', 'wonder', 'know', 'mean', 'see', 'agree', 'hope', 'need', 'want', 'feel']);

/** A question that asserts its complement ("did you know ...", "do you realise ..."). */
const STATEMENT_AS_QUESTION = /^\s*(?:did|do) you (?:know|realise|realize)\b/i;

export class OpenDomainExtractor implements Extractor {
  readonly id = 'open-v3';

  async extract(episodes: readonly EpisodeInput[]): Promise<Candidate[]> {
    const nouns = episodes.filter((e) => e.kind === 'utterance').flatMap((e) => tokens(e.text).filter((t) => t.pos === 'NOUN' || t.pos === 'PROPN').map((t) => t.lemma.toLowerCase()));
    const senses = await nounSenses(nouns);
    const verbs = [...new Set(episodes.filter((e) => e.kind === 'utterance').flatMap((e) => verbsOf(tokens(e.text))))];
    const found = await Promise.all(verbs.map((v) => ends(v)));
    const foundInPast = await Promise.all(verbs.map((v) => endedInPast(v)));
    const ending = new Set([...verbs.filter((_, i) => found[i]), ...verbs.filter((_, i) => foundInPast[i]).map((v) => `${IN_PAST}${v}`)]);
    // Places are names however they are typed: "edinburgh is freezing" names a city.
    return episodes.flatMap((e) => (e.kind === 'utterance' ? extractOpen({ ...e, text: withPlaceNames(e.text, senses) }, senses, ending) : guardCandidates(e)));
  }
}

/** A request to forget ("forget what I said about my husband"), keyed by the slot it names, if one. */
function forgetting(forget: ForgetRequest, text: string): Omit<Candidate, 'episodeId' | 'participantId'> {
  const about = forget.about ? clauses(forget.about)[0]?.tokens ?? [] : undefined;
  const slot = about ? slotOf(about) : undefined;
  return {
    kind: slot ? SLOT_KIND[slot.slot] : 'personal',
    op: 'forget',
    key: slot && slot.slot !== 'open' ? SLOTS[slot.slot] : '',
    value: forget.about,
    summary: about ? `You asked me to forget what you said about ${lowerFirst(revoice(about, 'second'))}.` : 'You asked me to forget what you said.',
    confidence: 0.9,
    text,
  };
}

export function extractOpen(episode: EpisodeInput, senses: ReadonlyMap<string, Sense> = new Map(), ending: ReadonlySet<string> = new Set()): Candidate[] {
  const out: Candidate[] = [];
  const push = (c: Omit<Candidate, 'episodeId' | 'participantId'>) => out.push({ ...c, episodeId: episode.id, participantId: episode.participantId });
  // "Forget who you are" is an attack on the persona, not a request about the speaker's memories.
  const forget = guardCandidates(episode).length === 0 ? forgetRequest(episode.text) : undefined;
  if (forget) {
    push(forgetting(forget, episode.text));
    // The rest of the line is told as any line is ("scrap that, we moved to Geneva").
    if (forget.besides) out.push(...extractOpen({ ...episode, text: forget.besides }, senses, ending).filter((c) => c.op !== 'forget'));
    return out;
  }
  const said = elaborated(referred(clauses(episode.text)), ending, senses);
  // What the speaker put an end to ("quit yoga", "the civic finally died", "sold the audi") makes
  // the line an update; followed by what replaced it ("doing boxing now"), it is only that: the
  // line's new value is the fact, and supersedes the old one.
  const ended = said.map((c) => !c.question && endsSomething(c, ending));
  const replaced = ended.map((end, i) => end && said.some((c, j) => j > i && !c.question && !ended[j]));
  const replacing = replaced.some(Boolean);
  // (What ended is what an update of this line replaces: "gave up the swimming".)
  const endedText = said.filter((c, i) => ended[i]).map((c) => whatEnded(c, ending)).join('; ');
  const withEnded = (c: Omit<Candidate, 'episodeId' | 'participantId'>, i: number): Omit<Candidate, 'episodeId' | 'participantId'> =>
    // A clause that says only that something ended, in a line that tells of no change besides
    // and with nothing after it replacing it ("I quit deloitte"), ends the fact it names; it is
    // kept only if it ends none.
    ended[i] && !replaced[i] && c.op !== 'update' ? { ...c, op: 'update', ends: whatEnded(said[i]!, ending), endsOnly: true } : c.op === 'update' && endedText ? { ...c, ends: endedText } : c;
  const updating = UPDATE_PHRASES.test(episode.text) || replacing;
  // A verbless headline ("new job!", "new obsession:") names the topic of what follows it.
  let headline: { slot: Slot; renewed: boolean } | undefined;
  for (const [i, whole] of said.entries()) {
    if (replaced[i]) continue;
    const clause = lifeBeforeRoom(whole);
    // (Short, with no one named in it: "texting my sister Elsa" is a statement, not a headline.)
    // (And naming nothing but its topic: "physio by trade" says what the trade is.)
    const headlineLike = clause.tokens.length <= 3 && !clause.tokens.some((t) => ['VERB', 'AUX', 'PROPN', 'PRON'].includes(t.pos) || (t.pos === 'NOUN' && !TOPIC_WORDS.has(t.lemma)));
    if (headlineLike && !clause.question) {
      const named = slotOf(clause.tokens);
      if (named.slot !== 'open') {
        headline = { slot: named.slot, renewed: clause.tokens.some((t) => ['new', 'latest', 'current'].includes(t.lower)) };
        continue;
      }
    }
    if (clause.question) {
      // A question states nothing ("what is my dog called?" names no dog), unless it is a
      // statement in question form: "did you know the tower was built in 1820?" is lore.
      const world = STATEMENT_AS_QUESTION.test(clause.text) ? worldFact(clause.text) : undefined;
      if (world) push({ ...world, text: clause.text });
      continue;
    }
    const guarded = guardCandidates({ ...episode, text: clause.text });
    if (guarded.length > 0) {
      for (const g of guarded) push(g);
      continue;
    }
    const who = person(clause);
    if (who === 'second') continue; // about the NPC: the guard rules above had their say
    if (who === 'other') {
      // A clause whose words name a topic of a life ("dentist by trade, puzzle nerd by night") is
      // told of the speaker, never a game clue, unless a number in it could be a code. (Not what
      // its nouns merely are: "the secret passage" is an act in WordNet, and a clue.)
      const life = ofALife(clause.tokens, senses) && !codeLike(clause.text);
      const world = life ? undefined : worldFact(clause.text);
      if (world) push({ ...world, text: clause.text });
      else {
        const told = toldAbout(clause, senses, life, headline, replacing);
        if (told) for (const f of placed(clause, told, senses)) push(withEnded(f, i));
      }
      continue;
    }
    const fact = selfDisclosure(clause, senses, updating || !!headline?.renewed, headline?.slot);
    if (fact) for (const f of placed(clause, fact, senses)) push(withEnded(f, i));
  }
  return out;
}

/**
 * The speaker's home, from a clause that places them without a word of home ("dentist by day in
 * dublin", "good evening from lagos", "I keep bees on a rooftop in Lyon") fills the home slot.
 */
function placed(clause: Clause, fact: Told, senses: ReadonlyMap<string, Sense>): Told[] {
  if (!fact.key.startsWith(`${SLOTS.open}.`) && fact.kind !== 'occupation') return [fact];
  const toks = withSubject(clause);
  const place = speakerPlace(toks, senses);
  if (!place) return [fact];
  // "I'm from Cork": where the speaker comes from; "hello from Cork": where they are.
  const from = toks.some((t, i) => t.lower === 'from' && ['am', "'m", 'are', "'re", 'originally'].includes(toks[i - 1]?.lower ?? ''));
  const slot = from ? 'origin' : 'home';
  // (Read from where a place stands, so less sure than a word of home: it does not replace a home
  // the speaker named, consolidation.ts.)
  const there = { ...fact, kind: SLOT_KIND[slot], key: SLOTS[slot], value: place, confidence: Math.min(fact.confidence, INFERRED) };
  // What the speaker says they do there is kept as well ("I keep bees on a rooftop in Lyon"); a
  // line that only places them ("good evening from lagos") is where they are, and no more.
  return person(clause) === 'first' || fact.kind === 'occupation' ? [fact, there] : [there];
}

/** The confidence of a value read from how a clause is put rather than from a word of its slot. */
const INFERRED = 0.6;

type Told = Omit<Candidate, 'episodeId' | 'participantId'>;

/**
 * Clauses with a bare name of something ("ugh, moths.") put in place of the pronoun the next
 * clause refers to it by ("can't stand them": "can't stand moths"): what the speaker says of it
 * is then about it.
 */
function referred(list: readonly Clause[]): Clause[] {
  const out: Clause[] = [];
  for (let i = 0; i < list.length; i++) {
    const named = list[i]!;
    const next = list[i + 1];
    // ("Fun fact:" introduces what follows; it names nothing the next clause refers to.)
    const bare = !named.introduces && !named.question && named.tokens.length <= 4 && named.tokens.some((t) => t.pos === 'NOUN' || t.pos === 'PROPN') && named.tokens.every((t) => ['NOUN', 'PROPN', 'ADJ', 'DET', 'PUNCT'].includes(t.pos));
    // ("It's Kenya now": an "it" before "is" stands for nothing.)
    const at = next && !next.question ? next.tokens.findIndex((t, j) => REFERRING.has(t.lower) && !(t.lower === 'it' && isBe(next.tokens[j + 1]))) : -1;
    // A name set before what the speaker says of it ("Hiro, my partner, is cooking tonight"):
    // the name is whom the next clause, opening on the speaker's possessive, is about.
    const apposed = bare && next !== undefined && !next.question && next.continues === true && named.tokens.every((t) => t.pos === 'PROPN' || t.pos === 'PUNCT') && POSSESSIVE.has(next.tokens[0]?.lower ?? '');
    if (apposed) {
      const tokens = [...named.tokens, COMMA, ...next!.tokens.map((t, j) => (j === 0 ? { ...t, spaced: true } : t))];
      out.push({ ...next!, tokens, text: render(tokens), continues: named.continues ?? false });
      i++;
      continue;
    }
    if (!bare || at < 0) {
      out.push(named);
      continue;
    }
    const noun = named.tokens.filter((t) => t.pos !== 'PUNCT').map((t, j) => (j === 0 ? { ...t, spaced: next!.tokens[at]!.spaced } : t));
    const tokens = [...next!.tokens.slice(0, at), ...noun, ...next!.tokens.slice(at + 1)];
    out.push({ ...next!, tokens, text: render(tokens) });
    i++;
  }
  return out;
}

/** Pronouns that refer back to a thing just named. */
const REFERRING = new Set(['them', 'they', 'it']);
/** The speaker's possessives: "my partner", "our dog". */
const POSSESSIVE = new Set(['my', 'our']);
/** Pronouns that refer back to someone or something named before them in the sentence. */
const ANAPHORS = new Set(['it', 'them', 'they', 'she', 'he', 'her', 'him', 'that']);
/** The comma two joined clauses are rendered with. */
const COMMA: Token = { text: ',', lower: ',', lemma: ',', pos: 'PUNCT', spaced: false };

/** A form of "be", contracted or not (the tagger does not always lemmatize "'s"). */
const isBe = (t: Token | undefined) => t !== undefined && (t.lemma === 'be' || ["'s", 'is', 'was'].includes(t.lower));

/** Whether a clause has a pronoun standing for what came before ("it" before "is" stands for nothing: "it's Kenya now"). */
function refersBack(clause: Clause): boolean {
  return clause.tokens.some((t, j) => ANAPHORS.has(t.lower) && t.pos === 'PRON' && !(t.lower === 'it' && isBe(clause.tokens[j + 1])));
}

/**
 * Clauses with what only elaborates on the one before joined to it: a clause of the same sentence
 * that names nothing ("shellfish and me don't mix, I get really sick"; "took up surfing and I'm
 * hooked"), refers back to what it named, or tells what the speaker's body does about it, says
 * how the speaker feels about what was just named, not a fact of its own. `ending`: the verbs of
 * the batch that put an end to something (`ends`); `senses`: WordNet's reading of its nouns.
 */
function elaborated(list: readonly Clause[], ending: ReadonlySet<string>, senses: ReadonlyMap<string, Sense>): Clause[] {
  const out: Clause[] = [];
  for (const clause of list) {
    const previous = out.at(-1);
    const namesNothing = !clause.tokens.some((t) => ['NOUN', 'PROPN', 'NUM'].includes(t.pos));
    // (What follows an end with a verb of its own is what came next: "gave up on spanish, doing korean now".)
    const next = previous !== undefined && endsSomething(previous, ending) && clause.tokens.some((t) => t.pos === 'VERB');
    // A clause that refers back to what the one before named ("minecraft is way easier than this,
    // I've got 500 hours in it"; "rhian says hi, she's my wife") says it of that: one fact, so
    // that what it is about stays in what is remembered.
    const refers = previous !== undefined && refersBack(clause) && previous.tokens.some((t) => t.pos === 'NOUN' || t.pos === 'PROPN');
    // So does what the speaker's body does about it ("can't have celery, my throat swells up").
    const body = POSSESSIVE.has(clause.tokens[0]?.lower ?? '') && senses.get(clause.tokens[1]?.lemma.toLowerCase() ?? '')?.kind === 'noun.body';
    // (Not what is about the room: "ola (gf) is on voice with me, she says the answer is 'raven'" is a clue beside a life.)
    if (previous && clause.continues && (namesNothing || refers || body) && !next && !ofTheRoom(clause) && !clause.question && !previous.question) {
      const joint: Token = clause.joinedBy ?? COMMA;
      const tokens = [...previous.tokens, joint, ...clause.tokens.map((t, i) => (i === 0 ? { ...t, spaced: true } : t))];
      out[out.length - 1] = { ...previous, tokens, text: render(tokens) };
    } else out.push(clause);
  }
  return out;
}

/** A first-person clause as a fact about the speaker, or undefined when it says nothing lasting. */
function selfDisclosure(clause: Clause, senses: ReadonlyMap<string, Sense>, updating: boolean, topic?: Slot): Omit<Candidate, 'episodeId' | 'participantId'> | undefined {
  const toks = withSubject(clause);
  // A clause about a topic of the speaker's life is theirs even when it has a word of the game
  // ("dentist by trade, puzzle nerd by night"); a number that could be a code keeps it a game detail.
  if (game(clause) && (slotOf(toks).slot === 'open' || codeLike(clause.text))) {
    return { kind: 'game', key: `game.${gameDetail(clause.text, true)}`, value: clause.text, summary: cap(clause.text), confidence: 0.8, text: clause.text };
  }
  if (!lasting(toks, senses)) return undefined;
  // "I'm the emperor": a title nobody in an escape room holds is kept as a weak claim, never as a fact.
  const title = grandTitle(toks);
  if (title) return { kind: 'claim', key: 'speaker.claimed_title', value: title, summary: `You claim to be ${/^(?:the|a|an)\s/i.test(title) ? title : `the ${title}`}.`, confidence: 0.2, text: clause.text };
  const found = topicOf(toks, senses, topic);
  const summary = sentence(revoice(toks, 'second'));
  const body = summary.replace(/^You\s+/, '').replace(/[.!]$/, '');
  const op = updating || toks.some((t) => UPDATE_LEMMAS.has(t.lemma)) ? 'update' : 'add';
  const { slot, noun } = found;
  const kind = found.generic ? 'preference' : SLOT_KIND[slot];
  // A single-valued slot takes the value that fills it (a place, a line of work); a clause of its
  // topic that names none is kept beside it under a key of its own.
  const single = SINGLE.has(slot) && fillsSlot(slot, toks, senses);
  const value = single ? (properSpan(toks) ?? body) : body;
  const key = slot === 'name' ? SLOTS.name : single ? SLOTS[slot] : slot === 'open' ? `${SLOTS.open}.${slug(contentOf(toks), 3)}` : `${SLOTS[slot]}.${slug(noun ?? contentOf(toks), 2)}`;
  const hedged = toks.some((t) => ['maybe', 'perhaps', 'probably', 'guess', 'might'].includes(t.lower));
  return { kind, op, key, value, summary, confidence: hedged ? 0.5 : 0.8, text: clause.text };
}

/**
 * The slot a clause fills: the one its words name; open when only a generic word of liking names
 * one ("obsessed with archery": consolidation reads that topic from meaning), unless a headline
 * of the line ("new job!") named it.
 */
function topicOf(toks: readonly Token[], senses: ReadonlyMap<string, Sense>, headline?: Slot): { slot: Slot; noun?: string; generic?: boolean } {
  // (Named in what the clause says, not in what qualifies it: "been fencing since I was a kid" is no family.)
  const main = unqualified(toks);
  const found = slotOf(main.length > 0 ? main : toks, senses);
  const slot = found.generic ? 'open' : found.slot;
  if (slot === 'open' && headline) return { slot: headline, ...(found.noun ? { noun: found.noun } : {}) };
  return { ...found, slot };
}

/**
 * A clause without a person that still tells of the speaker's life: "Pepper is barking at the
 * mailman", "Mexico fell through so it's Kenya now", "new obsession: Gorillaz". It names someone,
 * somewhere or a topic of a life, and nothing of the room. Kept as said, with less confidence
 * than a statement in the first person. `life`: whether its words tell of a life (`ofALife`) and
 * no number in it could be a code, as the caller read it.
 */
function toldAbout(clause: Clause, senses: ReadonlyMap<string, Sense>, life: boolean, headline?: { slot: Slot; renewed: boolean }, replacing = false): Omit<Candidate, 'episodeId' | 'participantId'> | undefined {
  const toks = clause.tokens;
  // A verbless headline ("new job") names a topic but says nothing of it.
  const says = toks.some((t) => t.pos === 'VERB' || t.pos === 'AUX' || t.pos === 'PROPN');
  const words = toks.filter((t) => ['NOUN', 'PROPN', 'VERB', 'ADJ', 'NUM'].includes(t.pos));
  const found = topicOf(toks, senses, headline?.slot);
  // Nobody named at all ("dentist by trade, puzzle nerd by night"): the speaker, who left themselves out.
  // ("This" or "it" names no one: "chicken tikka after this, best food on earth".)
  const ofSpeaker = !toks.some((t) => (t.pos === 'PRON' && !IMPERSONAL.has(t.lower)) || (t.pos === 'PROPN' && !senses.get(t.lemma)?.place));
  // A bare phrase with its subject left out, as chat leaves it ("flat white before every game",
  // "swiftie since 2008", "cup of builders tea in hand"): the speaker describing themselves.
  // (Not a lead-in, "fun fact:": it introduces what follows.)
  const described = ofSpeaker && !clause.introduces && bareDescription(toks);
  if (!(says || (ofSpeaker && life) || described) || words.length < 2 || (aboutTheRoom(toks) && !life) || !(lifeContent(toks, senses) || described) || (game(clause) && !life) || codeLike(clause.text)) return undefined;
  const single = found.slot === 'name' || (SINGLE.has(found.slot) && fillsSlot(found.slot, toks, senses));
  const key = found.slot === 'open' || (single && !ofSpeaker) ? `${SLOTS.open}.${slug(contentOf(toks), 3)}` : single ? SLOTS[found.slot] : `${SLOTS[found.slot]}.${slug(found.noun ?? contentOf(toks), 2)}`;
  const kind = found.generic ? 'preference' : found.slot === 'open' || (single && !ofSpeaker) ? 'personal' : SLOT_KIND[found.slot];
  const summary = sentence(revoice(toks, 'second'));
  const op = replacing || headline?.renewed || toks.some((t) => UPDATE_LEMMAS.has(t.lemma)) ? 'update' : 'add';
  return { kind, op, key, value: summary.replace(/[.!]$/, ''), summary, confidence: 0.6, text: clause.text };
}

/**
 * Whether a clause's words name a topic of a life, a line of work or the place someone is: what
 * they say, not what their nouns merely are ("the secret passage" is an act in WordNet, and a clue).
 */
function ofALife(toks: readonly Token[], senses: ReadonlyMap<string, Sense>): boolean {
  return slotOf(toks).slot !== 'open' || slotOf(toks, senses).slot === 'occupation' || speakerPlace(toks, senses) !== undefined;
}

/**
 * A phrase without a verb that opens on what it names, not on a determiner ("flat white before
 * every game", not "the candle colours"): a description, whose subject chat leaves out. (Not
 * words of quality alone, "red blue blue green": it names a thing; nor two words, "fun fact",
 * "new flat": too few to describe anyone, they head what follows; nor a list of single words,
 * "river, boat, 3 crossings", "ember -> fire -> fireplace": that is a puzzle being worked out.)
 */
function bareDescription(toks: readonly Token[]): boolean {
  const content = toks.filter((t) => t.pos !== 'PUNCT');
  // (Where the first item ends: at a comma or a conjunction, not at a hyphen in a word, "b-day".)
  const opening = toks.findIndex((t) => t.pos === 'CCONJ' || (t.pos === 'PUNCT' && !/^[-'’]$/.test(t.text)));
  const phrase = opening < 0 || opening >= 2;
  return content.length >= 3 && phrase && !toks.some((t) => t.pos === 'SYM') && !content.some((t) => t.pos === 'VERB' || t.pos === 'AUX' || t.pos === 'PRON') && content[0]!.pos !== 'DET' && content.some((t) => t.pos === 'NOUN');
}

const IMPERSONAL = new Set(['this', 'that', 'these', 'those', 'it', 'everything', 'anything', 'something', 'nothing']);

/**
 * What a clause tells of a life before what it draws from it for the room ("my day job's at a
 * game studio so i'm judging this room's design": the job), when only that consequence is about
 * the room; else the clause. The consequence is the room's; the life before it is told as any is.
 */
function lifeBeforeRoom(clause: Clause): Clause {
  const ofRoom = (c: Clause) => ofTheRoom(c) || codeLike(c.text);
  if (!ofRoom(clause)) return clause;
  const head = beforeConsequence(clause);
  return head && !head.question && !ofRoom(head) ? head : clause;
}

/** Whether a clause names a thing of the room or carries a game detail. */
const ofTheRoom = (clause: Clause) => aboutTheRoom(clause.tokens) || game(clause);

/** Things of an escape room: a clause about them is about the game, not a life. */
const ROOM_THINGS = new Set('here door key lock code room box safe clue puzzle drawer chest map painting bookshelf shelf lever button hatch panel note cabinet desk vault riddle cipher torch candle clock statue mirror wall floor ceiling table exit keypad padlock combination timer hint answer'.split(' '));

function aboutTheRoom(toks: readonly Token[]): boolean {
  // ("Here" after a noun is the way to the room, not the room: "blasting Arctic Monkeys on the drive here".)
  return toks.some((t, i) => (ROOM_THINGS.has(t.lemma) || ROOM_THINGS.has(t.lower)) && !(t.lower === 'here' && toks[i - 1]?.pos === 'NOUN'));
}

/** A proper name, a possessed noun ("my doctor") or a word naming a topic of a life. */
function lifeContent(toks: readonly Token[], senses: ReadonlyMap<string, Sense>): boolean {
  return (
    toks.some((t, i) => (t.pos === 'PROPN' || (i > 0 && /^\p{Lu}/u.test(t.text))) && t.lower !== 'i') ||
    toks.some((t, i) => ['my', 'our'].includes(t.lower) && ['NOUN', 'PROPN', 'ADJ'].includes(toks[i + 1]?.pos ?? '')) ||
    slotOf(toks, senses).slot !== 'open'
  );
}

/** Whether a first-person clause states something about a life, not the moment in the room. */
function lasting(toks: readonly Token[], senses: ReadonlyMap<string, Sense>): boolean {
  // Someone or something of a life, away from the room: lasting, whatever the verb's mood.
  if (lifeContent(toks, senses) && !aboutTheRoom(toks)) return true;
  const content = toks.filter((t) => ['NOUN', 'PROPN', 'ADJ', 'VERB', 'NUM', 'ADV'].includes(t.pos) && !['be', 'have', 'do', 'get'].includes(t.lemma));
  if (content.length === 0) return false;
  // A plan or a possibility of the moment ("I'll try the door", "we could check the box"); a
  // modal that is denied says what the speaker cannot do at all ("couldn't sleep", "can't eat nuts").
  if (toks.some((t, i) => TRANSIENT_AUX.has(t.lower) && !['not', "n't"].includes(toks[i + 1]?.lower ?? ''))) return false;
  const subjectAt = toks.findIndex((t) => t.lower === 'i' || t.lower === 'we');
  const verb = subjectAt >= 0 ? toks.slice(subjectAt + 1).find((t) => t.pos === 'VERB' || t.pos === 'AUX' && !['am', 'are', 'was', 'were', "'m", "'re"].includes(t.lower)) : undefined;
  // Thinking aloud is in the present ("I think the clock matters", "I see it"); what was seen, or
  // a plan being weighed ("thinking of entering a contest"), is part of a life.
  const weighing = verb?.lower.endsWith('ing') && ['of', 'about'].includes(toks[toks.indexOf(verb) + 1]?.lower ?? '');
  if (verb && COGNITION.has(verb.lemma) && verb.lower === verb.lemma && !weighing && subjectAt >= 0 && toks.indexOf(verb) <= subjectAt + 2) return false;
  // A denial with one word of content is a state of the moment ("I don't know", "not sure"),
  // unless that word is a thing away from the room: "can't have anything with celery in it".
  const deniedThing = content.length === 1 && content[0]!.pos === 'NOUN' && !aboutTheRoom(toks);
  if (toks.some((t) => t.lower === 'not' || t.lower === "n't") && content.length < 2 && !deniedThing) return false;
  // "I'm stuck", "I'm back": one momentary word is all there is.
  const words = content.map((t) => t.lower);
  if (words.every((w) => MOMENTARY.has(w) || ['so', 'really', 'very', 'just', 'totally', 'still', 'also', 'too', 'now'].includes(w))) return false;
  // A progressive of the moment: "I'm looking at the door".
  if (toks.some((t, i) => ['am', "'m", 'are', "'re"].includes(t.lower) && toks[i + 1]?.pos === 'VERB' && toks[i + 1]!.lower.endsWith('ing')) && aboutTheRoom(toks)) return false;
  return true;
}

/** The verbs of a text as WordNet may know them: each lemma, and with its particle ("give_up"). */
function verbsOf(toks: readonly Token[]): string[] {
  return toks.flatMap((t, i) => {
    if (t.pos !== 'VERB') return [];
    const particle = toks[i + 1];
    return particle && ['ADP', 'PART', 'ADV'].includes(particle.pos) && /^\p{L}+$/u.test(particle.lower) ? [t.lemma, `${t.lemma}_${particle.lower}`] : [t.lemma];
  });
}

/**
 * Whether a clause says something came to an end: a verb of ending, not denied ("quit yoga"; not
 * "I'd never sell it"), or a state denied from now on ("not a nurse anymore").
 */
function endsSomething(clause: Clause, ending: ReadonlySet<string>): boolean {
  const toks = clause.tokens;
  // A state denied from now on ends too: "I don't live in Oslo anymore", "no more Volvo for me".
  if (NO_LONGER.test(clause.text)) return true;
  if (toks.some((t) => ['not', "n't", 'never'].includes(t.lower))) return false;
  return endingVerbAt(toks, ending) >= 0;
}

/** Where a clause's verb of ending is ("quit", "gave up"), or -1. */
function endingVerbAt(toks: readonly Token[], ending: ReadonlySet<string>): number {
  return toks.findIndex((t, i) => t.pos === 'VERB' && endingForms(t, toks[i + 1]).some((v) => ending.has(v)));
}

/**
 * What a clause says ended, without the saying: "i quit coffee" ended coffee, "gave up the
 * swimming" the swimming. The verb of ending is what every such clause shares ("quit coffee" is
 * near "got off a 12hr shift, nursing is brutal" by it alone), so what ended is compared with the
 * speaker's facts without it, nor its particle, subject or auxiliaries. A clause whose ending is
 * a denial ("I don't live in Oslo anymore") keeps its verb: that verb is what ended.
 */
function whatEnded(clause: Clause, ending: ReadonlySet<string>): string {
  const toks = clause.tokens;
  const at = endingVerbAt(toks, ending);
  if (at < 0) return clause.text;
  // (With its particle when the ending is a phrasal verb: "give_up".)
  const particle = endingForms(toks[at]!, toks[at + 1]).some((v) => v.includes('_') && ending.has(v)) ? at + 1 : at;
  const rest = toks.filter((t, i) => (i < at || i > particle) && !(t.pos === 'PRON' && ['i', 'we'].includes(t.lower)) && t.pos !== 'AUX');
  return rest.some((t) => ['NOUN', 'PROPN', 'VERB', 'ADJ'].includes(t.pos)) ? render(rest) : clause.text;
}

/** The forms under which `ending` may hold a verb: with its particle ("give_up") or alone, in the past tense or any. */
function endingForms(t: Token, next: Token | undefined): string[] {
  return [`${t.lemma}_${next?.lower ?? ''}`, t.lemma].flatMap((v) => (PAST_FORM.test(t.lower) && t.lower !== t.lemma ? [v, `${IN_PAST}${v}`] : [v]));
}

/** `ending` holds a verb that ends only in the past tense under this prefix. */
const IN_PAST = 'past:';
/** A verb's past form, regular ("dropped") or not ("quit", "sold" are already endings in any tense). */
const PAST_FORM = /ed$/;

/** A denial that holds from now on: "not ... anymore", "no longer", "no more". */
const NO_LONGER = /(?:\bnot\b|n't\b|\bnever\b|\bno\b)[^.!?]*\bany ?(?:more|longer)\b|\bno (?:longer|more)\b/i;

/** A first-person clause about the game, not about a life ("I found the key behind the map"). */
function game(clause: Clause): boolean {
  return gameDetail(clause.text, true) !== undefined;
}

/** The proper name(s) of a clause, last span first: "Geneva" in "we've just moved house, to Geneva". */
function properSpan(toks: readonly Token[]): string | undefined {
  const spans: string[] = [];
  let run: string[] = [];
  toks.forEach((t, i) => {
    if (i > 0 && (t.pos === 'PROPN' || (/^[A-Z]/.test(t.text) && t.pos !== 'PRON' && t.lower !== 'i'))) run.push(t.text);
    else if (run.length) {
      spans.push(run.join(' '));
      run = [];
    }
  });
  if (run.length) spans.push(run.join(' '));
  return spans.at(-1);
}

const contentOf = (toks: readonly Token[]) =>
  toks
    .filter((t) => ['NOUN', 'PROPN', 'VERB', 'ADJ'].includes(t.pos) && !['be', 'have', 'do', 'get'].includes(t.lemma))
    .map((t) => t.lemma)
    .join(' ') || 'thing';
/** What follows "I am" when it is a grand title ("the emperor"). */
function grandTitle(toks: readonly Token[]): string | undefined {
  const at = toks.findIndex((t, i) => t.lower === 'i' && ['am', "'m"].includes(toks[i + 1]?.lower ?? ''));
  if (at < 0) return undefined;
  const rest = render(toks.slice(at + 2)).replace(/^(?:actually|really|truly|secretly)\s+/i, '');
  const bare = rest.replace(/^(?:the|a|an)\s+/i, '');
  return GRAND_TITLES.test(bare) || GRAND_TITLES.test(rest) ? rest.replace(/[.!,;]+$/, '') : undefined;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const sentence = (s: string) => `${cap(s.replace(/[\s,;:]+$/, ''))}${/[.!?]$/.test(s) ? '' : '.'}`;
