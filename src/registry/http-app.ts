/**
 * The registry's HTTP API. Read-only and exact:
 *
 * - `GET /v1/names/resolve?first=&middle=&last=` or `?fullName=`: 200 with the NPC, or 404
 *   `{ code: "CHARACTER_NOT_RECOGNIZED", message: "Character not recognized" }`.
 * - `GET /v1/npcs/:npcId`: 200 with the NPC, or 404 `{ code: "NPC_NOT_FOUND" }`.
 *
 * A query that is neither form, repeats a parameter or carries an unknown one is a 400
 * (`INVALID_QUERY`) rather than a guess at what was meant. Every error is `{ code, message }`,
 * and no message repeats what was sent (a name, an unknown parameter, the URL).
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import { clientErrorsAs, frameworkErrorsAs, MAX_PARAM_LENGTH, type ErrorBodyOf } from '../boundary/framework-errors.js';
import {
  CHARACTER_NOT_RECOGNIZED,
  CHARACTER_NOT_RECOGNIZED_MESSAGE,
  type NameQuery,
  type NameRegistry,
} from './name-registry.js';

export interface RegistryRoutesOptions {
  registry: NameRegistry;
}

type QueryParse = { ok: true; query: NameQuery } | { ok: false; message: string };

const PART_KEYS = ['first', 'middle', 'last'] as const;
const QUERY_KEYS: ReadonlySet<string> = new Set([...PART_KEYS, 'fullName']);
const QUERY_FORMS = 'Ask with either ?first=&middle=&last= (all three) or ?fullName=, and nothing else.';

/** Exactly one of the two query forms, each value a single string. */
export function parseNameQuery(raw: unknown): QueryParse {
  if (typeof raw !== 'object' || raw === null) return { ok: false, message: 'A name query is required.' };
  const q = raw as Record<string, unknown>;
  const keys = Object.keys(q).sort();
  for (const k of keys) {
    // An unknown parameter is not named back: its name is whatever the client sent.
    if (!QUERY_KEYS.has(k)) return { ok: false, message: QUERY_FORMS };
    if (typeof q[k] !== 'string') return { ok: false, message: `Give "${k}" exactly once.` };
  }
  if (keys.length === 1 && keys[0] === 'fullName') return { ok: true, query: { fullName: q.fullName as string } };
  if (keys.join(',') === 'first,last,middle') {
    const [first, middle, last] = PART_KEYS.map((k) => q[k] as string) as [string, string, string];
    return { ok: true, query: { first, middle, last } };
  }
  return { ok: false, message: QUERY_FORMS };
}

export const registryRoutes: FastifyPluginAsync<RegistryRoutesOptions> = async (app, { registry }) => {
  app.get('/v1/names/resolve', async (request, reply) => {
    const parsed = parseNameQuery(request.query);
    if (!parsed.ok) return reply.code(400).send({ code: 'INVALID_QUERY', message: parsed.message });
    const result = registry.resolve(parsed.query);
    if (!result.ok) {
      return reply.code(404).send({ code: CHARACTER_NOT_RECOGNIZED, message: CHARACTER_NOT_RECOGNIZED_MESSAGE });
    }
    return result.npc;
  });

  app.get<{ Params: { npcId: string } }>('/v1/npcs/:npcId', async (request, reply) => {
    const npc = registry.getNpc(request.params.npcId);
    if (!npc) return reply.code(404).send({ code: 'NPC_NOT_FOUND', message: 'No NPC is registered under this id.' });
    return npc;
  });
};

/** The registry's error body. */
const errorBody: ErrorBodyOf = (code, message) => ({ code, message });

/** A standalone registry server (its own process and port, or `inject()` in tests). */
export async function buildRegistryApp(
  options: RegistryRoutesOptions & { fastify?: FastifyServerOptions },
): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.fastify ?? { logger: false }),
    // What is refused before a route runs gets the registry's body too, without the URL.
    frameworkErrors: frameworkErrorsAs(errorBody),
    clientErrorHandler: clientErrorsAs(errorBody),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody('ROUTE_NOT_FOUND', 'No such endpoint: GET /v1/names/resolve or GET /v1/npcs/:npcId.')));
  app.setErrorHandler((error: { statusCode?: number }, request, reply) => {
    const status = error.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return reply.code(status).send(errorBody('BAD_REQUEST', 'The request could not be read; check its method, headers and query.'));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody('INTERNAL', 'The name registry failed; try again.'));
  });
  await app.register(registryRoutes, { registry: options.registry });
  return app;
}
