/**
 * What extractors produce. An extractor only proposes: every candidate, whichever extractor
 * made it, then goes through the same guards (clue firewall, poisoning guard), scoring and
 * classification (../classify.ts).
 */
import { OPEN_TOPIC } from '../../../boundary/context.js';

/** One decrypted episode handed to an extractor (never logged, never stored as is). */
export interface EpisodeInput {
  id: string;
  gameId: string;
  npcId: string;
  roomId: string;
  /** Null for serialized working memory, which has no single speaker. */
  participantId: string | null;
  /** A per-session id: its chatter is kept only as generalized anonymous fragments. */
  anonymous: boolean;
  kind: 'utterance' | 'working_summary';
  ts: number;
  targeted: boolean;
  text: string;
}

/**
 * - speaker facts: name, occupation, claim (an unverifiable grand claim: "I'm the emperor"),
 *   hobby, preference, dislike, relationship, promise, event; and the open-domain slots: home
 *   (where the speaker lives now), origin (where they come from), pet, family, health (allergies
 *   and conditions), fear, trip, and personal (any other self-disclosure, with an open key);
 * - world_fact: a non-private fact about the world (lore);
 * - game: codes, hiding places, solutions, puzzle progress (always a clue);
 * - npc_claim / world_rule_claim / persona_rewrite: attempts to tell the NPC who it is, whom it
 *   serves, what the rules are, or to rewrite its instructions (the poisoning guard's input).
 */
export const CANDIDATE_KINDS = [
  'name',
  'occupation',
  'claim',
  'hobby',
  'preference',
  'dislike',
  'relationship',
  'promise',
  'event',
  'home',
  'origin',
  'pet',
  'family',
  'health',
  'fear',
  'trip',
  'personal',
  'world_fact',
  'game',
  'npc_claim',
  'world_rule_claim',
  'persona_rewrite',
] as const;
export type CandidateKind = (typeof CANDIDATE_KINDS)[number];

/**
 * What a candidate does to memory. `add`: a new fact (or a reinforcement of the same value);
 * `update`: the speaker corrects or replaces the value of a slot ("we've just moved, to Geneva",
 * "actually ...", "not any more"): the slot's old value is superseded even when the new key is
 * only a prefix match; `forget`: the speaker asks the NPC to forget something ("forget what I said
 * about my husband", "scrap that"): the speaker's facts matching `key` (a slot or slot prefix) or,
 * when `key` is empty, matching `value` by meaning, are invalidated.
 */
export const CANDIDATE_OPS = ['add', 'update', 'forget'] as const;
export type CandidateOp = (typeof CANDIDATE_OPS)[number];

/**
 * The recognized slots of a participant's social facts. A fact whose slot is recognized gets one
 * of these keys (a `.<slug>` suffix for slots that hold several values: pets, relatives, likes);
 * anything else gets `speaker.fact.<slug>`. Single-valued slots are superseded by a new value.
 */
export const SLOTS = {
  name: 'speaker.name',
  occupation: 'speaker.occupation',
  home: 'speaker.home',
  origin: 'speaker.origin',
  pet: 'speaker.pet',
  family: 'speaker.family',
  health: 'speaker.health',
  allergy: 'speaker.allergy',
  likes: 'speaker.likes',
  dislikes: 'speaker.dislikes',
  fear: 'speaker.fear',
  trip: 'speaker.trip',
  hobby: 'speaker.hobby',
  open: `speaker.${OPEN_TOPIC}`,
} as const;

/** The kind of candidate a fact of each slot is (allergies are a matter of health). */
export const SLOT_KIND: Record<keyof typeof SLOTS, CandidateKind> = {
  name: 'name',
  occupation: 'occupation',
  home: 'home',
  origin: 'origin',
  pet: 'pet',
  family: 'family',
  health: 'health',
  allergy: 'health',
  likes: 'preference',
  dislikes: 'dislike',
  fear: 'fear',
  trip: 'trip',
  hobby: 'hobby',
  open: 'personal',
};

/** Slots that hold one value: a new value replaces the old one, under the slot's own key. */
export const SINGLE_VALUED: ReadonlySet<keyof typeof SLOTS> = new Set(['name', 'occupation', 'home', 'origin']);

export interface Candidate {
  episodeId: string;
  participantId: string | null;
  kind: CandidateKind;
  /** What it does to memory. (Default: 'add') */
  op?: CandidateOp;
  /** The slot: later facts with the same key supersede earlier ones ("speaker.carries"). */
  key: string;
  value: string;
  /**
   * Said to the speaker, in the second person, no participant id: "You keep bees on a rooftop in
   * Lyon." (older extractors wrote a third-person phrase: "usually carries a shotgun").
   */
  summary: string;
  /** How sure the extractor is that the speaker asserted this (0..1). */
  confidence: number;
  /** The clause it came from: the guards check it; it is never stored. */
  text: string;
  /**
   * Of an update: what its line says came to an end ("gave up the swimming, into bouldering
   * now": "gave up the swimming"), which is what the update replaces. Never stored.
   */
  ends?: string;
  /**
   * Of an update: the clause says only that something ended ("I quit deloitte"), with nothing
   * after it in its line that replaced it. It ends the fact that names what it names and is then
   * no fact of now itself; it is kept when it ends none. Never stored.
   */
  endsOnly?: boolean;
}

export interface Extractor {
  /** Recorded on nothing; for logs and tests. */
  readonly id: string;
  extract(episodes: readonly EpisodeInput[]): Promise<Candidate[]>;
}

export class ExtractorError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ExtractorError';
  }
}

/** A short key segment from free text: lowercase words joined by '-', at most 4 words. */
export function slug(text: string, words = 4): string {
  const parts = text
    .toLowerCase()
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !STOP.has(w));
  return parts.slice(0, words).join('-').slice(0, 60) || 'thing';
}

const STOP = new Set(['a', 'an', 'the', 'my', 'your', 'his', 'her', 'their', 'our', 'some', 'of', 'to', 'and', 'really', 'very', 'so', 'just']);
