/**
 * The offline responder: the embedded default's "model". It composes a reply from the context
 * window alone, reading the line it answers with the language module (clauses, who a clause is
 * about) and choosing what to say by meaning: the memory service scores every remembered fact
 * against the line just said (`match`, a cosine in its embedding space) and says at which score
 * a fact answers it (`retrieval.answerThreshold`, calibrated on the evaluation's dev split).
 *
 * In order:
 * 1. after a refused action: acknowledge the physical failure;
 * 2. a request to go somewhere: propose a move (the engine decides whether it happens);
 * 3. a request to forget: acknowledge it (consolidation invalidates the memory);
 * 4. the uncertain-reconstruction directive: "someone told me something similar", nothing more;
 * 5. a question about the asker ("where do I live?"): the asker's own fact that best matches the
 *    question, said back in the second person, or an admission of not knowing; never a clue,
 *    never a greeting, never another participant's fact;
 * 6. a question about the NPC, the room or the way out: from the persona and the pinned state;
 * 7. a question about codes, keys or hiding places: from this game's clues, or say so;
 * 8. a greeting: greet a returning participant by what the NPC remembers of them;
 * 9. a remembered claim or a memory the state contradicts: say it as a claim or as a memory;
 * 10. something the speaker tells about themselves: acknowledge it;
 * 11. otherwise: a short in-persona line that admits not knowing.
 *
 * Same input, same output; proposals use the engine's action form, as a model's would.
 */
import { OPEN_TOPIC, type ContextFact, type ContextWindow } from '../boundary/context.js';
import { clauses, contentLemmas, currentPart, forgetRequest, person, revoice, tokens, unqualified, type Clause } from '../language/index.js';
import { kinNamed, kinOf, sameTopic, slotOf, tasteNamed } from '../language/topics.js';
import { spokenDuration, type ModelInput, type ModelProvider, type NpcReply } from './types.js';

/** Words of a question about the game's codes, keys and hiding places. */
const CLUE_WORDS = /\b(code|combination|password|key|clue|safe|hidden|hiding|secret)\b/;
const DIRECTIONS = ['north', 'south', 'east', 'west', 'up', 'down', 'in', 'out'] as const;
const MOVE_VERBS = new Set(['go', 'walk', 'head', 'move', 'come', 'run', 'step', 'follow']);
/** Used when a window does not say (an older memory service). */
const DEFAULT_ANSWER_THRESHOLD = 0.3;

export class OfflineResponder implements ModelProvider {
  readonly id = 'offline-v4';

  async reply(input: ModelInput): Promise<NpcReply> {
    const reply = respond(input);
    // The first word after a suspension acknowledges it (seed 000: the empty library).
    if (input.resumedAfterMs === undefined) return reply;
    // About the time, not the person: recognising an anonymous player is what the guard forbids.
    return { ...reply, text: `${input.npc.firstName} stirs. "So much quiet; ${spokenDuration(input.resumedAfterMs)} with nobody here." ${reply.text}` };
  }
}

export function respond({ npc, window, trigger, physicalFailure }: ModelInput): NpcReply {
  const say = (text: string): NpcReply => ({ text, actions: [] });
  if (physicalFailure) return say(`I tried, but I can't: ${lowerFirst(physicalFailure)}`);

  const said = clauses(trigger.text);
  const direction = moveRequest(said);
  if (direction) return { text: `Very well, I will go ${direction}.`, actions: [{ type: 'move', direction }] };

  const forget = forgetRequest(trigger.text);
  if (forget) {
    const about = forget.about ? ` about ${revoice(tokens(forget.about), 'second')}` : '';
    return say(`Of course. I will forget what you told me${about}.`);
  }

  const reconstruction = window.directives.find((d) => d.kind === 'uncertain_reconstruction');
  if (reconstruction) {
    const topic = /\(about: ([^)]*)\)/.exec(reconstruction.text)?.[1] ?? 'that';
    return say(`What a coincidence. I recently heard a similar story from someone else, about ${topic}.`);
  }

  const facts = window.participants[trigger.participantId]?.facts ?? [];
  const questions = said.filter((c) => c.question);
  const lower = trigger.text.toLowerCase();

  // 5. About the asker: only their own facts, by meaning. A question about a topic of a life
  // that names no one ("where's home now?") is asked of the asker too.
  // (Not one about codes, keys or hiding places: those are the game's.)
  const topic = window.retrieval?.topic;
  const aboutClues = CLUE_WORDS.test(lower);
  const ofALife = (c: Clause) => !aboutClues && (slotOf(c.tokens).slot !== 'open' || (topic !== undefined && topic !== OPEN_TOPIC));
  const personal = questions.find((c) => (person(c) === 'first' || (person(c) === 'other' && ofALife(c))) && !aboutTheRoom(c));
  if (personal && !rememberMe(said)) {
    const best = answering(facts, window, personal);
    // What changed is said as it is now ("it's Kenya now"), not with what it replaced.
    if (best) return say(`You told me ${withYou(lowerFirst(stripPeriod(currentPart(best.summary))))}.`);
    return say(`${npc.firstName} thinks for a moment. "I don't know; you haven't told me that."`);
  }

  // 6. About the NPC, the room, the way out.
  const aboutNpc = questions.find((c) => person(c) === 'second' && !aboutTheRoom(c) && askingWhoYouAre(c));
  if (aboutNpc) return say(selfIntroduction(npc.firstName, window));
  const aboutRoom = questions.find((c) => aboutTheRoom(c));
  if (aboutRoom && !aboutClues) return say(roomDescription(window));

  // 7. Game clues: a question about codes, keys or hiding places.
  if (questions.length > 0 && aboutClues) {
    const clue = bestClue(window.clues, lower);
    if (clue) return say(`From what we have found in this game: ${sentence(clue.summary)}`);
    return say("I don't know the code; we haven't found any clues yet.");
  }

  // 8. A greeting.
  if (greeting(said, trigger.text)) {
    const name = facts.find((f) => ['player_name', 'name'].includes(lastSegment(f.key)))?.value;
    const work = facts.find((f) => ['occupation', 'job', 'work'].includes(lastSegment(f.key)))?.value;
    if (!trigger.anonymous && (name || work)) {
      const greetingText = `Welcome back${name ? `, ${name}` : ''}! It has been a while.`;
      return say(work ? `${greetingText} How are things holding up in your work${/^[A-Z]/.test(work) ? ` at ${work}` : ` as ${article(work)} ${work}`}?` : greetingText);
    }
    return say(`Hello. I am ${npc.firstName}. ${firstSentence(window.pinned.procedural?.persona) ?? ''}`.trim());
  }

  // 9. Claims and memories the state contradicts, when the line is about them.
  const threshold = window.retrieval?.answerThreshold ?? DEFAULT_ANSWER_THRESHOLD;
  const near = (f: ContextFact) => (f.match ?? 0) >= threshold || overlaps(f, lower);
  const contradicted = facts.concat(window.clues).find((f) => f.standing === 'memory_contradicted_by_state' && near(f));
  if (contradicted) return say(`I remember that ${lowerFirst(stripPeriod(contradicted.summary))}, but that is not how things stand now.`);
  const claim = facts.find((f) => f.standing === 'claim' && f.confidence < 0.5 && near(f));
  if (claim) return say(`You say so: ${lowerFirst(stripPeriod(claim.summary))}. Sure.`);

  // 10. Something the speaker tells about themselves.
  if (questions.length === 0 && said.some((c) => person(c) === 'first')) return say(`${npc.firstName} nods. "I will remember that."`);

  return say(`${npc.firstName} thinks for a moment. "I don't know about that."`);
}

/** The asker's fact that best answers the line, if any passes the window's threshold. */
export function answering(facts: readonly ContextFact[], window: ContextWindow, question: Clause): ContextFact | undefined {
  const threshold = window.retrieval?.answerThreshold ?? DEFAULT_ANSWER_THRESHOLD;
  const usable = facts.filter((f) => !(f.standing === 'claim' && f.confidence < 0.5) && f.match !== undefined);
  // A question that names a topic ("who's my furry friend?": pets) is answered from that topic's
  // facts first: when its words name the topic, by the nearest of them whatever its score (the
  // topic already says they are about the same thing); when only its meaning did, at a lower bar.
  // The memory service says what was asked about (its words, unless its meaning is confidently
  // another topic); without that (an older service), the question's own words.
  const own = slotOf(question.tokens).slot;
  const from = window.retrieval?.topicFrom;
  const slot = from || own === 'open' ? (window.retrieval?.topic ?? own) : own;
  const named = from ? (from === 'words' ? slot : 'open') : own;
  // A question for a kind of thing ("what language do I speak?", "which city am I in?") is
  // answered by a fact that names one ("I switch to Swahili when I'm tired"): one of the topic
  // asked about first, whatever its score (the topic and the kind both say it is what was
  // asked); else any, whatever topic it was filed under, the kind being more precise than the
  // topic (the memory service names only kinds narrower than WordNet's top ones).
  const naming = usable.filter((f) => f.names !== undefined);
  const answer = (slot !== 'open' ? best(naming.filter((f) => sameTopic(topicOf(f), slot)), -Infinity) : undefined) ?? best(naming, threshold * TOPIC_BAR);
  if (answer) return answer;
  if (slot !== 'open') {
    // Within the family, the side asked about (a partner is not a sister); within likings, the
    // taste (a dish is not a band). A fact whose side or taste its words do not tell must be near.
    const kin = slot === 'family' ? kinNamed(question.tokens) : undefined;
    const taste = slot === 'likes' ? tasteNamed(question.tokens) : undefined;
    const facetOf = (f: ContextFact): string | undefined => (kin ? kinOf(lastSegment(f.key)) : taste ? tasteNamed(tokens(f.summary)) : undefined);
    const asked = kin ?? taste;
    const topical = usable.filter((f) => sameTopic(topicOf(f), slot)).map((f) => ({ f, facet: asked ? facetOf(f) : asked }));
    // (The open topic gathers everything no slot holds: a fact filed there is not thereby near
    // the question, and answers it only at the full threshold. A topic of several sides asked
    // without naming one, "what do I like to drink?", is as broad: its facts answer at the lower
    // bar of a topic read from meaning, not at any score; a team's result is no drink.)
    const broad = (slot === 'family' || slot === 'likes') && asked === undefined;
    const bar = named !== 'open' && !broad ? -Infinity : slot === OPEN_TOPIC ? threshold : threshold * TOPIC_BAR;
    const onTopic =
      best(topical.filter((x) => x.facet === asked).map((x) => x.f), bar) ??
      best(topical.filter((x) => x.facet === undefined).map((x) => x.f), Math.max(bar, threshold * TOPIC_BAR));
    // A fact of another topic answers only if it is plainly what was asked: when only meaning
    // read the topic, one above the answer threshold and nearer than the topic's best ("what's
    // my diet these days?" read as a liking, "I went vegan" filed under health); else far above
    // the threshold.
    if (named === 'open' && onTopic) return best([onTopic, ...usable.filter((f) => f.match! >= threshold)], -Infinity);
    if (onTopic) return onTopic;
    // (Not a fact of the other side or taste: a sister does not answer "who am I dating?".)
    const otherSide = new Set(topical.filter((x) => x.facet !== undefined && x.facet !== asked).map((x) => x.f));
    return best(usable, threshold * OFF_TOPIC_BAR) ?? sharingAWord(usable, question, threshold) ?? standingOut(usable.filter((f) => !otherSide.has(f)), threshold, named === 'open' ? undefined : slot);
  }
  return best(usable, threshold) ?? sharingAWord(usable, question, threshold) ?? standingOut(usable, threshold);
}

/**
 * The fact that stands clear of all the others (nearer to the question by STANDS_CLEAR than the
 * next), when it is near enough to be about it at all (STANDS_CLEAR_FLOOR): below the answer
 * threshold, the sentence encoder still ranks the asked fact first far more often than it scores
 * it high ("who do I cheer for?", "Benfica won last night": 0.27), and a question about something
 * never told has no fact that stands out. Not a fact whose own words file it under another topic
 * than the one the question's words name ("do I have pets?" is not answered by the mother); one
 * filed by what its meaning read ("been with Ingrid since uni" read as an upbringing) may be.
 */
function standingOut(usable: readonly ContextFact[], threshold: number, named?: string): ContextFact | undefined {
  const [first, second] = [...usable].sort((a, b) => b.match! - a.match!);
  if (!first || first.match! < threshold * STANDS_CLEAR_FLOOR || first.match! - (second?.match ?? -Infinity) < threshold * STANDS_CLEAR) return undefined;
  const filed = topicOf(first);
  return named === undefined || named === OPEN_TOPIC || filed === OPEN_TOPIC || sameTopic(filed, named) || !toldByWords(first) ? first : undefined;
}

/** The topic a fact is filed under: the second part of its key ("speaker.pet.dog": pet). */
const topicOf = (f: ContextFact) => f.key.split('.')[1];

/** Whether a fact's own words name the topic it is filed under (else its topic was read from meaning). */
const toldByWords = (f: ContextFact) => sameTopic(slotOf(tokens(f.summary)).slot, topicOf(f) ?? '');

/**
 * The nearest fact that shares a word of content with the question (by lemma: "what do I drive?",
 * "drove here in my Corolla"), at the lower bar of a topic read from meaning: the words say what
 * the question is about where the sentence encoder, weak on short questions, does not.
 */
function sharingAWord(facts: readonly ContextFact[], question: Clause, threshold: number): ContextFact | undefined {
  const asked = telling(question.text);
  return best(facts.filter((f) => f.match! >= threshold * TOPIC_BAR && [...telling(f.summary)].some((l) => asked.has(l))), -Infinity);
}

/** The nearest of the facts at or above the floor (ties: the higher score). */
function best(list: readonly ContextFact[], floor: number): ContextFact | undefined {
  return list.filter((f) => f.match! >= floor).reduce<ContextFact | undefined>((a, f) => (!a || f.match! > a.match! || (f.match === a.match && f.score > a.score) ? f : a), undefined);
}

/**
 * The content lemmas of a text that say what it is about: not the verbs every sentence has, words
 * of asking or remembering, nor units of time (when, not what: "after a long week", "3 weeks to go").
 */
const telling = (text: string) => new Set(contentLemmas(text).filter((l) => l.length > 2 && !LIGHT.has(l) && !/^\d+$/.test(l)));

const LIGHT = new Set('be have do get go make know remember tell say think like love thing stuff name favorite favourite kind sort lot way people one time minute hour day night morning evening week weekend month year'.split(' '));

/** The share of the answer threshold a fact of the topic read from a question's meaning must reach. */
const TOPIC_BAR = 0.5;
/**
 * How much nearer than any other a fact must be to stand out, and how near at least, as shares of
 * the answer threshold (0.15 and 0.2 in the sentence encoder's space; chosen on the dev split and
 * the hand-written tuning sets, checked on val: docs/eval).
 */
const STANDS_CLEAR = 0.5;
const STANDS_CLEAR_FLOOR = 2 / 3;
/** The multiple of the answer threshold a fact of another topic than the question's must reach. */
const OFF_TOPIC_BAR = 1.3;

/** "Remember me?", "do you know who I am?": a greeting in question form. */
function rememberMe(said: readonly Clause[]): boolean {
  const text = said.map((c) => c.text.toLowerCase()).join(' ');
  return /\b(?:remember me|know who i am|recogni[sz]e me)\b/.test(text);
}

/** "Go west", "please head north", "let's go out", "can you come down": a request addressed to the NPC. */
function moveRequest(said: readonly Clause[]): (typeof DIRECTIONS)[number] | undefined {
  for (const c of said) {
    // The move verb opens the request: only politeness, "you can", "let's" or the NPC's name before it.
    // A request is in the bare form ("walk west"); "walked back through Turin in the snow" tells.
    const at = c.tokens.findIndex((t) => MOVE_VERBS.has(t.lemma) && t.lower === t.lemma && t.pos !== 'NOUN');
    if (at < 0 || !c.tokens.slice(0, at).every((t) => REQUEST_OPENERS.has(t.lower) || t.pos === 'PROPN' || t.pos === 'PUNCT')) continue;
    const direction = DIRECTIONS.find((d) => c.tokens.slice(at + 1).some((t) => t.lower === d));
    if (direction) return direction;
  }
  return undefined;
}

const REQUEST_OPENERS = new Set(['please', 'pls', 'you', 'can', 'could', 'would', 'will', 'let', "let's", "'s", 'us', 'now', 'just', 'quickly', 'ok', 'okay', 'then', 'and', 'maybe', 'go', 'on']);

/** A greeting opens the line: "hello", "hi there", "good evening", "remember me?". */
function greeting(said: readonly Clause[], line: string): boolean {
  const first = tokens(line).filter((t) => t.pos !== 'PUNCT').map((t) => t.lower);
  const text = said.map((c) => c.text.toLowerCase()).join(' ');
  return ['hello', 'hi', 'hey', 'greetings', 'howdy', 'evening', 'morning', 'afternoon'].includes(first[0] ?? '') ||
    (first[0] === 'good' && ['morning', 'evening', 'afternoon', 'day'].includes(first[1] ?? '')) ||
    /\b(?:remember me|it's me|it is me|i'm back|i am back)\b/.test(text) && said.length <= 2;
}

const ROOM_WORDS = new Set(['place', 'room', 'here', 'escape', 'exit', 'out', 'leave', 'door', 'doors', 'way', 'where', 'puzzle', 'puzzles', 'game', 'goal', 'task', 'next', 'stuck', 'win']);

/**
 * A question about where we are, the game or how to get out: "what is this place?", "how do we
 * get out?", "can I leave?". Read from what it asks, not from what qualifies it ("what do I do
 * when I'm not stuck in here?", "if we win, who am I calling first?": the asker's life); and not
 * a question whose words name a topic of a life ("what can't I eat here?").
 */
function aboutTheRoom(c: Clause): boolean {
  const words = unqualified(c.tokens).map((t) => t.lower);
  if (slotOf(c.tokens).slot !== 'open' && !words.some((w) => EXIT_WORDS.has(w))) return false;
  const we = words.some((w) => w === 'we' || w === 'us' || w === 'our');
  const mine = words.some((w) => w === 'my' || w === 'me' || w === 'mine');
  const here = words.some((w, i) => ['place', 'room'].includes(w) && ['this', 'the'].includes(words[i - 1] ?? '')) || words.some((w) => EXIT_WORDS.has(w)) || (words.includes('here') && !mine);
  // ("Out" of the room, not of a phrasal verb: "get out", "a way out", not "go out", "hang out".)
  const out = words.some((w, i) => w === 'out' && words.slice(Math.max(0, i - 2), i).some((v) => OUT_OF.has(v)));
  const wayOut = (out || words.some((w) => ['leave', 'win', 'stuck'].includes(w))) && !mine;
  // "Where am I?", "where are we?": being somewhere, and nothing else asked.
  const whereNow = words.filter((w) => /\w/.test(w)).join(' ').match(/^where (?:am i|are we)$/) !== null;
  return here || (we && words.some((w) => ROOM_WORDS.has(w) && (w !== 'out' || out))) || wayOut || whereNow;
}

const EXIT_WORDS = new Set(['escape', 'exit', 'puzzle', 'puzzles', 'door', 'doors']);
const OUT_OF = new Set(['get', 'getting', 'got', 'break', 'way', 'let', 'find', 'us', 'me']);

/** "Who are you?", "what's your name?", "what do you do here?", "tell me about yourself". */
function askingWhoYouAre(c: Clause): boolean {
  const words = c.tokens.map((t) => t.lower);
  return (words.includes('who') && words.includes('you')) ||
    (words.includes('your') && words.some((w) => ['name', 'job', 'story', 'role', 'purpose'].includes(w))) ||
    words.includes('yourself') ||
    (words[0] === 'what' && words.includes('you') && words.includes('do') && words.length <= 6);
}

function selfIntroduction(name: string, window: ContextWindow): string {
  const persona = firstSentence(window.pinned.procedural?.persona);
  return `I am ${name}.${persona ? ` ${persona}` : ''}`;
}

/** Where we are and what stands between us and the way out, from the pinned state only. */
function roomDescription(window: ContextWindow): string {
  const facts = window.pinned.state.facts;
  const room = typeof facts['npc.room'] === 'string' ? humanize(facts['npc.room']) : undefined;
  const doors = Object.entries(facts).filter(([k]) => k.startsWith('door.')).map(([k, v]) => `the ${humanize(k.slice(5))} is ${String(v)}`);
  const items = Object.entries(facts).filter(([k, v]) => k.startsWith('item.') && v === 'here').map(([k]) => `a ${humanize(k.slice(5))}`);
  const puzzles = Object.entries(facts).filter(([k]) => k.startsWith('puzzle.'));
  const unsolved = puzzles.filter(([, v]) => v === 'unsolved').length;
  const parts = [
    room ? `We are in the ${room}.` : 'We are in one of the rooms of this game.',
    doors.length ? `${cap(doors.join('; '))}.` : '',
    items.length ? `I can see ${items.join(', ')} here.` : '',
    puzzles.length ? (unsolved ? `${unsolved} of ${puzzles.length} puzzles are still unsolved; solve them to find the way out.` : 'Every puzzle is solved; the way out should be open.') : '',
  ];
  return parts.filter(Boolean).join(' ');
}

/** The clue sharing the most words with the message (ties: the higher score), if any shares one. */
function bestClue(facts: readonly ContextFact[], lower: string): ContextFact | undefined {
  let best: { fact: ContextFact; shared: number } | undefined;
  for (const fact of facts) {
    const shared = sharedWords(`${fact.key} ${fact.summary}`, lower);
    if (shared > 0 && (!best || shared > best.shared || (shared === best.shared && fact.score > best.fact.score))) best = { fact, shared };
  }
  return best?.fact;
}

const overlaps = (fact: ContextFact, lower: string) => sharedWords(`${fact.key} ${fact.summary}`, lower) > 0;

const STOP = new Set('the a an and or of to in on at for with is are was were be you your i me my it this that what do does did have has had any there here about'.split(' '));
/** Words too general to tell two facts apart. */
const GENERIC = new Set('favorite like love prefer best thing know tell remember speaker game'.split(' '));

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2 && !STOP.has(w))
      .map((w) => w.replace(/(ing|ed|es|s)$/, ''))
      .filter((w) => !GENERIC.has(w)),
  );
}

function sharedWords(a: string, lower: string): number {
  const theirs = words(lower);
  return [...words(a)].filter((w) => theirs.has(w)).length;
}

/** "speaker.occupation" and "occupation" name the same kind of fact. */
const lastSegment = (key: string) => key.slice(key.lastIndexOf('.') + 1);
const humanize = (id: string) => id.replace(/[-_.]+/g, ' ').trim();
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const lowerFirst = (s: string) => (/^(?:I|I'm|I've)\b/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1));
/** A part that opens on its verb ("got a Jeep now") was said of the speaker: "you got a Jeep now". */
const withYou = (s: string) => (tokens(s)[0]?.pos === 'VERB' ? `you ${s}` : s);
const stripPeriod = (s: string) => s.replace(/[.!?]+$/, '');
const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`).replace(/^./, (c) => c.toUpperCase());
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');
const firstSentence = (text: string | undefined) => text?.split(/(?<=[.!?])\s/)[0];
