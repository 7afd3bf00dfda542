import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('the memory service\'s metrics', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    // No workers: what is ingested stays due, so the queue's depth and lag show.
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  it('exports the consolidation queue\'s depth and lag (one job per game and NPC however many lines wait), without a key and without tenant data', async () => {
    const { tenantId } = await createTenant(database.db, `studio-${Math.random().toString(36).slice(2)}`);
    const { token } = await system.credentials.issueGameToken(tenantId, 'metrics-game', ['part-metr0001'], 600);
    for (let i = 0; i < 3; i += 1) {
      const response = await system.app.inject({
        method: 'POST',
        url: '/v1/events',
        headers: { authorization: `Bearer ${token}` },
        payload: { idempotencyKey: `metrics-${i}`, events: [{ gameId: 'metrics-game', roomId: 'hall', npcId: 'npc-mara', participantId: 'part-metr0001', ts: 1_764_000_000, targeted: true, text: `I keep bees, line ${i}` }] },
      });
      expect(response.statusCode).toBe(200);
    }
    const metrics = await system.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/^memory_database_up 1$/m);
    expect(metrics.body).toMatch(/^memory_consolidation_due 1$/m);
    expect(metrics.body).toMatch(/^memory_consolidation_lag_seconds \d+$/m);
    expect(metrics.body).not.toContain(tenantId);
  });

  it('exports what the process holds in memory (resident set and V8 heap) and how late its event loop runs, so an operator sees memory come back after games end and a saturated thread', async () => {
    const metrics = (await system.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes']) {
      expect(Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1])).toBeGreaterThan(0);
    }
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds']) {
      expect(Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics)?.[1])).toBeGreaterThanOrEqual(0);
    }
  });
});
