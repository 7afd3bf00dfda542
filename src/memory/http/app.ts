import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { IngestBatch, IngestResult } from '../../boundary/events.js';
import { Credentials, unauthenticated, type Principal } from '../credentials.js';
import { MemoryError } from '../errors.js';
import type { MemoryService } from '../service.js';
import type { Scope } from '../scope.js';
import type { DurableTier } from '../types.js';
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
} from './schemas.js';

export interface MemoryAppOptions {
  service: MemoryService;
  credentials: Credentials;
  /** A pino logger; memory text never reaches it. (Default: silent) */
  logger?: Logger | false;
  /** Largest accepted request body in bytes. (Default: 1 MiB) */
  bodyLimit?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The memory service (MemoryEndpoints.com) as an HTTP API. */
export async function buildMemoryApp(options: MemoryAppOptions): Promise<FastifyInstance> {
  const { service, credentials } = options;
  const app = Fastify({
    loggerInstance: (options.logger || undefined) as FastifyBaseLogger | undefined,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Unknown fields are refused, not stripped; types are never coerced in bodies.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(swagger, {
    openapi: {
      info: { title: 'MemoryEndpoints: NPC memory service', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { statusCode, code, message } = toPublicError(error);
    if (statusCode >= 500) request.log.error({ err: { code: error.code, name: error.name } }, 'request failed');
    return reply.status(statusCode).send({ error: { code, message } });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.status(404).send({ error: { code: 'ROUTE_NOT_FOUND', message: 'No such endpoint; see GET /openapi.json' } }),
  );

  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/v1/')) return;
    request.principal = await authenticate(credentials, request);
  });

  app.get('/health', { schema: { security: [] } }, async () => ({ status: 'ok', backend: service.db.backend }));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

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
    { schema: { summary: 'Ingest a batch of boundary events (game token)', body: IngestBatch, response: { 200: IngestResult, ...errors } } },
    async (request) => {
      const result = await service.ingest(scopeOf(request), request.body);
      request.log.info({ accepted: result.accepted, replayed: result.replayed }, 'ingested');
      return result;
    },
  );

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

  app.put(
    '/v1/npcs/:npcId/procedural',
    { schema: { summary: 'Write the next version of procedural memory (admin key)', params: NpcParams, body: ProceduralRequest } },
    async (request, reply) => {
      const principal = requireKey(request);
      if (principal.role !== 'admin') {
        throw new MemoryError('FORBIDDEN', 'procedural memory is written with an admin key only', 403);
      }
      const scope: Scope = { tenantId: principal.tenantId, npcId: request.params.npcId, role: 'admin' };
      const procedural = await service.putProcedural(scope, request.body, `key:${principal.keyId}`);
      return reply.status(201).send({ procedural });
    },
  );

  app.get(
    '/v1/npcs/:npcId/procedural',
    { schema: { summary: 'Read the current procedural memory', params: NpcParams } },
    async (request) => {
      const procedural = await service.getProcedural(scopeOf(request, request.params.npcId));
      if (!procedural) throw new MemoryError('NOT_FOUND', 'this NPC has no procedural memory yet; an admin writes it with PUT', 404);
      return { procedural };
    },
  );

  return app;
}

async function authenticate(credentials: Credentials, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  const match = header ? /^Bearer ([\x21-\x7e]{1,4096})$/.exec(header) : null;
  if (!match) throw unauthenticated();
  const presented = match[1]!;
  const principal = presented.startsWith('mk_')
    ? await credentials.verifyApiKey(presented)
    : await credentials.verifyGameToken(presented);
  if (!principal) throw unauthenticated();
  return principal;
}

/** The request's scope: tenant (and game, participants) from the credential, npc from the path. */
function scopeOf(request: FastifyRequest, npcId?: string): Scope {
  const p = request.principal;
  if (!p) throw unauthenticated();
  if (p.kind === 'key') return { tenantId: p.tenantId, npcId, role: 'runtime' };
  return { tenantId: p.tenantId, gameId: p.gameId, participantIds: p.participantIds, npcId, role: 'runtime' };
}

function requireKey(request: FastifyRequest): Extract<Principal, { kind: 'key' }> {
  const p = request.principal;
  if (!p) throw unauthenticated();
  if (p.kind !== 'key') throw new MemoryError('API_KEY_REQUIRED', 'this endpoint needs a tenant API key, not a game token', 403);
  return p;
}

const notVisible = () => new MemoryError('NOT_FOUND', 'No memory with this id is visible in your scope.', 404);

function toPublicError(error: FastifyError): { statusCode: number; code: string; message: string } {
  if (error instanceof MemoryError) return { statusCode: error.statusCode, code: error.code, message: error.message };
  if (error.validation) {
    const first = error.validation[0];
    if (first?.keyword === 'additionalProperties') {
      const field = (first.params as { additionalProperty?: string }).additionalProperty;
      const where = `${error.validationContext ?? 'body'}${first.instancePath || ''}`;
      return {
        statusCode: 400,
        code: 'UNKNOWN_FIELD',
        message: `${where} has a field "${field}" that this API does not accept; remove it (telemetry never crosses the boundary)`,
      };
    }
    return { statusCode: 400, code: 'INVALID_REQUEST', message: `${error.validationContext ?? 'body'}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}` };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large; send fewer events per batch' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' };
  }
  if (error instanceof SyntaxError) return { statusCode: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON' };
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return { statusCode: error.statusCode, code: 'BAD_REQUEST', message: 'The request could not be read; check its headers and body' };
  }
  return { statusCode: 500, code: 'INTERNAL', message: 'The memory service failed; retry with the same idempotency key' };
}
