/**
 * Boundary contracts for the game lifecycle, engine -> memory service. The engine's HTTP
 * MemoryPort sends exactly these; the memory service validates exactly these.
 *
 * | call                 | endpoint                                        | credential                 |
 * |----------------------|-------------------------------------------------|----------------------------|
 * | register secrets     | PUT  /v1/games/:gameId/secrets                  | tenant API key             |
 * | end a game           | POST /v1/games/:gameId/end                      | tenant API key             |
 * | flush working memory | POST /v1/npcs/:npcId/working-memory/flush       | game token for that game   |
 */
import { Type, type Static } from 'typebox';
import { ScopeId } from './events.js';

export const SECRET_KINDS = ['code', 'item_location', 'solution', 'password'] as const;

/** A game secret: it may only ever live in this game's clue tier (the clue firewall). */
export const GameSecret = Type.Object(
  {
    kind: Type.Enum(SECRET_KINDS),
    /** The secret itself, e.g. "1847" or "the brass key is under the globe". */
    text: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);
export type GameSecret = Static<typeof GameSecret>;

export const RegisterSecretsRequest = Type.Object(
  { secrets: Type.Array(GameSecret, { maxItems: 200 }) },
  { additionalProperties: false },
);
export type RegisterSecretsRequest = Static<typeof RegisterSecretsRequest>;

export const RegisterSecretsResponse = Type.Object({ gameId: Type.String(), registered: Type.Integer() });

export const EndGameResponse = Type.Object({
  gameId: Type.String(),
  endedAt: Type.String({ format: 'date-time' }),
  /** After this moment the game's data key is destroyed and its rows purged. */
  shredAfter: Type.String({ format: 'date-time' }),
});
export type EndGameResponse = Static<typeof EndGameResponse>;

export const FLUSH_REASONS = ['room_empty', 'npc_moved'] as const;

export const FlushWorkingMemoryRequest = Type.Object(
  {
    roomId: ScopeId,
    /** room_empty: the last human left (suspension); npc_moved: the NPC changed rooms. */
    reason: Type.Enum(FLUSH_REASONS),
  },
  { additionalProperties: false },
);
export type FlushWorkingMemoryRequest = Static<typeof FlushWorkingMemoryRequest>;

export const FlushWorkingMemoryResponse = Type.Object({ flushed: Type.Boolean(), episodeId: Type.Union([Type.String(), Type.Null()]) });
export type FlushWorkingMemoryResponse = Static<typeof FlushWorkingMemoryResponse>;
