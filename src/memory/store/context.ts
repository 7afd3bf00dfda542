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

/** How many candidates each tier contributes before scoring. A participant's facts are first cut to
 * their most important ones (cheap), and only those are compared with the query (a vector distance each). */
export const CONTEXT_LIMITS = { clues: 50, socialPerParticipant: 16, lore: 20, episodes: 20, fragments: 3 } as const;

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
    {
      text: `SELECT ${candidateColumns(true, false)}, embedding <=> $1::vector AS distance, embedding <=> $5::vector AS match_distance FROM memory.clues
             WHERE tenant_id = $2 AND game_id = $3 AND npc_id = $4 AND ${CURRENT} ORDER BY distance LIMIT ${CONTEXT_LIMITS.clues}`,
      params: [q, tenantId, gameId, npcId, qa],
    },
    {
      text: `SELECT ${candidateColumns(false, true)}, embedding <=> $1::vector AS distance, embedding <=> $5::vector AS match_distance FROM memory.social
             WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY participant_id
                                                 ORDER BY fact_key = 'speaker.name' DESC, embedding <=> $5::vector NULLS LAST, importance DESC, created_at DESC) AS rank
                          FROM memory.social WHERE tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[]) AND ${CURRENT}) ranked
                          WHERE rank <= ${CONTEXT_LIMITS.socialPerParticipant})
               AND tenant_id = $2 AND npc_id = $3 AND participant_id = ANY ($4::text[])`,
      params: [q, tenantId, npcId, present, qa],
    },
    {
      text: `SELECT ${candidateColumns(false, false)}, embedding <=> $1::vector AS distance, embedding <=> $4::vector AS match_distance FROM memory.lore
             WHERE tenant_id = $2 AND npc_id = $3 AND ${CURRENT} ORDER BY distance LIMIT ${CONTEXT_LIMITS.lore}`,
      params: [q, tenantId, npcId, qa],
    },
    {
      text: `SELECT ${EPISODE_COLUMNS}, embedding <=> $1::vector AS distance FROM memory.episodic
             WHERE tenant_id = $2 AND game_id = $3 AND npc_id = $4 ORDER BY distance LIMIT ${CONTEXT_LIMITS.episodes}`,
      params: [q, tenantId, gameId, npcId],
    },
    ...(input.speaker
      ? [{
          text: `SELECT id, key_id, embedding <=> $1::vector AS distance FROM memory.fragments
                 WHERE tenant_id = $2 AND npc_id = $3 AND ${CURRENT} ORDER BY distance LIMIT ${CONTEXT_LIMITS.fragments}`,
          params: [input.speaker, tenantId, npcId],
        }]
      : []),
  ];
}

/** The rows of `contextStatements`' results, by tier. */
export function contextRows(results: readonly Record<string, unknown>[][]): ContextRows {
  const [procedural, working, clues, social, lore, episodes, fragments = []] = results as unknown as [
    ProceduralRow[], WorkingRow[], RankedCandidateRow[], RankedCandidateRow[], RankedCandidateRow[], RankedEpisodeRow[], ContextRows['fragments']?,
  ];
  return { procedural: procedural[0], working: working[0], clues, social, lore, episodes, fragments };
}
