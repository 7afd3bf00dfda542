import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/memory/db/postgres.js';
import { DatabaseUnavailableError } from '../../src/memory/db/unavailable.js';
import { migrate } from '../../src/memory/db/migrate.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { createTenant } from '../../src/memory/credentials.js';
import type { Database } from '../../src/memory/db/types.js';
import { tempDir } from '../helpers/database.js';
import { startCluster, type Cluster } from '../helpers/pg-cluster.js';

// Native PostgreSQL only (it restarts a cluster of its own; PGlite has no connection to lose).
// A crash here is an unhandled 'error' event, which fails the run.
describe.skipIf(!process.env.DATABASE_URL)('losing the database connection', () => {
  let cluster: Cluster;
  let db: Database;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;
  let runtimeKey: string;
  let tenantId: string;

  beforeAll(async () => {
    cluster = await startCluster();
    db = openPostgres(cluster.url, { connectionTimeoutMillis: 2_000 });
    await migrate(db);
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false });
    ({ tenantId, runtimeKey } = await createTenant(db, 'studio-outage'));
  }, 60_000);
  afterAll(async () => {
    await system?.app.close();
    await removeKeys?.();
    await db?.close().catch(() => {});
    await cluster?.destroy();
  });

  const ingest = async (key: string) => {
    const { token } = await system.credentials.issueGameToken(tenantId, 'outage-game', ['part-out00001'], 600);
    void runtimeKey;
    return system.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { authorization: `Bearer ${token}` },
      payload: { idempotencyKey: key, events: [{ gameId: 'outage-game', roomId: 'hall', npcId: 'npc-mara', participantId: 'part-out00001', ts: 1_764_000_000, targeted: true, text: 'I keep bees' }] },
    });
  };

  it('fails a transaction whose connection the server ended with DATABASE_UNAVAILABLE, discards that connection, and serves the next query', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let pid = 0;
    const running = db.transaction(async (tx) => {
      pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await gate;
      return tx.query('SELECT 1');
    });
    while (!pid) await new Promise((r) => setTimeout(r, 10));
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await admin.end();
    // The connection is idle in its transaction while the server ends it: the error arrives
    // with no query running (the crash of a client without a listener).
    await new Promise((r) => setTimeout(r, 200));
    release();
    await expect(running).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('answers 503 DATABASE_UNAVAILABLE and not ready while the database is down, stays alive, and accepts the same request once it is back', async () => {
    expect((await ingest('outage-1')).statusCode).toBe(200);
    await cluster.stop();
    try {
      const refused = await ingest('outage-2');
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ error: { code: 'DATABASE_UNAVAILABLE', message: expect.stringMatching(/Retry with the same idempotency key/) } });
      const ready = await system.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'unavailable', database: 'unavailable' });
      expect((await system.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(503);
      expect((await system.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    } finally {
      await cluster.start();
    }
    // The pool's connections died with the server; the next request gets fresh ones.
    const retried = await ingest('outage-2');
    expect(retried.statusCode).toBe(200);
    const ready = await system.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', database: 'ok', consolidation: { ok: true } });
  }, 60_000);
});
