/**
 * The deterministic offline responder: the embedded default's "model". It composes a reply from
 * the context window alone, in a fixed order of rules, so the sample game is playable and the
 * seed scenarios demonstrable without any model:
 *
 * 1. after a refused action: acknowledge the physical failure;
 * 2. a request to go somewhere: propose a move (the engine decides whether it happens);
 * 3. the uncertain-reconstruction directive: "someone told me something similar", nothing more;
 * 4. a question about codes, keys or hiding places: answer from this game's clues, or say so;
 * 5. a greeting: greet a returning participant by what the NPC remembers of them;
 * 6. a remembered claim or a memory the state contradicts: say it as a claim or as a memory;
 * 7. otherwise: a short in-persona line that admits not knowing.
 *
 * Same input, same output; proposals use the engine's action form, as a model's would.
 */
import type { ContextFact } from '../boundary/context.js';
import type { ModelInput, ModelProvider, NpcReply } from './types.js';

const DIRECTIONS = ['north', 'south', 'east', 'west', 'up', 'down', 'in', 'out'] as const;

export class OfflineResponder implements ModelProvider {
  readonly id = 'offline-v1';

  async reply(input: ModelInput): Promise<NpcReply> {
    return respond(input);
  }
}

export function respond({ npc, window, trigger, physicalFailure }: ModelInput): NpcReply {
  const text = trigger.text;
  const lower = text.toLowerCase();

  if (physicalFailure) {
    return { text: `I tried, but I can't: ${lowerFirst(physicalFailure)}`, actions: [] };
  }

  const direction = DIRECTIONS.find((d) => new RegExp(`\\b(?:go|walk|head|move|come|run|step)\\b[^.?!]*\\b${d}\\b`).test(lower));
  if (direction) {
    return { text: `Very well, I will go ${direction}.`, actions: [{ type: 'move', direction }] };
  }

  const reconstruction = window.directives.find((d) => d.kind === 'uncertain_reconstruction');
  if (reconstruction) {
    const topic = /\(about: ([^)]*)\)/.exec(reconstruction.text)?.[1] ?? 'that';
    return { text: `What a coincidence. I recently heard a similar story from someone else, about ${topic}.`, actions: [] };
  }

  if (/\b(code|combination|password|key|clue|safe|hidden|hiding|secret|where is|where's)\b/.test(lower)) {
    const clue = bestMatch(window.clues, lower);
    if (clue) return { text: `From what we have found in this game: ${sentence(clue.summary)}`, actions: [] };
    return { text: "I don't know the code; we haven't found any clues yet.", actions: [] };
  }

  const known = window.participants[trigger.participantId];
  const facts = known?.facts ?? [];
  if (/\b(hello|hi|hey|greetings|good (morning|evening|afternoon)|remember me|again|it's me)\b/.test(lower)) {
    const name = facts.find((f) => ['player_name', 'name'].includes(lastSegment(f.key)))?.value;
    const work = facts.find((f) => ['occupation', 'job', 'work'].includes(lastSegment(f.key)))?.value;
    if (!trigger.anonymous && (name || work)) {
      const greeting = `Welcome back${name ? `, ${name}` : ''}! It has been a while.`;
      return { text: work ? `${greeting} How are things holding up in your work as ${article(work)} ${work}?` : greeting, actions: [] };
    }
    return { text: `Hello. I am ${npc.firstName}. ${firstSentence(window.pinned.procedural?.persona) ?? ''}`.trim(), actions: [] };
  }

  const contradicted = facts.concat(window.clues).find((f) => f.standing === 'memory_contradicted_by_state' && overlaps(f, lower));
  if (contradicted) {
    return { text: `I remember that ${lowerFirst(stripPeriod(contradicted.summary))}, but that is not how things stand now.`, actions: [] };
  }
  const claim = facts.find((f) => f.standing === 'claim' && f.confidence < 0.5 && overlaps(f, lower));
  if (claim) return { text: `You say so: ${lowerFirst(stripPeriod(claim.summary))}. Sure.`, actions: [] };

  const relevant = bestMatch(facts, lower);
  if (relevant) return { text: `I remember: ${sentence(relevant.summary)}`, actions: [] };
  return { text: `${npc.firstName} thinks for a moment. "I don't know about that."`, actions: [] };
}

/** The fact sharing the most words with the message (ties: the higher score), if any shares one. */
function bestMatch(facts: readonly ContextFact[], lower: string): ContextFact | undefined {
  let best: { fact: ContextFact; shared: number } | undefined;
  for (const fact of facts) {
    const shared = sharedWords(`${fact.key} ${fact.summary}`, lower);
    if (shared > 0 && (!best || shared > best.shared || (shared === best.shared && fact.score > best.fact.score))) best = { fact, shared };
  }
  return best?.fact;
}

const overlaps = (fact: ContextFact, lower: string) => sharedWords(`${fact.key} ${fact.summary}`, lower) > 0;

const STOP = new Set('the a an and or of to in on at for with is are was were be you your i me my it this that what do does did have has had any there here about'.split(' '));
/**
 * Words too general to tell two facts apart: "my favorite sport?" must not be answered with the
 * favorite color. A match needs a shared word outside this list.
 */
const GENERIC = new Set('favorite like love prefer best thing know tell remember speaker'.split(' '));

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2 && !STOP.has(w))
      .map((w) => stem(british(w)))
      .filter((w) => !GENERIC.has(w)),
  );
}

function sharedWords(a: string, lower: string): number {
  const theirs = words(lower);
  return [...words(a)].filter((w) => theirs.has(w)).length;
}

/** "colour" and "color", "favourite" and "favorite" are one word here. */
const british = (w: string) => w.replace(/our(ite|s)?$/, 'or$1').replace(/ise$/, 'ize');

/** "speaker.occupation" and "occupation" name the same kind of fact. */
const lastSegment = (key: string) => key.slice(key.lastIndexOf('.') + 1);
const stem = (w: string) => w.replace(/(ing|ed|es|s)$/, '');
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const stripPeriod = (s: string) => s.replace(/[.!?]+$/, '');
const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`).replace(/^./, (c) => c.toUpperCase());
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');
const firstSentence = (text: string | undefined) => text?.split(/(?<=[.!?])\s/)[0];

