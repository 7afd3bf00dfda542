import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createHmac, randomBytes } from 'node:crypto';
import { clientErrors, frameworkErrors, MAX_PARAM_LENGTH } from '../../boundary/framework-errors.js';
import { strictJsonBodies } from '../../boundary/json-body.js';
import { healthRoutes } from './health.js';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Credentials } from '../credentials.js';
import type { MemoryService } from '../service.js';
import { authenticate } from './auth.js';
import { MEMORY_ERRORS } from './errors.js';
import { answerErrors } from '../../boundary/http-errors.js';
import { memoryRoutes } from './routes/memories.js';
import { contextRoutes } from './routes/context.js';
import { adminRoutes } from './routes/admin.js';
import { inspectionRoutes } from './routes/inspection.js';
import type { AdminServices } from '../admin/services.js';
import { lifecycleRoutes } from './routes/lifecycle.js';
import type { MemoryRouteDeps } from './deps.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';

/** Every route module of the API, one per feature (routes/*.ts). */
const ROUTES: ((app: FastifyInstance, deps: MemoryRouteDeps) => void)[] = [memoryRoutes, contextRoutes, adminRoutes, inspectionRoutes, lifecycleRoutes];

export interface MemoryAppOptions {
  service: MemoryService;
  credentials: Credentials;
  admin: AdminServices;
  lifecycle?: Lifecycle;
  /** A pino logger; memory text never reaches it. (Default: silent) */
  logger?: Logger | false;
  /** Largest accepted request body in bytes. (Default: 1 MiB) */
  bodyLimit?: number;
}

/** The memory service (MemoryEndpoints.com) as an HTTP API. */
export async function buildMemoryApp(options: MemoryAppOptions): Promise<FastifyInstance> {
  const { service, credentials } = options;
  const app = Fastify({
    frameworkErrors,
    clientErrorHandler: clientErrors,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    loggerInstance: (options.logger || undefined) as FastifyBaseLogger | undefined,
    // Requests are logged by the hook below, with participant ids in URLs replaced by a keyed hash.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Unknown fields are refused, not stripped; types are never coerced in bodies.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // UTF-8 only, and no NUL or lone surrogate in any string (400 before any route runs).
  strictJsonBodies(app);

  await app.register(swagger, {
    openapi: {
      info: { title: 'MemoryEndpoints: NPC memory service', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  // One line per request, never naming a participant: erasing one leaves nothing in these logs.
  const logKey = randomBytes(32);
  app.addHook('onResponse', async (request, reply) => {
    // At debug: the default level (info) shows start-up, failures and warnings, not every request.
    request.log.debug({ method: request.method, url: loggedUrl(request.url, logKey), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  answerErrors(app, MEMORY_ERRORS);

  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/v1/')) return;
    request.principal = await authenticate(credentials, request);
  });

  healthRoutes(app, service.db);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const deps: MemoryRouteDeps = { service, credentials, admin: options.admin, lifecycle: options.lifecycle };
  for (const routes of ROUTES) routes(app, deps);
  return app;
}

/**
 * A URL as it is logged: a participant id in the path becomes a keyed hash (HMAC-SHA256 under a
 * key that lives only in this process), so requests about one participant can be told apart in
 * one run's logs but nobody is named in them, and the query string is dropped.
 */
export function loggedUrl(url: string, key: Uint8Array): string {
  const path = url.split('?')[0]!;
  const decoded = (id: string) => {
    try {
      return decodeURIComponent(id);
    } catch {
      return id;
    }
  };
  return path.replace(/^(\/v1\/participants\/)([^/]+)/, (_m, prefix: string, id: string) => `${prefix}~${createHmac('sha256', key).update(decoded(id)).digest('base64url').slice(0, 12)}`);
}
