/**
 * The web client, served by the engine's app (registered in src/system.ts before it listens).
 *
 * | method | path                              | does                                                |
 * |--------|-----------------------------------|-----------------------------------------------------|
 * | GET    | /                                 | the page: play (src/web/public/)                    |
 * | GET    | /inspector/                       | the operator's QA inspector (src/web/inspector/public/) |
 * | GET    | /web/v1/games/:gameId/room        | the room as lists (room-view.ts); session token     |
 * | *      | /inspector/api/...                | inspector routes (inspector/routes.ts); admin key   |
 *
 * The page itself uses the engine's public API (accounts, sessions, games, say/act, the stream
 * WebSocket, the front desk, voice signaling) exactly as a bot would; this plugin adds only the
 * read-only room view and the inspector. No build step: plain HTML, CSS and ES modules.
 */
import path from 'node:path';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { Type } from 'typebox';
import type { GameEngine } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { loadSampleGame, parseGameDefinition } from '../engine/game-definition/validate.js';
import type { RegistryClient } from '../registry/registry-client.js';
import { ScopeId } from '../boundary/events.js';
import { RoomViews } from './room-view.js';
import { inspectorRoutes } from './inspector/routes.js';
import type { MemoryHttpClient } from '../boundary/memory-client.js';

export interface WebPluginOptions {
  engine: GameEngine;
  registry: RegistryClient;
  /** The engine process's client of the memory service, for the inspector's calls (made with the operator's own key). */
  memory: MemoryHttpClient;
}

const HERE = import.meta.dirname;
const bearer = (request: FastifyRequest): string => {
  const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(request.headers.authorization ?? '');
  if (!match) throw new EngineError('INVALID_SESSION', 'Send "Authorization: Bearer <session token>"; sign in or start an anonymous session first.');
  return match[1]!;
};

const plugin: FastifyPluginAsync<WebPluginOptions> = async (app, options) => {
  const views = new RoomViews(options.engine, options.registry);
  const sample = await loadSampleGame();
  observeEngineRoutes(app, views, sample);

  app.get(
    '/web/v1/games/:gameId/room',
    { schema: { summary: 'The room you are in, as lists (for the web page)', params: Type.Object({ gameId: ScopeId }, { additionalProperties: false }) } },
    async (request) => views.view(bearer(request), (request.params as { gameId: string }).gameId),
  );

  // Static files in their own context, so their decorators stay there.
  await app.register(async (files) => {
    await files.register(fastifyStatic, { root: path.join(HERE, 'public'), prefix: '/', wildcard: false, index: 'index.html', cacheControl: false });
    await files.register(fastifyStatic, {
      root: path.join(HERE, 'inspector', 'public'),
      prefix: '/inspector/',
      wildcard: false,
      index: 'index.html',
      decorateReply: false,
      cacheControl: false,
    });
  });
  await app.register(inspectorRoutes, { memory: options.memory, prefix: '/inspector/api' });
};

/**
 * Watches the engine's own routes answer (never changes an answer): which definition a game
 * was made from, who joined or left it, what each player picked up.
 */
function observeEngineRoutes(app: FastifyInstance, views: RoomViews, sample: ReturnType<typeof loadSampleGame> extends Promise<infer D> ? D : never): void {
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (reply.statusCode >= 300 || request.method !== 'POST') return payload;
    const route = request.routeOptions.url;
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const params = request.params as { gameId?: string };
    const body = payload as Record<string, unknown>;
    if (route === '/v1/games' && typeof body.gameId === 'string') {
      const given = (request.body as { definition?: unknown } | undefined)?.definition;
      views.created(body.gameId, given === undefined ? sample : parseGameDefinition(given));
    } else if (route === '/v1/games/:gameId/join' && token && params.gameId) {
      views.joined(token, params.gameId);
    } else if (route === '/v1/games/:gameId/act' && token && params.gameId && body.ok === true) {
      const action = request.body as { type: string; item?: string };
      if (action.type === 'take' && action.item) views.took(token, params.gameId, action.item);
      if (action.type === 'drop' && action.item) views.dropped(token, params.gameId, action.item);
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode !== 204) return;
    const route = request.routeOptions.url;
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token) return;
    if (route === '/v1/games/:gameId/leave') views.left(token, (request.params as { gameId: string }).gameId);
    if (route === '/v1/sessions/current') views.signedOut(token);
  });
}

// Hooks and routes apply to the engine's whole app (fastify-plugin's "skip-override").
(plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export const webPlugin = plugin;
export default plugin;
