/**
 * Glossary of the memory service. Every file uses these words in these senses.
 *
 * - tenant: an operator of the memory service (a studio). Derived from the credential only.
 * - game: one active game instance (`gameId`). Episodic rows and clues are bound to it.
 * - npc: a canonical NPC identity from the name registry (`npcId`); one NPC runs in many games.
 * - participant: an opaque id made by the engine's anonymization proxy. The memory service
 *   cannot tell an account from an anonymous session, nor a human from a script.
 * - room: a node of a game's location graph; a routing key on boundary events.
 * - tier: a kind of memory with its own keys and retention: working, episodic, clue, social,
 *   lore, fragment, procedural (DESIGN.md section 3).
 * - scope: the (tenant, game, npc, participants) a request may see, set per transaction from
 *   a verified credential and enforced by row-level security.
 * - clue: a semantic fact about this game's mechanics (codes, hiding places); never leaves its game.
 * - fragment: generalized anonymous chatter with no identifier, reachable only through
 *   uncertain reconstruction.
 * - lore: non-private world facts an NPC learned; the part of its social memory a clone may copy.
 * - lineage: where a cloned row came from (source npc and row, operation, actor, tool version).
 */

export const FACT_TIERS = ['clue', 'social', 'lore', 'fragment'] as const;
export type FactTier = (typeof FACT_TIERS)[number];
export const DURABLE_TIERS = ['episodic', ...FACT_TIERS] as const;
export type DurableTier = (typeof DURABLE_TIERS)[number];

export const SOURCES = ['player_statement', 'npc_observation', 'verified_game_event', 'clone'] as const;
export type Source = (typeof SOURCES)[number];

export const RETENTION_CLASSES = ['permanent', 'slow_decay', 'session_only', 'immediate_only'] as const;
export type RetentionClass = (typeof RETENTION_CLASSES)[number];

/** What a data key protects; destroying it shreds every row encrypted under it. */
export type KeyScope = 'game' | 'participant' | 'npc';

/** The sections of a context window that hold a tier's rows (and the context record's `chosen` keys). */
export type Section = 'clues' | 'social' | 'episodes' | 'lore';

/** What a clone of an NPC does with a tier's rows: copies them (lore; social facts with consent), or leaves them, counted and unopened. */
export type CloneRule = 'copy' | 'excluded';

/**
 * The one table of tiers: where each durable tier lives, which scope keys bind it, what key its
 * text is sealed under, the section of a context window its rows are packed into (none: an
 * anonymous fragment is never shown, only compared with a speaker's story), how many of its
 * rows one context assembly reads before scoring (the social tier: per participant present),
 * what a clone does with them, and what one row is called in a clone's report.
 */
export const TIER_TABLES = {
  episodic: { table: 'memory.episodic', gameBound: true, participantBound: false, keyScope: 'game', section: 'episodes', contextLimit: 20, clone: 'excluded', noun: 'episode' },
  clue: { table: 'memory.clues', gameBound: true, participantBound: false, keyScope: 'game', section: 'clues', contextLimit: 50, clone: 'excluded', noun: 'game clue' },
  social: { table: 'memory.social', gameBound: false, participantBound: true, keyScope: 'participant', section: 'social', contextLimit: 16, clone: 'copy', noun: 'social fact' },
  lore: { table: 'memory.lore', gameBound: false, participantBound: false, keyScope: 'npc', section: 'lore', contextLimit: 20, clone: 'copy', noun: 'lore fact' },
  fragment: { table: 'memory.fragments', gameBound: false, participantBound: false, keyScope: 'npc', section: null, contextLimit: 3, clone: 'excluded', noun: 'anonymous fragment' },
} as const satisfies Record<
  DurableTier,
  { table: string; gameBound: boolean; participantBound: boolean; keyScope: KeyScope; section: Section | null; contextLimit: number; clone: CloneRule; noun: string }
>;

/** The tiers a clone copies, and those it leaves. */
export type CopiedTier = { [T in DurableTier]: (typeof TIER_TABLES)[T]['clone'] extends 'copy' ? T : never }[DurableTier];
export type ExcludedTier = Exclude<DurableTier, CopiedTier>;
export const COPIED_TIERS = DURABLE_TIERS.filter((t): t is CopiedTier => TIER_TABLES[t].clone === 'copy');
export const EXCLUDED_TIERS = DURABLE_TIERS.filter((t): t is ExcludedTier => TIER_TABLES[t].clone === 'excluded');

/** The tier whose rows a window section holds. */
export const SECTION_TIER = Object.fromEntries(
  DURABLE_TIERS.flatMap((tier) => (TIER_TABLES[tier].section ? [[TIER_TABLES[tier].section, tier]] : [])),
) as Record<Section, DurableTier>;

export interface Provenance {
  source: Source;
  confidence: number;
  importance: number;
  retention: RetentionClass;
}

/** A structured fact: a key, its value, and a one-line summary (seed 003). */
export interface FactBody {
  key: string;
  value: string;
  summary: string;
}

export interface Lineage {
  sourceNpcId: string;
  sourceRowId: string;
  operationId: string;
  actor: string;
  toolVersion: string;
  at: string;
}

interface MemoryCommon {
  id: string;
  npcId: string;
  createdAt: string;
}

export interface EpisodeMemory extends MemoryCommon {
  tier: 'episodic';
  gameId: string;
  roomId: string;
  /** Null for serialized working memory, which has no single speaker. */
  participantId: string | null;
  ts: number;
  targeted: boolean;
  anonymous: boolean;
  kind: 'utterance' | 'working_summary';
  text: string;
  source: Source;
  importance: number;
}

export interface FactMemory extends MemoryCommon, Provenance {
  tier: FactTier;
  gameId: string | null;
  participantId: string | null;
  fact: FactBody;
  supersedes: string | null;
  supersededAt: string | null;
  invalidatedAt: string | null;
  derivedFrom: string[];
  lineage: Lineage | null;
  updatedAt: string;
}

export type Memory = EpisodeMemory | FactMemory;

/** An NPC's procedural memory as written by an admin: persona, directives and core. */
export interface ProceduralInput {
  persona: string;
  directives: string[];
  /** Identity, loyalties and world rules that consolidation checks candidates against. */
  core: Record<string, string>;
}

export interface Procedural extends ProceduralInput {
  npcId: string;
  version: number;
  createdBy: string;
  createdAt: string;
}
