/**
 * The QA inspector's server side: a thin relay from the inspector page to the memory service's
 * admin API, made with the operator's own admin key (the page sends it; nothing is stored here).
 *
 * Sign-in rule: an admin API key of the memory service whose principal holds the "audit"
 * attribute (the local tenant's owner key in data/local-tenant.json has it). Every route checks
 * that first, the context explanation included (any key could mint a game token; only an
 * auditor may read explanations through here). Listing a game's NPC turns is the engine's
 * business, not the memory service's: it also needs the engine's operator token, which the page
 * sends as `X-Engine-Operator-Token` and this relay passes to the engine's route unchanged.
 *
 * Text rule: the one thing the inspector shows as text is what the NPC remembered, beside each
 * memory id of a context window: the memory service opens those rows for the operator's admin
 * principal ("audit" on the NPC) and records each read in its audit ledger
 * (`POST /v1/admin/contexts/:id/memories`); rows of an ended game or an erased participant come
 * back as unavailable. Explanations carry ids and scores by design; whatever else is relayed has
 * every `text`, `value`, `summary`, `preview`, `lines` and `sentence` field (an NPC's lines can
 * echo a player) replaced by its length before it leaves this process.
 *
 * | method | path                                   | memory service call                          |
 * |--------|----------------------------------------|----------------------------------------------|
 * | POST   | /inspector/api/session                 | GET /v1/audit/records?limit=1 (checks "audit") |
 * | GET    | /inspector/api/contexts/:gameId/:id    | POST /v1/tokens, GET /v1/contexts/:id        |
 * | GET    | /inspector/api/contexts/:gameId/:id/memories | POST /v1/admin/contexts/:id/memories (remembered text; audited) |
 * | GET    | /inspector/api/audit/records           | GET /v1/audit/records                        |
 * | GET    | /inspector/api/audit/verify            | GET /v1/audit/verify                         |
 * | POST   | /inspector/api/clones/dry-run          | POST /v1/clones { dryRun: true } (never a commit) |
 * | GET    | /inspector/api/lineage?operation=&row= | GET /v1/clones/:op/trace or /v1/lineage/trace |
 * | GET    | /inspector/api/games/:gameId/npc-turns | the engine's GET /v1/games/:gameId/npc-turns (header X-Engine-Operator-Token) |
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { MemoryHttpClient } from '../../boundary/memory-client.js';

export interface InspectorRouteOptions {
  /** The engine process's client of the memory service; the inspector relays through it with the operator's key. */
  memory: Pick<MemoryHttpClient, 'relay'>;
}

const KEY = /^Bearer (mk_[a-z0-9]{1,40}_[A-Za-z0-9_-]{1,100})$/;
const HIDDEN_FIELDS = new Set(['text', 'value', 'summary', 'preview', 'lines', 'sentence']);
const strict = { additionalProperties: false } as const;
const Id = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' });

/** One row of the memory service's answer to POST /v1/admin/contexts/:id/memories. */
interface RemoteMemory {
  id: string;
  tier: string;
  available: boolean;
  reason?: string;
  text?: string;
  fact?: { key: string; value: string; summary: string };
  supersededAt?: string | null;
  invalidatedAt?: string | null;
}

class InspectorError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
  }
}

/** Replaces text fields by their length, at every depth. */
export function withoutText(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutText);
  if (value === null || typeof value !== 'object') return value;
  const hide = (v: unknown): unknown => (typeof v === 'string' ? `[hidden: ${v.length} chars]` : Array.isArray(v) ? v.map(hide) : withoutText(v));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, HIDDEN_FIELDS.has(k) ? hide(v) : withoutText(v)]));
}

export async function inspectorRoutes(app: FastifyInstance, options: InspectorRouteOptions): Promise<void> {
  const memory = (key: string, method: 'GET' | 'POST', path: string, body?: unknown) => options.memory.relay(method, path, key, body);

  /** The operator's key, checked for the "audit" attribute with the memory service itself. */
  const operator = async (request: FastifyRequest): Promise<string> => {
    const key = KEY.exec(request.headers.authorization ?? '')?.[1];
    if (!key) throw new InspectorError('OPERATOR_KEY_REQUIRED', 'Sign in with an admin API key of the memory service (data/local-tenant.json, "adminKey").', 401);
    const { status, json } = await memory(key, 'GET', '/v1/audit/records?limit=1');
    if (status !== 200) {
      const error = (json.error ?? {}) as { code?: string; message?: string };
      throw new InspectorError(error.code ?? 'OPERATOR_REFUSED', error.message ?? 'The memory service refused this key.', status === 401 ? 401 : 403);
    }
    return key;
  };

  const relay = (reply: FastifyReply, result: { status: number; json: unknown }) => reply.status(result.status).send(withoutText(result.json));

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    const status = error instanceof InspectorError ? error.statusCode : (error.statusCode ?? 500);
    const code = error instanceof InspectorError ? error.code : status === 400 ? 'INVALID_REQUEST' : 'INSPECTOR_FAILED';
    return reply.status(status).send({ error: { code, message: status >= 500 ? 'The inspector could not reach the memory service.' : error.message } });
  });

  app.post('/session', { schema: { hide: true } }, async (request) => {
    await operator(request);
    return { ok: true, attributes: ['audit'], textShown: false };
  });

  app.get(
    '/contexts/:gameId/:contextId',
    { schema: { hide: true, params: Type.Object({ gameId: Id, contextId: Type.String({ pattern: '^[0-9a-fA-F-]{36}$' }) }, strict) } },
    async (request, reply) => {
      const key = await operator(request);
      const { gameId, contextId } = request.params as { gameId: string; contextId: string };
      const minted = await memory(key, 'POST', '/v1/tokens', { gameId, ttlSeconds: 60 });
      if (minted.status !== 200) return relay(reply, minted);
      const token = String(minted.json.token);
      return relay(reply, await memory(token, 'GET', `/v1/contexts/${contextId}`));
    },
  );

  // The remembered text beside each memory id: opened by the memory service for this operator's
  // admin principal and recorded in its ledger. Only the fields the page shows are passed on.
  app.get(
    '/contexts/:gameId/:contextId/memories',
    { schema: { hide: true, params: Type.Object({ gameId: Id, contextId: Type.String({ pattern: '^[0-9a-fA-F-]{36}$' }) }, strict) } },
    async (request, reply) => {
      const key = await operator(request);
      const { gameId, contextId } = request.params as { gameId: string; contextId: string };
      const result = await memory(key, 'POST', `/v1/admin/contexts/${contextId}/memories`, { gameId });
      if (result.status !== 200) return relay(reply, result);
      const memories = Array.isArray(result.json.memories) ? (result.json.memories as RemoteMemory[]) : [];
      return {
        contextId,
        ledgerSeq: (result.json.ledger as { seq?: number } | undefined)?.seq ?? null,
        memories: memories.map((m) =>
          m.available
            ? {
                id: m.id,
                tier: m.tier,
                available: true,
                remembered: m.fact ? m.fact.summary : (m.text ?? ''),
                key: m.fact?.key ?? null,
                current: !m.supersededAt && !m.invalidatedAt,
              }
            : { id: m.id, tier: m.tier, available: false, reason: m.reason ?? 'unavailable' },
        ),
      };
    },
  );

  app.get(
    '/audit/records',
    { schema: { hide: true, querystring: Type.Object({ fromSeq: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$' })) }, strict) } },
    async (request, reply) => {
      const key = await operator(request);
      const fromSeq = (request.query as { fromSeq?: string }).fromSeq ?? '1';
      return relay(reply, await memory(key, 'GET', `/v1/audit/records?fromSeq=${fromSeq}&limit=200`));
    },
  );

  app.get('/audit/verify', { schema: { hide: true } }, async (request, reply) => relay(reply, await memory(await operator(request), 'GET', '/v1/audit/verify')));

  app.post(
    '/clones/dry-run',
    { schema: { hide: true, body: Type.Object({ from: Id, to: Id }, strict) } },
    async (request, reply) => {
      const key = await operator(request);
      const { from, to } = request.body as { from: string; to: string };
      return relay(reply, await memory(key, 'POST', '/v1/clones', { from, to, dryRun: true }));
    },
  );

  app.get(
    '/lineage',
    {
      schema: {
        hide: true,
        querystring: Type.Object({ operation: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F-]{36}$' })), row: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$' })) }, strict),
      },
    },
    async (request, reply) => {
      const key = await operator(request);
      const { operation, row } = request.query as { operation?: string; row?: string };
      if ((operation === undefined) === (row === undefined)) throw new InspectorError('INVALID_REQUEST', 'Give an operation id or a row id.', 400);
      const path = operation ? `/v1/clones/${operation}/trace` : `/v1/lineage/trace?row=${encodeURIComponent(row!)}`;
      return relay(reply, await memory(key, 'GET', path));
    },
  );

  app.get(
    '/games/:gameId/npc-turns',
    { schema: { hide: true, params: Type.Object({ gameId: Id }, strict) } },
    async (request, reply) => {
      await operator(request);
      const { gameId } = request.params as { gameId: string };
      const engineToken = request.headers['x-engine-operator-token'];
      if (typeof engineToken !== 'string' || !/^[A-Za-z0-9_-]{1,200}$/.test(engineToken)) {
        throw new InspectorError('ENGINE_OPERATOR_TOKEN_REQUIRED', "Listing NPC turns needs the engine's operator token too (sign in again with it); or paste a context id.", 401);
      }
      // The engine's own operator route, relayed in-process with the engine's operator token.
      const answer = await app.inject({ method: 'GET', url: `/v1/games/${encodeURIComponent(gameId)}/npc-turns`, headers: { authorization: `Bearer ${engineToken}` } });
      if (answer.statusCode === 404 && answer.json<{ error?: { code?: string } }>().error?.code === 'ROUTE_NOT_FOUND') {
        throw new InspectorError('NPC_TURNS_UNAVAILABLE', 'This engine does not list NPC turns yet; paste a context id instead.', 404);
      }
      return relay(reply, { status: answer.statusCode, json: answer.json() });
    },
  );
}
