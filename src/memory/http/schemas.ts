/** Request and response schemas of the memory service's HTTP API (validated once, at the edge). */
import { Type, type Static } from 'typebox';
import { ParticipantId, ScopeId } from '../../boundary/events.js';
import { DURABLE_TIERS, FACT_TIERS, RETENTION_CLASSES, SOURCES } from '../types.js';

const strict = { additionalProperties: false } as const;

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});

export const NpcParams = Type.Object({ npcId: ScopeId }, strict);
export const MemoryParams = Type.Object({ npcId: ScopeId, id: Type.String({ maxLength: 64 }) }, strict);

export const TokenRequest = Type.Object(
  {
    gameId: ScopeId,
    participantIds: Type.Optional(Type.Array(ParticipantId, { maxItems: 64, uniqueItems: true })),
    /** (Default: 900) */
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 30, maximum: 3600 })),
  },
  strict,
);
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object({ token: Type.String(), expiresAt: Type.Integer() });

const Tier = Type.Enum(DURABLE_TIERS);
const FactTier = Type.Enum(FACT_TIERS);
const Retention = Type.Enum(RETENTION_CLASSES);
const Unit = Type.Number({ minimum: 0, maximum: 1 });

// Query strings arrive as text; they are checked as text and converted in the handler.
export const ListQuery = Type.Object(
  {
    tier: Tier,
    limit: Type.Optional(Type.String({ pattern: '^(?:[1-9][0-9]{0,2}|1000)$' })),
    history: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  },
  strict,
);
export const CountQuery = Type.Object({ tier: Tier }, strict);

/**
 * A memory id: a uuid written out in full, in either case. (Not `format: 'uuid'`, which also
 * lets "urn:uuid:..." through, a form PostgreSQL cannot read.)
 */
const RowUuid = Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$' });

export const FactRequest = Type.Object(
  {
    tier: FactTier,
    participantId: Type.Optional(ParticipantId),
    key: Type.String({ pattern: '^[a-z][a-z0-9_.]{0,63}$' }),
    value: Type.String({ minLength: 1, maxLength: 2000 }),
    summary: Type.String({ minLength: 1, maxLength: 2000 }),
    source: Type.Union(SOURCES.filter((s) => s !== 'clone').map((s) => Type.Literal(s))),
    confidence: Unit,
    importance: Unit,
    retention: Retention,
    supersedes: Type.Optional(RowUuid),
    derivedFrom: Type.Optional(Type.Array(RowUuid, { maxItems: 100 })),
  },
  strict,
);
export type FactRequest = Static<typeof FactRequest>;

export const FactPatch = Type.Object(
  {
    importance: Type.Optional(Unit),
    confidence: Type.Optional(Unit),
    retention: Type.Optional(Retention),
    invalidate: Type.Optional(Type.Literal(true)),
  },
  { ...strict, minProperties: 1 },
);

export const SearchRequest = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 4000 }),
    /** (Default: 10) */
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    tiers: Type.Optional(Type.Array(Tier, { minItems: 1, uniqueItems: true })),
  },
  strict,
);

export const ProceduralRequest = Type.Object(
  {
    persona: Type.String({ minLength: 1, maxLength: 8000 }),
    directives: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 100 }),
    // additionalProperties: a key outside the pattern is refused, not stored unchecked with any value.
    core: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }), Type.String({ maxLength: 2000 }), strict),
  },
  strict,
);
