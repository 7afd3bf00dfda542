/**
 * Voice signaling messages (JSON text frames on the voice WebSocket). Only what WebRTC needs to
 * connect two browsers: session descriptions and ICE candidates. The audio itself flows between
 * the browsers (or through their TURN server), never through this process.
 */
import { Type, type Static } from 'typebox';

const strict = { additionalProperties: false } as const;

export const PeerId = Type.String({ pattern: '^[A-Za-z0-9_-]{22}$' });

export const SessionDescription = Type.Object(
  { type: Type.Union([Type.Literal('offer'), Type.Literal('answer'), Type.Literal('pranswer'), Type.Literal('rollback')]), sdp: Type.String({ maxLength: 32_768 }) },
  strict,
);

export const IceCandidate = Type.Object(
  {
    candidate: Type.String({ maxLength: 1024 }),
    sdpMid: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    sdpMLineIndex: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 255 }), Type.Null()])),
    usernameFragment: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  },
  strict,
);

export const Signal = Type.Union([
  Type.Object({ description: SessionDescription }, strict),
  Type.Object({ candidate: IceCandidate }, strict),
]);
export type Signal = Static<typeof Signal>;

/** First frame: the session token of the engine's API and the game whose room to talk in. */
export const VoiceHello = Type.Object(
  {
    type: Type.Literal('hello'),
    token: Type.String({ minLength: 1, maxLength: 200 }),
    gameId: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' }),
  },
  strict,
);
export type VoiceHello = Static<typeof VoiceHello>;

export const VoiceClientMessage = Type.Union([
  Type.Object({ type: Type.Literal('signal'), to: PeerId, signal: Signal }, strict),
  Type.Object({ type: Type.Literal('ping') }, strict),
]);
export type VoiceClientMessage = Static<typeof VoiceClientMessage>;

export type VoiceServerMessage =
  | { type: 'welcome'; peerId: string; peers: string[] }
  | { type: 'peer-joined'; peerId: string }
  | { type: 'peer-left'; peerId: string }
  | { type: 'signal'; from: string; signal: Signal }
  | { type: 'pong' }
  | { type: 'error'; code: VoiceErrorCode; message: string };

export type VoiceErrorCode =
  | 'INVALID_REQUEST'
  | 'NOT_IN_GAME'
  | 'HELLO_TIMEOUT'
  | 'PEER_NOT_IN_ROOM'
  | 'RATE_LIMITED'
  | 'MESSAGE_TOO_LARGE';
