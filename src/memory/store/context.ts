/**
 * The reads of one context assembly: every tier in one round trip (`readInScope` sends them as
 * one script), each filtered by scope, validity and expiry in SQL and ranked by its vectors.
 *
 * Two vectors rank them: `query`, what the room is talking about (the recent lines), and
 * `question`, the last line a participant said (a participant's facts are ranked by it, and it is
 * what an anonymous speaker's story is compared with, `speaker`).
 */
import { latestProceduralStatement, type ProceduralRow } from './procedural.js';
import { EPISODE_COLUMNS, candidateColumns, type CandidateRow, type EpisodeRow } from './rows.js';
import { WORKING_SELECT, type WorkingRow } from './working.js';
import { TIER_TABLES } from '../types.js';

/** How many candidates each tier contributes before scoring (`TIER_TABLES`' `contextLimit`). A participant's
 * facts are first cut to their nearest to the question (cheap), and only those are scored. */
const limit = (tier: keyof typeof TIER_TABLES) => TIER_TABLES[tier].contextLimit;

export interface ContextReadInput {
  tenantId: string;
  gameId: string;
  npcId: string;
  roomId: string;
  /** The participants present. */
  present: readonly string[];
  /** pgvector literals. */
  query: string;
  question: string;
  /** Set when the last speaker is anonymous: their line, compared with anonymous fragments. */
  speaker?: string;
}

/** A fact candidate with its distance to the room's talk and to the question. */
export type RankedCandidateRow = CandidateRow & { distance: number | null; match_distance?: number | null };
export type RankedEpisodeRow = EpisodeRow & { distance: number | null };

export interface ContextRows {
  procedural: ProceduralRow | undefined;
  working: WorkingRow | undefined;
  clues: RankedCandidateRow[];
  social: RankedCandidateRow[];
  lore: RankedCandidateRow[];
  episodes: RankedEpisodeRow[];
  fragments: { id: string; key_id: string; distance: number | null }[];
}

const CURRENT = 'superseded_at IS NULL AND invalidated_at IS NULL';

export function contextStatements(input: ContextReadInput): { text: string; params: unknown[] }[] {
  const { tenantId, gameId, npcId, roomId, present, query: q, question: qa } = input;
  return [
    latestProceduralStatement(tenantId, npcId),
    { text: WORKING_SELECT, params: [tenantId, gameId, roomId, npcId] },
    rankedFacts('clue', input),
    {
      text: `SELECT ${candidateColumns(false, true)}, embedding <=> $1::vector AS distance, embedding <=> $5::vector AS match_distance FROM ${TIER_TABLES.social.table}
             WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY participant_id
                                                 ORDER BY fact_key = 'speaker.name' DESC, embedding <=> $5::vector NULLS LAST, importance DESC, created_at DESC) AS rank
                          FROM ${TIER_TABLES.social.table} WHERE tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[]) AND ${CURRENT}) ranked
                          WHERE rank <= ${limit('social')})
               AND tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[])`,
      params: [q, tenantId, npcId, present, qa],
    },
    rankedFacts('lore', input),
    {
      text: `SELECT ${EPISODE_COLUMNS}, embedding <=> $1::vector AS distance FROM ${TIER_TABLES.episodic.table}
             WHERE tenant_id = $2 AND game_id = $3 AND npc_id = $4 ORDER BY distance LIMIT ${limit('episodic')}`,
      params: [q, tenantId, gameId, npcId],
    },
    ...(input.speaker
      ? [{
          text: `SELECT id, key_id, embedding <=> $1::vector AS distance FROM ${TIER_TABLES.fragment.table}
                 WHERE tenant_id = $2 AND npc_id = $3 AND ${CURRENT} ORDER BY distance LIMIT ${limit('fragment')}`,
          params: [input.speaker, tenantId, npcId],
        }]
      : []),
  ];
}

/**
 * The current facts of a tier bound to neither a participant nor anything narrower than its game
 * (clues, lore), nearest to the room's talk first, with their distance to the question.
 */
function rankedFacts(tier: 'clue' | 'lore', { tenantId, gameId, npcId, query, question }: ContextReadInput): { text: string; params: unknown[] } {
  const { table, gameBound } = TIER_TABLES[tier];
  return {
    text: `SELECT ${candidateColumns(gameBound, false)}, embedding <=> $1::vector AS distance, embedding <=> $4::vector AS match_distance FROM ${table}
             WHERE tenant_id = $2${gameBound ? ' AND game_id = $5' : ''} AND npc_id = $3 AND ${CURRENT} ORDER BY distance LIMIT ${limit(tier)}`,
    params: [query, tenantId, npcId, question, ...(gameBound ? [gameId] : [])],
  };
}

/** The rows of `contextStatements`' results, by tier. */
export function contextRows(results: readonly Record<string, unknown>[][]): ContextRows {
  const [procedural, working, clues, social, lore, episodes, fragments = []] = results as unknown as [
    ProceduralRow[], WorkingRow[], RankedCandidateRow[], RankedCandidateRow[], RankedCandidateRow[], RankedEpisodeRow[], ContextRows['fragments']?,
  ];
  return { procedural: procedural[0], working: working[0], clues, social, lore, episodes, fragments };
}
