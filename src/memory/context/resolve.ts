/**
 * Resolution, the step between the reads and the packing of a context window: each candidate
 * scored within its tier, the newest fact of a key kept, and precedence applied (DESIGN section
 * 4: state > procedural > clues > social > episodic). What loses is recorded as shadowed, with
 * the id that shadowed it and why, for "why did she say that".
 */
import type { Standing } from '../../boundary/context.js';
import type { RankedCandidateRow, RankedEpisodeRow } from '../store/context.js';
import type { FactTier, RetentionClass, Source } from '../types.js';
import { score } from './scoring.js';

export type Candidate = { tier: FactTier; row: RankedCandidateRow; score: number };
export type ScoredEpisode = { row: RankedEpisodeRow; score: number };
export type Shadowed = { id: string; by: string; reason: string };

export interface Resolved {
  clues: Candidate[];
  social: Candidate[];
  lore: Candidate[];
  episodes: ScoredEpisode[];
  shadowed: Shadowed[];
}

/**
 * Scores every candidate, keeps the newest fact of each key (per participant), and drops social
 * facts and lore whose key the procedural core or a clue of this game defines.
 */
export function resolve(
  rows: { clues: RankedCandidateRow[]; social: RankedCandidateRow[]; lore: RankedCandidateRow[]; episodes: RankedEpisodeRow[] },
  core: Record<string, string> | undefined,
  now: number,
): Resolved {
  const shadowed: Shadowed[] = [];
  const clues = newestPerKey(scored('clue', rows.clues, now), shadowed);
  const social = newestPerKey(scored('social', rows.social, now), shadowed);
  const lore = newestPerKey(scored('lore', rows.lore, now), shadowed);
  // Precedence: procedural core and this game's clues outrank social memory and lore.
  const coreKeys = new Set(Object.keys(core ?? {}).map(normalizeKey));
  const clueKeys = new Map(clues.map((c) => [normalizeKey(c.row.fact_key), c.row.id]));
  const outranked = (c: Candidate) => {
    const key = normalizeKey(c.row.fact_key);
    if (coreKeys.has(key)) return shadowed.push({ id: c.row.id, by: 'procedural', reason: `procedural core defines "${key}"` }) > 0;
    const clue = clueKeys.get(key);
    if (clue) return shadowed.push({ id: c.row.id, by: clue, reason: 'a game clue with the same key outranks it' }) > 0;
    return false;
  };
  const episodes = rows.episodes.map((row) => ({
    row,
    score: score({ distance: distanceOf(row.distance), importance: row.importance, source: row.source as Source, confidence: 1, retention: 'session_only', ageSeconds: 0 }),
  }));
  return { clues, social: social.filter((c) => !outranked(c)), lore: lore.filter((c) => !outranked(c)), episodes, shadowed };
}

function scored(tier: FactTier, rows: readonly RankedCandidateRow[], now: number): Candidate[] {
  return rows.map((row) => ({
    tier,
    row,
    score: score({
      distance: distanceOf(row.distance),
      importance: row.importance,
      source: row.source as Source,
      confidence: row.confidence,
      retention: row.retention as RetentionClass,
      ageSeconds: (now - row.created_ms) / 1000,
    }),
  }));
}

/** Within one tier (and one participant), the newest fact of a key wins; the rest are shadowed. */
function newestPerKey(candidates: Candidate[], shadowed: Shadowed[]): Candidate[] {
  const newest = new Map<string, Candidate>();
  for (const c of candidates) {
    const k = `${c.row.participant_id ?? ''}\0${normalizeKey(c.row.fact_key)}`;
    const seen = newest.get(k);
    if (!seen) newest.set(k, c);
    else {
      const [win, lose] = c.row.created_ms > seen.row.created_ms ? [c, seen] : [seen, c];
      newest.set(k, win);
      shadowed.push({ id: lose.row.id, by: win.row.id, reason: 'a newer fact with the same key' });
    }
  }
  return [...newest.values()];
}

export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

export function standingOf(source: Source): Standing {
  if (source === 'verified_game_event') return 'known';
  if (source === 'player_statement') return 'claim';
  return 'observed';
}

/** pgvector's distance as a number; NULL (a row without a vector) stays null, which scores as no relevance. */
export const distanceOf = (d: unknown): number | null => (d === null || d === undefined ? null : Number(d));
/** A cosine similarity from a distance; a row without a vector matches nothing. */
export const similarityOf = (d: unknown): number => 1 - (distanceOf(d) ?? 1);
export const round = (x: number) => Math.round(x * 1000) / 1000;
