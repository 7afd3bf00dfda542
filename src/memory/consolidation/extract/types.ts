/**
 * What extractors produce. An extractor only proposes: every candidate, whichever extractor
 * made it, then goes through the same guards (clue firewall, poisoning guard), scoring and
 * classification (../classify.ts).
 */

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
 *   hobby, preference, dislike, relationship, promise, event;
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
  'world_fact',
  'game',
  'npc_claim',
  'world_rule_claim',
  'persona_rewrite',
] as const;
export type CandidateKind = (typeof CANDIDATE_KINDS)[number];

export interface Candidate {
  episodeId: string;
  participantId: string | null;
  kind: CandidateKind;
  /** The slot: later facts with the same key supersede earlier ones ("speaker.carries"). */
  key: string;
  value: string;
  /** Third person, no participant id: "usually carries a shotgun". */
  summary: string;
  /** How sure the extractor is that the speaker asserted this (0..1). */
  confidence: number;
  /** The clause it came from: the guards check it; it is never stored. */
  text: string;
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
