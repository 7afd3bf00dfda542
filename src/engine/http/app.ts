/**
 * The engine's public API (Escape.GamesFor.Me) for web pages and bots alike: HTTP for everything
 * a client does, a WebSocket per session and game for the room's ordered stream (`stream.ts`), and
 * the voice signaling WebSocket (`src/voice/`, mounted here, wired to room presence only).
 *
 * Auth: `Authorization: Bearer <session token>` from POST /v1/sessions or /v1/sessions/anonymous.
 * Errors: `{ error: { code, message, details? } }` with a stable code (errors.ts, the one mapper
 * of both services in src/boundary/http-errors.ts). Routes: routes/*.ts, one module per feature.
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
import Fastify, { type FastifyInstance } from 'fastify';
import { clientErrors, frameworkErrors, MAX_PARAM_LENGTH } from '../../boundary/framework-errors.js';
import { answerErrors } from '../../boundary/http-errors.js';
import { strictJsonBodies } from '../../boundary/json-body.js';
import websocket from '@fastify/websocket';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerVoiceSignaling, type VoiceSignalingHub } from '../../voice/index.js';
import { FrontDesk } from '../front-desk.js';
import { loadSampleGame } from '../game-definition/validate.js';
import type { EngineAppOptions, EngineRouteDeps } from './deps.js';
import { ENGINE_ERRORS, TransportError } from './errors.js';
import { frontDeskRoutes } from './routes/front-desk.js';
import { gameRoutes } from './routes/games.js';
import { healthRoutes } from './routes/health.js';
import { sessionRoutes } from './routes/sessions.js';
import { StreamHub } from './stream.js';

export type { EngineAppOptions } from './deps.js';

/** Every route module of the API, one per feature (routes/*.ts). */
const ROUTES: ((app: FastifyInstance, deps: EngineRouteDeps) => void)[] = [healthRoutes, sessionRoutes, gameRoutes, frontDeskRoutes];

export interface EngineApp {
  app: FastifyInstance;
  streams: StreamHub;
  voice?: VoiceSignalingHub;
}

export async function buildEngineApp(options: EngineAppOptions): Promise<EngineApp> {
  const { engine } = options;
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
  // JSON only: a text/plain body would otherwise arrive as a string.
  app.removeContentTypeParser('text/plain');
  answerErrors(app, ENGINE_ERRORS);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

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

  const deps: EngineRouteDeps = { engine, streams, frontDesk: new FrontDesk(options.registry, engine), sample: await loadSampleGame(), options, ...(voice ? { voice } : {}) };
  for (const routes of ROUTES) routes(app, deps);
  return { app, streams, ...(voice ? { voice } : {}) };
}
