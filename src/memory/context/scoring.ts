/**
 * Retrieval scoring, in one place (seed 003 step 9):
 *
 *   score = relevance x importance x validity x recency
 *
 * - relevance: cosine similarity to the query, lifted by a floor so that an important fact about
 *   a participant who is present can surface even when the last message shares no words with it
 *   (a returning player is greeted by what the NPC knows, not only by what they just said).
 * - importance: stored with the memory (consolidation scores it; 0..1).
 * - validity: how much the memory can be relied on: a verified game event 1.0; otherwise its
 *   confidence (a player's "I'm the emperor" at 0.2 stays a weak claim).
 * - recency: the decay of the memory's retention class, `decayWeight` of
 *   consolidation/retention.ts (the one place forgetting is defined). Superseded, invalidated and
 *   expired memories never get here: they are filtered in SQL before scoring.
 */
import type { RetentionClass, Source } from '../types.js';
import { decayWeight } from '../consolidation/retention.js';

export const SCORING = {
  /** relevance' = floor + (1 - floor) x cosine similarity. */
  relevanceFloor: 0.35,
} as const;

/** pgvector cosine distance (0 = same direction, 2 = opposite) to a relevance in [0, 1]. */
export function relevance(distance: number | null): number {
  const similarity = distance === null ? 0 : Math.max(0, Math.min(1, 1 - distance));
  return SCORING.relevanceFloor + (1 - SCORING.relevanceFloor) * similarity;
}

export function validity(source: Source, confidence: number): number {
  return source === 'verified_game_event' ? 1 : Math.max(0, Math.min(1, confidence));
}

export function score(input: {
  distance: number | null;
  importance: number;
  source: Source;
  confidence: number;
  retention: RetentionClass;
  ageSeconds: number;
}): number {
  return (
    relevance(input.distance) *
    input.importance *
    validity(input.source, input.confidence) *
    decayWeight(input.retention, input.ageSeconds * 1000, input.importance)
  );
}

/** Token shares of the budget left after the pinned part; unused share flows to the next section. */
export const QUOTAS = {
  transcript: 0.35,
  clues: 0.15,
  social: 0.25,
  episodes: 0.15,
  lore: 0.1,
} as const;

/** Working memory is summarized when its transcript passes this share of its quota. */
export const SUMMARIZE_AT = 0.8;

/**
 * The similarity between a question and a remembered fact at which the fact answers it, per
 * embedding space (cosine of the question with the fact's second-person summary). Calibrated on
 * the natural-phrasing dev split (docs/eval): the sentence encoder puts a question and the fact
 * it asks about at 0.3-0.65 and a question about something never said below 0.3; lexical hashing
 * only matches shared words. Other models: 0.35 until calibrated.
 */
export function answerThreshold(embedderId: string): number {
  if (embedderId.startsWith('use-lite')) return ANSWER_THRESHOLDS.sentenceEncoder;
  if (embedderId.startsWith('local-hash')) return ANSWER_THRESHOLDS.hashing;
  return ANSWER_THRESHOLDS.other;
}

export const ANSWER_THRESHOLDS = { sentenceEncoder: 0.3, hashing: 0.12, other: 0.35 } as const;
