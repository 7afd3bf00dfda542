/**
 * The engine's public API (Escape.GamesFor.Me) for web pages and bots alike: HTTP for everything
 * a client does, a WebSocket per session and game for the room's ordered stream (`stream.ts`), and
 * the voice signaling WebSocket (`src/voice/`, mounted here, wired to room presence only).
 *
 * Auth: `Authorization: Bearer <session token>` from POST /v1/sessions or /v1/sessions/anonymous.
 * Errors: `{ error: { code, message, details? } }` with a stable code (errors.ts).
 *
 * | method | path                          | does                                              |
 * |--------|-------------------------------|---------------------------------------------------|
 * | POST   | /v1/accounts                  | sign up `{ username, password }`                  |
 * | POST   | /v1/sessions                  | sign in `{ username, password, controller? }`     |
 * | POST   | /v1/sessions/anonymous        | anonymous session `{ displayName?, controller? }` |
 * | DELETE | /v1/sessions/current          | sign out (leaves every game of the session)       |
 * | POST   | /v1/games                     | create a game `{ definition? }` (Default: sample) |
 * | POST   | /v1/games/:gameId/join        | join; answers the room and its description        |
 * | POST   | /v1/games/:gameId/leave       | leave                                             |
 * | POST   | /v1/games/:gameId/say         | `{ text, target? }`; answers the stream entry     |
 * | POST   | /v1/games/:gameId/act         | an action; answers `{ ok, narration }` or a physical failure |
 * | GET    | /v1/games/:gameId/feed?after= | the participant's feed after a cursor, 500 a page |
 * | POST   | /v1/games/:gameId/end         | end the game (its creator only)                   |
 * | POST   | /v1/front-desk                | visit an NPC by exact full name                   |
 * | GET    | /v1/games/:gameId/stream      | WebSocket: the feed, live (see stream.ts)         |
 * | GET    | /v1/voice                     | WebSocket: voice signaling (see src/voice/)       |
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { clientErrors, frameworkErrors, MAX_PARAM_LENGTH } from '../../boundary/framework-errors.js';
import { strictJsonBodies } from '../../boundary/json-body.js';
import websocket from '@fastify/websocket';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerVoiceSignaling, type VoiceSignalingHub } from '../../voice/index.js';
import type { GameEngine } from '../engine.js';
import { EngineError } from '../errors.js';
import { FrontDesk } from '../front-desk.js';
import { loadSampleGame } from '../game-definition/validate.js';
import type { RegistryClient } from '../../registry/registry-client.js';
import type { GameId, SessionToken } from '../types.js';
import { TransportError, toPublicError, type TransportErrorCode } from './errors.js';
import {
  ActBody,
  AnonymousBody,
  CreateGameBody,
  FeedQuery,
  FrontDeskBody,
  GameParams,
  SayBody,
  SignInBody,
  SignUpBody,
} from './schemas.js';
import { StreamHub, type StreamHubOptions } from './stream.js';


/** An outbox call older than this takes the engine out of rotation: the memory service is not keeping up. */
const OUTBOX_READY_MAX_LAG_MS = 30_000;
/** Most feed entries in one answer. */
const FEED_PAGE = 500;

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

export interface EngineApp {
  app: FastifyInstance;
  streams: StreamHub;
  voice?: VoiceSignalingHub;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code a schema failure of this route's input gets (Default: INVALID_REQUEST). */
    invalidCode?: TransportErrorCode;
  }
}

export async function buildEngineApp(options: EngineAppOptions): Promise<EngineApp> {
  const { engine } = options;
  const frontDesk = new FrontDesk(options.registry, engine);
  const sample = await loadSampleGame();
  const streams = new StreamHub(engine, options.stream);

  const app = Fastify({
    frameworkErrors,
    clientErrorHandler: clientErrors,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // UTF-8 only, and no NUL or lone surrogate in any string (400 before any route runs).
  strictJsonBodies(app);

  await app.register(swagger, {
    openapi: {
      info: { title: 'Escape.GamesFor.Me: game engine API', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  await app.register(rateLimit, {
    global: false,
    // Per session (the bearer token), else per address.
    keyGenerator: (request) => request.headers.authorization ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new TransportError('RATE_LIMITED', `Too many messages and actions; wait ${Math.ceil(context.ttl / 1000)} s and try again.`, 429),
  });
  const limited = { max: options.rateLimit?.max ?? 60, timeWindow: options.rateLimit?.timeWindowMs ?? 10_000 };
  // JSON only: a text/plain body would otherwise arrive as a string.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const e = toPublicError(error, request.routeOptions.config?.invalidCode);
    if (e.statusCode >= 500) request.log.error({ err: { name: error.name, code: error.code } }, 'request failed');
    return reply.status(e.statusCode).send({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.status(404).send({ error: { code: 'ROUTE_NOT_FOUND', message: 'No such endpoint; see GET /openapi.json.' } }),
  );

  const tokenOf = (request: FastifyRequest): SessionToken => {
    const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(request.headers.authorization ?? '');
    if (!match) throw new EngineError('INVALID_SESSION', 'Send "Authorization: Bearer <session token>"; sign in or start an anonymous session first.');
    engine.sessions.get(match[1]!); // throws INVALID_SESSION for unknown tokens
    return match[1]!;
  };
  // Only what the proxy needs to prove it strips; none of it is stored.
  const clientOf = (request: FastifyRequest) => ({
    remoteAddress: request.ip,
    ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
  });

  // Liveness: the process answers. Readiness (and /health): the engine's database keeps up and
  // the outbox delivers to the memory service; a call waiting longer than `readyMaxOutboxLagMs`
  // means memory is falling behind.
  app.get('/health/live', { schema: { security: [] } }, async () => ({ status: 'ok' }));
  for (const url of ['/health', '/health/ready']) {
    app.get(url, { schema: { security: [] } }, async (_request, reply) => {
      const outbox = engine.outbox.stats();
      const store = engine.storeStats();
      const ready = store.accepting && engine.outbox.accepting && outbox.oldestPendingMs <= (options.readyMaxOutboxLagMs ?? OUTBOX_READY_MAX_LAG_MS);
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', games: engine.runningGames, store, outbox });
    });
  }
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // ---- accounts and sessions ------------------------------------------------------------------

  app.post('/v1/accounts', { schema: { summary: 'Sign up', security: [], body: SignUpBody } }, async (request, reply) => {
    const account = await engine.accounts.register(request.body.username, request.body.password);
    return reply.status(201).send({ username: account.username });
  });

  app.post(
    '/v1/sessions',
    { schema: { summary: 'Sign in', security: [], body: SignInBody } },
    async (request, reply) => {
      const { username, password, controller } = request.body;
      const opened = await engine.sessions.login(username, password, controller ? { controller } : {});
      return reply.status(201).send(opened);
    },
  );

  app.post(
    '/v1/sessions/anonymous',
    { schema: { summary: 'Start an anonymous session', security: [], body: AnonymousBody } },
    async (request, reply) => {
      const { displayName, controller } = request.body ?? {};
      const opened = engine.sessions.openAnonymous({ ...(displayName ? { displayName } : {}), ...(controller ? { controller } : {}) });
      await engine.sessions.saved(opened.token); // acknowledged only once it is stored
      return reply.status(201).send(opened);
    },
  );

  app.delete('/v1/sessions/current', { schema: { summary: 'Sign out; leaves every game' } }, async (request, reply) => {
    const token = tokenOf(request);
    for (const gameId of engine.gamesOf(token)) {
      try {
        engine.leave(token, gameId);
      } catch {
        // The game ended meanwhile: nothing to leave.
      }
    }
    await engine.committed();
    streams.signedOut(token);
    await engine.sessions.close(token);
    voice?.refresh();
    return reply.status(204).send();
  });

  // ---- games ----------------------------------------------------------------------------------

  app.post(
    '/v1/games',
    { schema: { summary: 'Create a game (Default: the sample game)', body: CreateGameBody }, config: { invalidCode: 'INVALID_GAME_DEFINITION' } },
    async (request, reply) => {
      const token = tokenOf(request);
      const gameId = await engine.createGame(request.body?.definition ?? sample, { creator: engine.sessions.get(token).session.sessionId });
      await engine.ready(gameId, options.gameReadyTimeoutMs ?? 1000);
      return reply.status(201).send({ gameId });
    },
  );

  app.post('/v1/games/:gameId/join', { schema: { summary: 'Join a game', params: GameParams } }, async (request) => {
    const token = tokenOf(request);
    const { gameId } = request.params;
    const joinedRoom = engine.join(token, gameId);
    await engine.committed(); // every acknowledgement below waits until what it confirms is kept
    voice?.refresh(gameId);
    return joinedRoom;
  });

  app.post('/v1/games/:gameId/leave', { schema: { summary: 'Leave a game', params: GameParams } }, async (request, reply) => {
    const token = tokenOf(request);
    const { gameId } = request.params;
    engine.leave(token, gameId);
    await engine.committed();
    streams.left(token, gameId);
    voice?.refresh(gameId);
    return reply.status(204).send();
  });

  app.post(
    '/v1/games/:gameId/say',
    { schema: { summary: 'Say something in your room', params: GameParams, body: SayBody }, config: { invalidCode: 'INVALID_MESSAGE', rateLimit: limited } },
    async (request, reply) => {
      const entry = engine.say(tokenOf(request), request.params.gameId, request.body, clientOf(request));
      await engine.committed();
      return reply.status(201).send({ entry });
    },
  );

  app.post(
    '/v1/games/:gameId/act',
    { schema: { summary: 'Act: move, take, drop, unlock, solve, look', params: GameParams, body: ActBody }, config: { invalidCode: 'INVALID_ACTION', rateLimit: limited } },
    async (request) => {
      const result = engine.act(tokenOf(request), request.params.gameId, request.body);
      await engine.committed();
      if (result.ok && request.body.type === 'move') voice?.refresh(request.params.gameId);
      return result;
    },
  );

  app.get(
    '/v1/games/:gameId/feed',
    { schema: { summary: 'Your feed after a cursor', params: GameParams, querystring: FeedQuery } },
    async (request) => {
      const feed = engine.feed(tokenOf(request), request.params.gameId);
      const after = Math.min(Number(request.query.after ?? 0), feed.length);
      // Paged: a long game's feed is read in pages of at most 500 from the cursor returned.
      const page = feed.slice(after, after + Number(request.query.limit ?? FEED_PAGE));
      return { entries: page.map((entry, i) => ({ cursor: after + i + 1, entry })), cursor: after + page.length, more: after + page.length < feed.length };
    },
  );

  app.post('/v1/games/:gameId/end', { schema: { summary: 'End a game (its creator only)', params: GameParams } }, async (request) => {
    const token = tokenOf(request);
    const { gameId } = request.params;
    const creator = engine.creatorOf(gameId);
    if (creator !== undefined && creator !== engine.sessions.get(token).session.sessionId) {
      throw new TransportError('NOT_GAME_CREATOR', 'Only the session that created this game can end it.', 403);
    }
    // Answered once the memory service has closed the game's memory (or said to be closing).
    const closed = await engine.endGameNow(gameId, options.endConfirmTimeoutMs ?? 2000);
    await engine.committed();
    streams.ended(gameId, closed ? 'closed' : 'closing');
    voice?.refresh(gameId);
    return { gameId, ended: true, memory: closed ? 'closed' : 'closing' };
  });

  // ---- front desk -----------------------------------------------------------------------------

  app.post('/v1/front-desk', { schema: { summary: 'Visit an NPC by exact full name', body: FrontDeskBody } }, async (request) => {
    tokenOf(request);
    const { gameId, ...name } = request.body;
    const answer = await frontDesk.visit(name, gameId === undefined ? {} : { gameId });
    if (!answer.ok) throw new TransportError('CHARACTER_NOT_RECOGNIZED', answer.message, 404);
    return answer;
  });

  // ---- WebSockets -----------------------------------------------------------------------------

  app.get('/v1/games/:gameId/stream', { websocket: true, schema: { params: GameParams, hide: true } }, (socket, request) => {
    streams.accept(socket, (request.params as { gameId: GameId }).gameId);
  });

  const voice =
    options.voice === false
      ? undefined
      : registerVoiceSignaling(app, {
          presence: {
            // Voice learns a room key and nothing else: no NPC, no memory, no participant id.
            roomOf: (token, gameId) => {
              try {
                return `${gameId}/${engine.whereAmI(token, gameId)}`;
              } catch {
                return undefined;
              }
            },
          },
        });

  return { app, streams, ...(voice ? { voice } : {}) };
}
