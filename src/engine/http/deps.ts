/** What every route module of the engine's API is given (app.ts builds it once), and the app's options. */
import type { FastifyRequest } from 'fastify';
import type { VoiceSignalingHub } from '../../voice/index.js';
import type { GameEngine } from '../engine.js';
import { EngineError } from '../errors.js';
import type { FrontDesk } from '../front-desk.js';
import type { GameDefinition } from '../game-definition/schema.js';
import type { RegistryClient } from '../../registry/registry-client.js';
import type { SessionId, SessionToken } from '../types.js';
import type { StreamHub, StreamHubOptions } from './stream.js';

export interface EngineAppOptions {
  engine: GameEngine;
  /** The name registry, for the front desk. */
  registry: RegistryClient;
  /** Mount voice signaling at /v1/voice (Default: true). */
  voice?: boolean;
  stream?: StreamHubOptions;
  /** Largest request body in bytes; a game definition is the largest thing sent (Default: 256 KiB). */
  bodyLimit?: number;
  /** Says and acts per session per window: a chatty bot cannot flood a room or the memory service. (Default: 60 per 10 s) */
  rateLimit?: { max: number; timeWindowMs: number };
  /**
   * How long creating a game waits for the memory service to take the game's set-up, so that
   * its first turns do not compete with it; the game is created either way. (Default: 1000 ms)
   */
  gameReadyTimeoutMs?: number;
  /** How long ending a game waits for the memory service to confirm. (Default: 2000 ms) */
  endConfirmTimeoutMs?: number;
  /** An outbox call waiting longer than this makes the engine not ready. (Default: 30 s) */
  readyMaxOutboxLagMs?: number;
}

export interface EngineRouteDeps {
  engine: GameEngine;
  streams: StreamHub;
  voice?: VoiceSignalingHub;
  frontDesk: FrontDesk;
  /** The game created when a request sends no definition. */
  sample: GameDefinition;
  options: EngineAppOptions;
}

/** The session a request is made in: `Authorization: Bearer <session token>` of a live session, looked up once. */
export function sessionOf(engine: GameEngine, request: FastifyRequest): { token: SessionToken; sessionId: SessionId } {
  const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(request.headers.authorization ?? '');
  if (!match) throw new EngineError('INVALID_SESSION', 'Send "Authorization: Bearer <session token>"; sign in or start an anonymous session first.');
  const { session } = engine.sessions.get(match[1]!); // throws INVALID_SESSION for unknown tokens
  return { token: match[1]!, sessionId: session.sessionId };
}

/** The token of the session a request is made in (`sessionOf`). */
export const sessionToken = (engine: GameEngine, request: FastifyRequest): SessionToken => sessionOf(engine, request).token;
