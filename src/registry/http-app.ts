/**
 * The registry's HTTP API. Read-only and exact:
 *
 * - `GET /v1/names/resolve?first=&middle=&last=` or `?fullName=`: 200 with the NPC, or 404
 *   `{ code: "CHARACTER_NOT_RECOGNIZED", message: "Character not recognized" }`.
 * - `GET /v1/npcs/:npcId`: 200 with the NPC, or 404 `{ code: "NPC_NOT_FOUND" }`.
 *
 * A query that is neither form, repeats a parameter or carries an unknown one is a 400
 * (`INVALID_QUERY`) rather than a guess at what was meant.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
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

/** Exactly one of the two query forms, each value a single string. */
export function parseNameQuery(raw: unknown): QueryParse {
  if (typeof raw !== 'object' || raw === null) return { ok: false, message: 'A name query is required.' };
  const q = raw as Record<string, unknown>;
  const keys = Object.keys(q).sort();
  for (const k of keys) {
    if (typeof q[k] !== 'string') return { ok: false, message: `Give "${k}" exactly once.` };
  }
  if (keys.length === 1 && keys[0] === 'fullName') return { ok: true, query: { fullName: q.fullName as string } };
  if (keys.join(',') === 'first,last,middle') {
    const [first, middle, last] = PART_KEYS.map((k) => q[k] as string) as [string, string, string];
    return { ok: true, query: { first, middle, last } };
  }
  return {
    ok: false,
    message: 'Ask with either ?first=&middle=&last= (all three) or ?fullName=, and nothing else.',
  };
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

/** A standalone registry server (its own process and port, or `inject()` in tests). */
export async function buildRegistryApp(
  options: RegistryRoutesOptions & { fastify?: FastifyServerOptions },
): Promise<FastifyInstance> {
  const app = Fastify(options.fastify ?? { logger: false });
  await app.register(registryRoutes, { registry: options.registry });
  return app;
}
