/** The front desk: visit an NPC by its exact full name (front-desk.ts). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sessionToken, type EngineRouteDeps } from '../deps.js';
import { TransportError } from '../errors.js';
import { FrontDeskBody } from '../schemas.js';

export function frontDeskRoutes(fastify: FastifyInstance, { engine, frontDesk }: EngineRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/v1/front-desk', { schema: { summary: 'Visit an NPC by exact full name', body: FrontDeskBody } }, async (request) => {
    sessionToken(engine, request);
    const { gameId, ...name } = request.body;
    const answer = await frontDesk.visit(name, gameId === undefined ? {} : { gameId });
    if (!answer.ok) throw new TransportError('CHARACTER_NOT_RECOGNIZED', answer.message, 404);
    return answer;
  });
}
