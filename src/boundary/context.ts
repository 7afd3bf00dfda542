/**
 * The context contract: what the engine sends before an NPC's turn, and the context window the
 * memory service returns (POST /v1/npcs/:npcId/context with a game token whose participants are
 * the ones present). The window is structured JSON, facts segregated by participant, with the
 * procedural directives and the authoritative state pinned at the end.
 */
import { Type, type Static } from 'typebox';
import { MAX_TEXT_LENGTH, ParticipantId, ScopeId } from './events.js';

const strict = { additionalProperties: false } as const;

export const Speaker = Type.Union([
  Type.Object({ participantId: ParticipantId }, strict),
  Type.Object({ npcId: ScopeId }, strict),
]);
export type Speaker = Static<typeof Speaker>;

/** One entry of the room's ordered stream, as the engine numbered it. */
export const RoomMessage = Type.Object(
  {
    seq: Type.Integer({ minimum: 0 }),
    speaker: Speaker,
    text: Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH }),
    targeted: Type.Boolean(),
    ts: Type.Integer({ minimum: 0 }),
  },
  strict,
);
export type RoomMessage = Static<typeof RoomMessage>;

/** The authoritative game state: reality, which outranks every memory. */
export const StateSnapshot = Type.Object(
  {
    version: Type.Integer({ minimum: 0 }),
    facts: Type.Record(
      Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' }),
      Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean(), Type.Null()]),
      // additionalProperties: a key outside the pattern is refused, not taken unchecked with any value.
      { maxProperties: 300, additionalProperties: false },
    ),
  },
  strict,
);
export type StateSnapshot = Static<typeof StateSnapshot>;

export const ContextRequest = Type.Object(
  {
    roomId: ScopeId,
    /** Who is present; `anonymous` marks per-session ids (never whether a human or a script). */
    participants: Type.Array(Type.Object({ participantId: ParticipantId, anonymous: Type.Boolean() }, strict), {
      maxItems: 16,
    }),
    /** The latest messages of the room's stream, oldest first. */
    messages: Type.Array(RoomMessage, { maxItems: 64 }),
    state: StateSnapshot,
    /** Tokens the whole window may use. (Default: 2000) */
    tokenBudget: Type.Optional(Type.Integer({ minimum: 256, maximum: 32000 })),
  },
  strict,
);
export type ContextRequest = Static<typeof ContextRequest>;

/** How a remembered fact stands against what is known (seed 003 step 8 and 12). */
export const STANDINGS = ['known', 'claim', 'observed', 'memory_contradicted_by_state'] as const;
export type Standing = (typeof STANDINGS)[number];

export interface ContextFact {
  id: string;
  key: string;
  value: string;
  summary: string;
  standing: Standing;
  confidence: number;
  score: number;
  /**
   * Cosine similarity of this memory to the last line a participant said (what was just asked),
   * in the memory service's embedding space; absent when the memory has no vector.
   */
  match?: number;
  /** When the last line asks for a kind of thing (`retrieval.asksFor`): the word of this memory that names one. */
  names?: string;
  /** For a memory that contradicts the state: what the state says instead. */
  stateSays?: string | number | boolean | null;
}

export interface ContextEpisode {
  id: string;
  speaker: string;
  text: string;
  ts: number;
  score: number;
}

export interface ContextTurn {
  seq: number;
  speaker: string;
  text: string;
  targeted: boolean;
}

export interface ContextDirective {
  kind: 'uncertain_reconstruction' | 'controller_opacity' | 'state_outranks_memory';
  text: string;
}

/** The context window. Key order is the prompt order: procedural and state come last. */
export interface ContextWindow {
  contextId: string;
  npcId: string;
  gameId: string;
  roomId: string;
  clues: ContextFact[];
  /** Social facts, segregated by participant id (failure mode 4). */
  participants: Record<string, { anonymous: boolean; facts: ContextFact[] }>;
  lore: ContextFact[];
  episodes: ContextEpisode[];
  transcript: { summary: string | null; turns: ContextTurn[] };
  directives: ContextDirective[];
  pinned: {
    procedural: { version: number; persona: string; directives: string[] } | null;
    state: StateSnapshot;
  };
  tokens: { budget: number; total: number; sections: Record<string, number> };
  /**
   * How to read `match`: the embedder that made the vectors, and the similarity at which a
   * memory answers what was asked in that space (calibrated on the evaluation's dev split).
   */
  retrieval?: {
    embedder: string;
    answerThreshold: number;
    /**
     * The topic of a life (a slot: pet, home, fear, ...) the last line is about, read from its
     * meaning when its words name none; `fact` when it is about something no slot holds (the
     * facts kept under the open key); absent when no topic is clear. Facts keep theirs in the
     * second part of their key ("speaker.pet.dog", "speaker.fact.drive-jeep").
     */
    topic?: string;
    /** Whether the words of the line named the topic, or only its meaning did. */
    topicFrom?: 'words' | 'meaning';
    /** The kind of thing the last line asks for, when it names one ("what language do I speak?": language). */
    asksFor?: string;
  };
  /** Time the memory service spent: retrieval, and building the window (score, pack, persist). */
  timingsMs: { retrieve: number; build: number };
}

/** The topic of what no slot of a life holds: facts kept under the open key ("speaker.fact.drive-jeep"). */
export const OPEN_TOPIC = 'fact';
