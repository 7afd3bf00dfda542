import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { NpcRuntime } from './runtime.js';
import type { TurnMetrics } from './metrics.js';

/**
 * Operator routes of the NPC runtime, on the engine's API: the recent turns of a game (which
 * context each reply was given, its stage timings and guard interventions) and the turn metrics.
 * Guarded by the operator token (`Authorization: Bearer <token>`), never by a player session.
 */
export function npcOperatorRoutes(
  app: FastifyInstance,
  options: { runtime: NpcRuntime; metrics: TurnMetrics; operatorToken: string; /** More metrics text (the engine's queues). */ extra?: () => string },
): void {
  const expected = createHash('sha256').update(options.operatorToken).digest();
  const operator = (request: FastifyRequest): boolean => {
    const presented = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    return presented !== undefined && timingSafeEqual(createHash('sha256').update(presented).digest(), expected);
  };
  const refuse = { error: { code: 'OPERATOR_TOKEN_REQUIRED', message: 'Send "Authorization: Bearer <operator token>" (see the README: data/keys/operator.token).' } };

  app.get<{ Params: { gameId: string } }>(
    '/v1/games/:gameId/npc-turns',
    { schema: { summary: 'Recent NPC turns of a game: context ids, timings, guard interventions (operator)', params: { type: 'object', properties: { gameId: { type: 'string', maxLength: 128 } }, required: ['gameId'], additionalProperties: false } } },
    async (request, reply) => {
      if (!operator(request)) return reply.status(401).send(refuse);
      return { turns: options.runtime.turnsOf(request.params.gameId) };
    },
  );

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!operator(request)) return reply.status(401).send(refuse);
    return reply.type('text/plain; version=0.0.4').send(options.metrics.prometheus() + (options.extra?.() ?? ''));
  });
}
