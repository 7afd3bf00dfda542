/**
 * Every request and message shape of the engine's public API (HTTP and the stream WebSocket),
 * validated once at the edge. Unknown fields are refused, types are never coerced.
 */
import { Type, type Static } from 'typebox';
import { ScopeId } from '../../boundary/events.js';
import { Action, SayMessage } from '../game.js';

const strict = { additionalProperties: false } as const;

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Optional(Type.Unknown()) }),
});

const Username = Type.String({ minLength: 1, maxLength: 64 });
const Password = Type.String({ minLength: 1, maxLength: 1024 });
/** Who drives the session: bots declare "script" (Default: "human"). Known to the engine only. */
const Controller = Type.Union([Type.Literal('human'), Type.Literal('script')]);
const DisplayName = Type.String({ minLength: 1, maxLength: 40, pattern: '^[\\p{L}\\p{N}][\\p{L}\\p{N} ._-]*$' });

export const SignUpBody = Type.Object({ username: Username, password: Password }, strict);
export type SignUpBody = Static<typeof SignUpBody>;

export const SignInBody = Type.Object({ username: Username, password: Password, controller: Type.Optional(Controller) }, strict);
export type SignInBody = Static<typeof SignInBody>;

export const AnonymousBody = Type.Object({ displayName: Type.Optional(DisplayName), controller: Type.Optional(Controller) }, strict);
export type AnonymousBody = Static<typeof AnonymousBody>;

export const SessionResponse = Type.Object({ token: Type.String(), displayName: Type.String() });

export const CreateGameBody = Type.Object(
  {
    /** A game definition (see game-definition/README.md); (Default: the sample game). */
    definition: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  strict,
);
export type CreateGameBody = Static<typeof CreateGameBody>;

export const GameParams = Type.Object({ gameId: ScopeId }, strict);
export type GameParams = Static<typeof GameParams>;

export const SayBody = SayMessage;
export type SayBody = Static<typeof SayBody>;

export const ActBody = Action;
export type ActBody = Static<typeof ActBody>;

// Query strings arrive as text; checked as text, converted in the handler.
export const FeedQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,8})$' })),
    /** Entries per page (Default and most: 500); `cursor` in the answer is where the next page starts. */
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|500)$' })),
  },
  strict,
);
export type FeedQuery = Static<typeof FeedQuery>;

const NamePart = Type.String({ minLength: 1, maxLength: 100 });
export const FrontDeskBody = Type.Union([
  Type.Object({ fullName: Type.String({ minLength: 1, maxLength: 300 }), gameId: Type.Optional(ScopeId) }, strict),
  Type.Object({ first: NamePart, middle: NamePart, last: NamePart, gameId: Type.Optional(ScopeId) }, strict),
]);
export type FrontDeskBody = Static<typeof FrontDeskBody>;

// ---- the stream WebSocket ------------------------------------------------------------------

/** The first message on a stream socket: who is listening, and where to resume. */
export const StreamHello = Type.Object(
  {
    type: Type.Literal('hello'),
    token: Type.String({ minLength: 1, maxLength: 200 }),
    /** Cursor of the last entry already seen; the stream resumes after it (Default: 0, everything). */
    after: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  strict,
);
export type StreamHello = Static<typeof StreamHello>;

export const StreamPing = Type.Object({ type: Type.Literal('ping') }, strict);
