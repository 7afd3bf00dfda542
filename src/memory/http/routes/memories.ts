import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IngestBatch, IngestResult } from '../../../boundary/events.js';
import { MemoryError } from '../../errors.js';
import type { DurableTier } from '../../types.js';
import { notVisible, requireKey, scopeOf, UUID } from '../auth.js';
import type { MemoryRouteDeps } from '../deps.js';
import { requireAttribute } from '../../admin/principals.js';
import { writeProcedural } from '../../admin/procedural.js';
import {
  CountQuery,
  ErrorBody,
  FactPatch,
  FactRequest,
  ListQuery,
  MemoryParams,
  NpcParams,
  ProceduralRequest,
  SearchRequest,
  TokenRequest,
  TokenResponse,
} from '../schemas.js';

/** Tokens, ingest, the tiers (list, count, get, patch, delete, write facts, search) and procedural memory. */
export function memoryRoutes(fastify: FastifyInstance, deps: MemoryRouteDeps): void {
  const app = typed(fastify);
  ingestRoutes(app, deps);
  factRoutes(app, deps);
  proceduralRoutes(app, deps);
}

const typed = (fastify: FastifyInstance) => fastify.withTypeProvider<TypeBoxTypeProvider>();

/** Game tokens, and the batches of boundary events they let the engine send. */
function ingestRoutes(app: ReturnType<typeof typed>, { service, credentials }: MemoryRouteDeps): void {
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };
  app.post(
    '/v1/tokens',
    { schema: { summary: 'Mint a short-lived game token (tenant API key)', body: TokenRequest, response: { 200: TokenResponse, ...errors } } },
    async (request) => {
      const principal = requireKey(request);
      return credentials.issueGameToken(principal.tenantId, request.body.gameId, request.body.participantIds ?? [], request.body.ttlSeconds ?? 900);
    },
  );

  app.post(
    '/v1/events',
    // (Its transaction refuses an ended game, or answers a batch retried after the end as before.)
    { config: { refusesEndedGame: true }, schema: { summary: 'Ingest a batch of boundary events (game token)', body: IngestBatch, response: { 200: IngestResult, ...errors } } },
    async (request) => {
      const result = await service.ingest(scopeOf(request), request.body);
      request.log.info({ accepted: result.accepted, replayed: result.replayed }, 'ingested');
      return result;
    },
  );
}

/** Memories of the semantic and episodic tiers in scope: list, count, get, adjust, delete, write, search. */
function factRoutes(app: ReturnType<typeof typed>, { service }: MemoryRouteDeps): void {
  app.get(
    '/v1/npcs/:npcId/memories',
    { schema: { summary: 'List memories of one tier in scope', params: NpcParams, querystring: ListQuery } },
    async (request) => {
      const { tier, limit, history } = request.query;
      const memories = await service.list(scopeOf(request, request.params.npcId), tier as DurableTier, {
        limit: Number(limit ?? 50),
        includeHistory: history === 'true',
      });
      return { memories };
    },
  );

  app.get(
    '/v1/npcs/:npcId/memories/count',
    { schema: { summary: 'Count memories of one tier in scope', params: NpcParams, querystring: CountQuery } },
    async (request) => ({ count: await service.count(scopeOf(request, request.params.npcId), request.query.tier as DurableTier) }),
  );

  app.get(
    '/v1/npcs/:npcId/memories/:id',
    { schema: { summary: 'Get one memory by id, in scope', params: MemoryParams } },
    async (request) => {
      const { npcId, id } = request.params;
      if (!UUID.test(id)) throw notVisible();
      return { memory: await service.get(scopeOf(request, npcId), id) };
    },
  );

  app.patch(
    '/v1/npcs/:npcId/memories/:id',
    { schema: { summary: 'Adjust or invalidate a fact', params: MemoryParams, body: FactPatch } },
    async (request) => {
      const { npcId, id } = request.params;
      if (!UUID.test(id)) throw notVisible();
      return { memory: await service.updateFact(scopeOf(request, npcId), id, request.body) };
    },
  );

  app.delete(
    '/v1/npcs/:npcId/memories/:id',
    { schema: { summary: 'Delete a fact', params: MemoryParams } },
    async (request, reply) => {
      const { npcId, id } = request.params;
      if (!UUID.test(id)) throw notVisible();
      await service.deleteFact(scopeOf(request, npcId), id);
      return reply.status(204).send();
    },
  );

  app.post(
    '/v1/npcs/:npcId/facts',
    { schema: { summary: 'Write a fact to a semantic tier', params: NpcParams, body: FactRequest } },
    async (request, reply) => {
      const memory = await service.writeFact(scopeOf(request, request.params.npcId), request.body);
      return reply.status(201).send({ memory });
    },
  );

  app.post(
    '/v1/npcs/:npcId/search',
    { schema: { summary: 'Scoped similarity search', params: NpcParams, body: SearchRequest } },
    async (request) => {
      const { text, k, tiers } = request.body;
      const memories = await service.search(scopeOf(request, request.params.npcId), {
        text,
        k: k ?? 10,
        tiers: tiers as DurableTier[] | undefined,
      });
      return { memories };
    },
  );
}

/** Procedural memory: versioned, written with an admin key only. */
function proceduralRoutes(app: ReturnType<typeof typed>, { service }: MemoryRouteDeps): void {
  app.put(
    '/v1/npcs/:npcId/procedural',
    { schema: { summary: 'Write the next version of procedural memory (admin key)', params: NpcParams, body: ProceduralRequest } },
    async (request, reply) => {
      const principal = requireKey(request);
      if (principal.role !== 'admin') {
        throw new MemoryError('FORBIDDEN', 'procedural memory is written with an admin key only');
      }
      // Attribute check (admin/principals.ts), then the write and its ledger record in one transaction.
      const admin = await requireAttribute(request, 'write_procedural', request.params.npcId);
      const procedural = await writeProcedural(service.db, admin, request.params.npcId, request.body);
      return reply.status(201).send({ procedural });
    },
  );

  app.get(
    '/v1/npcs/:npcId/procedural',
    { schema: { summary: 'Read the current procedural memory', params: NpcParams } },
    async (request) => {
      const procedural = await service.getProcedural(scopeOf(request, request.params.npcId));
      if (!procedural) throw new MemoryError('NOT_FOUND', 'this NPC has no procedural memory yet; an admin writes it with PUT');
      return { procedural };
    },
  );
}
