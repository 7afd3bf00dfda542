import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ContextRequest } from '../../../boundary/context.js';
import { FlushWorkingMemoryRequest, FlushWorkingMemoryResponse } from '../../../boundary/lifecycle.js';
import { ContextAssembler } from '../../context/assemble.js';
import { flushWorkingMemory } from '../../context/working-memory.js';
import { scopeOf, UUID } from '../auth.js';
import type { MemoryRouteDeps } from '../deps.js';
import { MemoryError } from '../../errors.js';
import { NpcParams } from '../schemas.js';

/** Context assembly, its explanations, and working-memory flushes (all with a game token). */
export function contextRoutes(fastify: FastifyInstance, { service }: MemoryRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const assembler = new ContextAssembler(service);

  app.post(
    '/v1/npcs/:npcId/context',
    { schema: { summary: 'Assemble the context window for an NPC turn', params: NpcParams, body: ContextRequest } },
    async (request) => {
      const { window, record } = await assembler.assemble(scopeOf(request, request.params.npcId), request.body);
      request.log.info({ contextId: window.contextId, timingsMs: record.timingsMs, tokens: window.tokens.total }, 'context assembled');
      return window;
    },
  );

  app.get(
    '/v1/contexts/:contextId',
    { schema: { summary: 'Explain an assembly: memory ids and scores, state version, timings, tokens', params: Type.Object({ contextId: Type.String({ maxLength: 64 }) }, { additionalProperties: false }) } },
    async (request) => {
      if (!UUID.test(request.params.contextId)) throw new MemoryError('NOT_FOUND', 'No context with this id is visible in your scope.');
      return assembler.explain(scopeOf(request), request.params.contextId);
    },
  );

  app.post(
    '/v1/npcs/:npcId/working-memory/flush',
    {
      schema: {
        summary: 'Serialize working memory into episodic memory and drop it (NPC moved or room suspended)',
        params: NpcParams,
        body: FlushWorkingMemoryRequest,
        response: { 200: FlushWorkingMemoryResponse },
      },
    },
    async (request) => flushWorkingMemory(service, scopeOf(request, request.params.npcId), request.body.roomId, request.body.reason),
  );
}
