import type { FastifyInstance } from 'fastify';
import { metricsText, processMetrics } from '../../boundary/prometheus.js';
import type { Database } from '../db/types.js';

/** Consolidation this far behind takes a replica out of rotation. */
export const MAX_CONSOLIDATION_LAG_SECONDS = 120;
/** A database that has not answered by then counts as down. */
const CHECK_TIMEOUT_MS = 2_000;

export interface Readiness {
  status: 'ok' | 'unavailable';
  backend: Database['backend'];
  database: 'ok' | 'unavailable';
  /** Consolidation jobs due and the age of the oldest one: how far behind memory is. */
  consolidation?: { due: number; lagSeconds: number; ok: boolean };
}

/** Whether the service can serve: its database answers and consolidation keeps up. */
export async function readiness(db: Database, maxLagSeconds = MAX_CONSOLIDATION_LAG_SECONDS): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { rows } = await Promise.race([
      db.query<{ due: number; lag: number | string | null }>(
        `SELECT count(*) AS due, extract(epoch FROM now() - min(run_at)) AS lag
           FROM memory.jobs WHERE kind = 'consolidate' AND state = 'queued' AND run_at <= now()`,
      ),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('database check timed out')), CHECK_TIMEOUT_MS))),
    ]);
    const due = Number(rows[0]?.due ?? 0);
    const lagSeconds = Math.max(0, Math.round(Number(rows[0]?.lag ?? 0)));
    const ok = lagSeconds <= maxLagSeconds;
    return { status: ok ? 'ok' : 'unavailable', backend: db.backend, database: 'ok', consolidation: { due, lagSeconds, ok } };
  } catch {
    return { status: 'unavailable', backend: db.backend, database: 'unavailable' };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /health/live`: the process answers (restart it if not). `GET /health/ready` and `/health`:
 * whether it can serve now (503 while the database is down or consolidation is far behind).
 */
export function healthRoutes(app: FastifyInstance, db: Database): void {
  app.get('/health/live', { schema: { security: [] } }, async () => ({ status: 'ok' }));
  // Counts only, across tenants (no tenant's data): for a scraper on the operators' network.
  app.get('/metrics', { schema: { security: [], hide: true } }, async (_request, reply) => {
    const ready = await readiness(db);
    const text = metricsText([
      { name: 'memory_database_up', type: 'gauge', help: 'Whether the database answered the check.', value: ready.database === 'ok' ? 1 : 0 },
      { name: 'memory_consolidation_due', type: 'gauge', help: 'Consolidation jobs due now (at most one queued per game and NPC).', value: ready.consolidation?.due ?? 0 },
      { name: 'memory_consolidation_lag_seconds', type: 'gauge', help: 'Age of the oldest due consolidation job.', value: ready.consolidation?.lagSeconds ?? 0 },
      ...processMetrics(),
    ]);
    return reply.type('text/plain; version=0.0.4').send(text);
  });
  for (const url of ['/health', '/health/ready']) {
    app.get(url, { schema: { security: [] } }, async (_request, reply) => {
      const ready = await readiness(db);
      return reply.status(ready.status === 'ok' ? 200 : 503).send(ready);
    });
  }
}
