/**
 * The boundary protocol: the only shape in which anything crosses from the engine
 * (Escape.GamesFor.Me) to the memory service (MemoryEndpoints.com).
 *
 * A boundary event carries a hashed participant id, a coarse integer timestamp, the raw
 * text, the routing keys (game, room, npc) and the "targeted" emphasis flag. Nothing else:
 * every schema here sets `additionalProperties: false`, and the memory service rejects
 * (never silently drops) unknown fields such as telemetry.
 */
import { Type, type Static } from 'typebox';

/** Ids made by the engine or the registry: a short, URL-safe token. */
export const ScopeId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$',
  description: 'game, room or npc id: 1-128 URL-safe characters',
});

/** Opaque participant id: a keyed hash (accounts) or a random id (anonymous sessions). */
export const ParticipantId = Type.String({
  pattern: '^[A-Za-z0-9_-]{8,128}$',
  description: 'opaque participant id made by the engine (8-128 base64url characters)',
});

export const MAX_TEXT_LENGTH = 4000;
export const MAX_EVENTS_PER_BATCH = 500;

export const BoundaryEvent = Type.Object(
  {
    gameId: ScopeId,
    roomId: ScopeId,
    npcId: ScopeId,
    participantId: ParticipantId,
    /** Coarse integer timestamp (seconds since the epoch). */
    ts: Type.Integer({ minimum: 0, maximum: 2 ** 40 }),
    text: Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH }),
    /** The message addressed this NPC: emphasis only, never a change of order. */
    targeted: Type.Boolean(),
    /**
     * The participant id is per-session (an anonymous session), so it will not recur in another
     * game: consolidation keeps such chatter only as generalized anonymous fragments. Says nothing
     * about whether a human or a script is behind it. (Default: false)
     */
    anonymous: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, $id: 'BoundaryEvent' },
);
export type BoundaryEvent = Static<typeof BoundaryEvent>;

export const IngestBatch = Type.Object(
  {
    /** Retrying a batch with the same key stores it once and returns the first answer. */
    idempotencyKey: Type.String({ pattern: '^[A-Za-z0-9_.:-]{8,128}$' }),
    events: Type.Array(BoundaryEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_BATCH }),
  },
  { additionalProperties: false },
);
export type IngestBatch = Static<typeof IngestBatch>;

export const IngestResult = Type.Object({
  accepted: Type.Integer(),
  ids: Type.Array(Type.String({ format: 'uuid' })),
  replayed: Type.Boolean(),
});
export type IngestResult = Static<typeof IngestResult>;
