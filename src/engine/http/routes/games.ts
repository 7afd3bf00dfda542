/**
 * Games: create, join, leave, say, act, the feed, end; and the room's live stream (stream.ts).
 * Every acknowledgement waits until what it confirms is kept (`engine.committed()`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { GameId } from '../../types.js';
import { sessionOf, sessionToken, type EngineRouteDeps } from '../deps.js';
import { ActBody, CreateGameBody, FeedQuery, GameParams, SayBody } from '../schemas.js';

/** Most feed entries in one answer. */
const FEED_PAGE = 500;

export function gameRoutes(fastify: FastifyInstance, { engine, streams, voice, sample, options }: EngineRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tokenOf = (request: FastifyRequest) => sessionToken(engine, request);
  const limited = { max: options.rateLimit?.max ?? 60, timeWindow: options.rateLimit?.timeWindowMs ?? 10_000 };

  app.post(
    '/v1/games',
    { schema: { summary: 'Create a game (Default: the sample game)', body: CreateGameBody }, config: { invalidCode: 'INVALID_GAME_DEFINITION' } },
    async (request, reply) => {
      const { sessionId } = sessionOf(engine, request);
      const gameId = await engine.createGame(request.body?.definition ?? sample, { creator: sessionId });
      await engine.ready(gameId, options.gameReadyTimeoutMs ?? 1000);
      return reply.status(201).send({ gameId });
    },
  );

  app.post('/v1/games/:gameId/join', { schema: { summary: 'Join a game', params: GameParams } }, async (request) => {
    const { gameId } = request.params;
    const joinedRoom = engine.join(tokenOf(request), gameId);
    await engine.committed();
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
      // Only what the proxy needs to prove it strips; none of it is stored.
      const client = { remoteAddress: request.ip, ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}) };
      const entry = engine.say(tokenOf(request), request.params.gameId, request.body, client);
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

  app.get('/v1/games/:gameId/feed', { schema: { summary: 'Your feed after a cursor', params: GameParams, querystring: FeedQuery } }, async (request) => {
    const feed = engine.feed(tokenOf(request), request.params.gameId);
    const after = Math.min(Number(request.query.after ?? 0), feed.length);
    // Paged: a long game's feed is read in pages of at most 500 from the cursor returned.
    const page = feed.slice(after, after + Number(request.query.limit ?? FEED_PAGE));
    return { entries: page.map((entry, i) => ({ cursor: after + i + 1, entry })), cursor: after + page.length, more: after + page.length < feed.length };
  });

  app.post('/v1/games/:gameId/end', { schema: { summary: 'End a game (its creator only)', params: GameParams } }, async (request) => {
    const { sessionId: by } = sessionOf(engine, request);
    const { gameId } = request.params;
    // Answered once the memory service has closed the game's memory (or said to be closing).
    const closed = await engine.endGameNow(gameId, options.endConfirmTimeoutMs ?? 2000, { by });
    await engine.committed();
    streams.ended(gameId, closed ? 'closed' : 'closing');
    voice?.refresh(gameId);
    return { gameId, ended: true, memory: closed ? 'closed' : 'closing' };
  });

  app.get('/v1/games/:gameId/stream', { websocket: true, schema: { params: GameParams, hide: true } }, (socket, request) => {
    streams.accept(socket, (request.params as { gameId: GameId }).gameId);
  });
}
