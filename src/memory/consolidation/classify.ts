/**
 * From candidates to planned writes: the clue firewall first, then the poisoning guard, then
 * importance scoring (trivia dropped), then the tier (clue / social / lore / fragment) and the
 * retention class. Pure: no I/O, so every extractor's output is judged the same way.
 */
import type { GameSecret } from './firewall.js';
import type { FactTier, RetentionClass, Source } from '../types.js';
import type { Candidate, CandidateKind, EpisodeInput } from './extract/types.js';
import { gameDetail, generalize } from './firewall.js';
import { clauses, person, revoice, withSubject } from '../../language/index.js';
import { judge, type AnomalyKind } from './poisoning.js';
import { retentionFor } from './retention.js';
import { slug } from './extract/types.js';

export interface PlannedFact {
  tier: FactTier;
  participantId?: string;
  key: string;
  value: string;
  summary: string;
  source: Source;
  confidence: number;
  importance: number;
  retention: RetentionClass;
  episodeIds: string[];
  kind: CandidateKind;
  /** An update supersedes the most similar current fact of its slot even under another key. */
  op?: 'add' | 'update';
  /** Filed under its topic by a reading of meaning that is not sure of it: what it replaces is not told by that topic. */
  guessedTopic?: boolean;
  /** Of an update: what its line says came to an end, the fact it replaces by meaning (`Candidate.ends`). */
  ends?: string;
  /** Of an update: it only says that something ended (`Candidate.endsOnly`). */
  endsOnly?: boolean;
}

/** A speaker's request to forget: consolidation invalidates their matching social facts. */
export interface PlannedForget {
  participantId: string;
  /** A slot prefix ("speaker.family"), or '' to match by `about` alone. */
  key: string;
  /** What to forget, as said ("my husband"); '' for what the speaker said last. */
  about: string;
  episodeId: string;
}

export interface PlannedAnomaly {
  kind: AnomalyKind;
  coreKey: string | null;
  candidate: Candidate;
}

export interface Plan {
  facts: PlannedFact[];
  forgets: PlannedForget[];
  anomalies: PlannedAnomaly[];
  /** Why candidates were not kept, counted (for logs and tests; no text). */
  dropped: Record<string, number>;
}

export interface PlanContext {
  episodes: readonly EpisodeInput[];
  secrets: readonly GameSecret[];
  core: Readonly<Record<string, unknown>>;
}

/** Below this importance a candidate is trivia and is not stored. (Default) */
export const TRIVIA_BELOW = 0.3;

const BASE_IMPORTANCE: Record<CandidateKind, number> = {
  name: 0.9,
  occupation: 0.7,
  claim: 0.35,
  hobby: 0.6,
  preference: 0.6,
  dislike: 0.6,
  relationship: 0.75,
  promise: 0.8,
  event: 0.7,
  home: 0.8,
  origin: 0.75,
  pet: 0.75,
  family: 0.75,
  health: 0.85,
  fear: 0.65,
  trip: 0.65,
  personal: 0.55,
  world_fact: 0.5,
  game: 0.85,
  npc_claim: 0,
  world_rule_claim: 0,
  persona_rewrite: 0,
};

/** Kinds that may also live on as an anonymous fragment ("someone told me about ..."). */
const FRAGMENT_KINDS = new Set<CandidateKind>(['hobby', 'event', 'preference', 'dislike', 'trip', 'personal', 'fear', 'family', 'pet', 'health']);

/** Seed 003's scoring: what kind of fact, was it addressed to the NPC, how specific it is. */
export function importanceOf(candidate: Candidate, episode: EpisodeInput | undefined): number {
  let score = BASE_IMPORTANCE[candidate.kind];
  if (episode?.targeted) score += 0.1;
  const words = candidate.value.split(/\s+/).length;
  if (words <= 1 && candidate.kind !== 'name') score -= 0.1;
  if (/^(?:it|that|this|stuff|things?|something|anything|everything)$/i.test(candidate.value.trim())) score = 0;
  return Math.round(Math.min(1, Math.max(0, score)) * 100) / 100;
}

export function plan(candidates: readonly Candidate[], ctx: PlanContext): Plan {
  const byId = new Map(ctx.episodes.map((e) => [e.id, e]));
  const known: Known = {
    names: candidates.filter((c) => c.kind === 'name' || c.kind === 'relationship' || c.kind === 'family' || c.kind === 'pet').flatMap((c) => properNames(c.value)),
    ids: [...new Set(ctx.episodes.flatMap((e) => [e.gameId, e.roomId, e.npcId, e.participantId ?? '']))].filter(Boolean),
  };
  const out: Plan = { facts: [], forgets: [], anomalies: [], dropped: {} };
  for (const c of candidates) {
    const episode = byId.get(c.episodeId);
    const decision = episode ? decide(c, episode, ctx, known) : { dropped: 'unknown_episode' };
    if ('fact' in decision) out.facts.push(decision.fact);
    else if ('forget' in decision) out.forgets.push(decision.forget);
    else if ('anomaly' in decision) out.anomalies.push(decision.anomaly);
    else out.dropped[decision.dropped] = (out.dropped[decision.dropped] ?? 0) + 1;
  }
  return out;
}

/** What one candidate becomes: a fact of some tier, a forget, an anomaly, or why it was dropped. */
type Decision = { fact: PlannedFact } | { forget: PlannedForget } | { anomaly: PlannedAnomaly } | { dropped: string };

/** Names said in the batch and the batch's ids: what a fragment must not carry. */
interface Known {
  names: string[];
  ids: string[];
}

function decide(c: Candidate, episode: EpisodeInput, ctx: PlanContext, known: Known): Decision {
  if (c.op === 'forget') {
    return c.participantId && !episode.anonymous ? { forget: { participantId: c.participantId, key: c.key, about: c.value, episodeId: c.episodeId } } : { dropped: 'forget_without_speaker' };
  }
  // 1. Attempts on the NPC's persona or the world's rules never become memory of any tier;
  //    they are judged first (their anomaly row is purged with the game, like a clue).
  if (c.kind === 'npc_claim' || c.kind === 'world_rule_claim' || c.kind === 'persona_rewrite') {
    const verdict = judge(c, ctx.core);
    return verdict.action === 'anomaly' ? { anomaly: { kind: verdict.kind, coreKey: verdict.coreKey, candidate: c } } : { dropped: 'restates_core' };
  }
  // 2. The clue firewall: a secret, or anything that looks like one, stays in this game.
  const clue = asClue(c, episode, ctx.secrets);
  if (clue) return { fact: clue };
  // 3. The poisoning guard (lore that contradicts the world's rules or speaks of the NPC).
  const verdict = judge(c, ctx.core);
  if (verdict.action === 'anomaly') return { anomaly: { kind: verdict.kind, coreKey: verdict.coreKey, candidate: c } };
  if (verdict.action === 'drop') return { dropped: 'restates_core' };
  // 4. Importance: trivia is not stored.
  const importance = importanceOf(c, episode);
  if (importance < TRIVIA_BELOW) return { dropped: 'trivia' };
  // Serialized working memory has no single speaker: only its clues are kept.
  if (episode.kind !== 'utterance' || !c.participantId) return { dropped: 'no_single_speaker' };
  // A grand claim is recorded as a claim, and stays a low-confidence one.
  const confidence = c.kind === 'claim' ? Math.min(0.3, c.confidence) : clamp(c.confidence);
  // 5. The tier.
  const kept = { key: c.key, value: c.value, summary: c.summary, source: 'player_statement' as const, confidence, importance, episodeIds: [c.episodeId], kind: c.kind };
  if (c.kind === 'world_fact') return { fact: { ...kept, tier: 'lore', retention: retentionFor(c.kind, 'lore') } };
  if (!episode.anonymous) return { fact: { ...kept, tier: 'social', participantId: c.participantId, retention: retentionFor(c.kind, 'social'), op: c.op === 'update' ? 'update' : 'add', ...(c.op === 'update' && c.ends ? { ends: c.ends } : {}), ...(c.op === 'update' && c.endsOnly ? { endsOnly: true } : {}) } };
  // An anonymous speaker will not come back under this id: no social fact, only a fragment, told
  // about the speaker in the third person: "they rebuilt their grandmother's 1958 Vespa".
  if (!FRAGMENT_KINDS.has(c.kind)) return { dropped: 'anonymous_identifying' };
  const general = generalize(thirdPerson(c.text) ?? c.value, { ...known, registered: ctx.secrets });
  if (!general) return { dropped: 'fragment_not_generalizable' };
  return {
    fact: {
      ...kept,
      tier: 'fragment',
      key: `topic.${slug(general, 4)}`,
      value: general,
      summary: `someone told me ${general}`,
      confidence: Math.min(confidence, 0.5),
      importance: Math.min(importance, 0.5),
      retention: 'slow_decay',
    },
  };
}

/**
 * A candidate that is, or looks like, a game secret: a clue of this game only. A clause about the
 * speaker's own life is judged by what a game detail must contain, not by a game word alone ("my
 * wife's the puzzle genius of the two of us" stays social).
 */
function asClue(c: Candidate, episode: EpisodeInput, secrets: readonly GameSecret[]): PlannedFact | undefined {
  const aboutSpeaker = SPEAKER_KINDS.has(c.kind);
  const secretKind = c.kind === 'game' ? 'game' : (gameDetail(c.text, aboutSpeaker, secrets) ?? gameDetail(c.value, aboutSpeaker, secrets) ?? gameDetail(c.summary, aboutSpeaker, secrets));
  if (!secretKind) return undefined;
  return {
    tier: 'clue',
    key: c.kind === 'game' ? c.key : `game.${secretKind}`,
    value: c.value,
    summary: c.summary,
    source: 'player_statement',
    confidence: clamp(c.confidence),
    importance: Math.max(0.8, importanceOf({ ...c, kind: 'game' }, episode)),
    retention: 'session_only',
    episodeIds: [c.episodeId],
    kind: 'game',
  };
}

/** Kinds that are about the speaker's own life. */
const SPEAKER_KINDS = new Set<CandidateKind>(['name', 'occupation', 'hobby', 'preference', 'dislike', 'relationship', 'event', 'home', 'origin', 'pet', 'family', 'health', 'fear', 'trip', 'personal']);

/** A first-person clause told about its speaker ("they rebuilt their grandmother's Vespa"); undefined for anything else. */
function thirdPerson(clause: string): string | undefined {
  const [first] = clauses(clause);
  if (!first || person(first) !== 'first') return undefined;
  const told = revoice(withSubject(first), 'third');
  return told.charAt(0).toLowerCase() + told.slice(1);
}

const clamp = (n: number) => Math.round(Math.min(1, Math.max(0, Number.isFinite(n) ? n : 0.5)) * 100) / 100;

/** Capitalized words of a value that may be names; a make after a year ("a 1958 Vespa") is not one. */
function properNames(value: string): string[] {
  return [...value.matchAll(/(?<=^|\s)(\S*?)\s*\b([A-Z][a-z'-]+)\b/g)]
    .filter((m) => !/^(?:1[89]\d\d|20\d\d)$/.test(m[1] ?? ''))
    .map((m) => m[2]!)
    .filter((w) => w.length >= 2);
}
