/**
 * Liveness: the process answers. Readiness (and /health): the engine's database keeps up and the
 * outbox delivers to the memory service; a call waiting longer than `readyMaxOutboxLagMs` means
 * memory is falling behind.
 */
import type { FastifyInstance } from 'fastify';
import type { EngineRouteDeps } from '../deps.js';

/** An outbox call older than this takes the engine out of rotation: the memory service is not keeping up. */
const OUTBOX_READY_MAX_LAG_MS = 30_000;

export function healthRoutes(app: FastifyInstance, { engine, options }: EngineRouteDeps): void {
  app.get('/health/live', { schema: { security: [] } }, async () => ({ status: 'ok' }));
  for (const url of ['/health', '/health/ready']) {
    app.get(url, { schema: { security: [] } }, async (_request, reply) => {
      const outbox = engine.outbox.stats();
      const store = engine.storeStats();
      const ready = store.accepting && engine.outbox.accepting && outbox.oldestPendingMs <= (options.readyMaxOutboxLagMs ?? OUTBOX_READY_MAX_LAG_MS);
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', games: engine.runningGames, store, outbox });
    });
  }
}
