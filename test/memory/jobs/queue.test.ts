import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../src/memory/credentials.js';
import { claimJobs, enqueueConsolidation, enqueueConsolidations, listJobs, queueStats } from '../../../src/memory/jobs/queue.js';
import { buildMemorySystem } from '../../../src/memory/system.js';
import { Worker } from '../../../src/memory/jobs/worker.js';
import { openPostgres } from '../../../src/memory/db/postgres.js';
import type { Database } from '../../../src/memory/db/types.js';
import { inScope } from '../../../src/memory/scope.js';
import { backend, openTestDatabase, tempDir, type TestDatabase } from '../../helpers/database.js';

describe('the job queue in PostgreSQL', () => {
  let database: TestDatabase;
  let db: Database;
  let tenantA: string;
  let tenantB: string;
  // A little ahead of the database clock, which stamps run_at at enqueue.
  let now = new Date(Date.now() + 60_000);
  const clock = () => now;

  const game = async (tenantId: string, gameId: string) =>
    db.query('INSERT INTO memory.games (tenant_id, game_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, gameId]);
  const enqueueAs = (tenantId: string, gameId: string, npcId: string) =>
    inScope(db, { tenantId, gameId, role: 'runtime' }, (tx) => enqueueConsolidation(tx, { tenantId, gameId, npcId, reason: 'suspension' }));

  beforeAll(async () => {
    database = await openTestDatabase();
    db = database.db;
    tenantA = (await createTenant(db, `queue-a-${Date.now()}`)).tenantId;
    tenantB = (await createTenant(db, `queue-b-${Date.now()}`)).tenantId;
    for (let i = 0; i < 40; i++) await game(tenantA, `g${i}`);
    await game(tenantB, 'secret-game');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('coalesces repeated triggers into one queued job per (tenant, game, npc)', async () => {
    for (let i = 0; i < 3; i++) await enqueueAs(tenantA, 'g0', 'npc-x');
    const jobs = (await listJobs(db, { tenantId: tenantA })).filter((j) => j.gameId === 'g0');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ state: 'queued', reason: 'suspension', attempts: 0 });
  });

  it('lets the runtime role enqueue and read only its own tenant\'s jobs', async () => {
    await enqueueAs(tenantB, 'secret-game', 'npc-y');
    const seen = await inScope(db, { tenantId: tenantA, role: 'runtime' }, async (tx) => (await tx.query<{ tenant_id: string }>('SELECT tenant_id FROM memory.jobs')).rows);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.tenant_id === tenantA)).toBe(true);
    // Enqueueing into another tenant is refused by the policy; claiming is not granted at all.
    await expect(
      inScope(db, { tenantId: tenantA, gameId: 'secret-game', role: 'runtime' }, (tx) =>
        enqueueConsolidation(tx, { tenantId: tenantB, gameId: 'secret-game', npcId: 'npc-z', reason: 'manual' }),
      ),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      inScope(db, { tenantId: tenantA, role: 'runtime' }, (tx) => tx.query("UPDATE memory.jobs SET state = 'running'")),
    ).rejects.toMatchObject({ code: '42501' });
  });

  it('gives each job to exactly one of several concurrent workers', async () => {
    for (let i = 1; i < 40; i++) await enqueueAs(tenantA, `g${i}`, 'npc-x');
    const processed: string[] = [];
    const handlers = {
      consolidate: async (job: { id: string }) => {
        processed.push(job.id);
        await new Promise((r) => setTimeout(r, 2));
      },
    };
    // On native PostgreSQL each worker has its own pool, as separate processes would.
    const pools = backend === 'postgres' ? [0, 1, 2, 3].map(() => openPostgres(database.url!, { max: 2 })) : [db, db, db, db];
    try {
      const workers = pools.map((p, i) => new Worker(p, { handlers, clock, concurrency: 3, workerId: `w${i}` }));
      const results = await Promise.all(workers.map((w) => w.drain({ tenantId: tenantA })));
      const ids = results.flat().map((r) => r.job.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(processed.sort()).toEqual([...ids].sort());
      expect(ids.length).toBe(40);
      if (backend === 'postgres') expect(results.filter((r) => r.length > 0).length).toBeGreaterThan(1);
    } finally {
      if (backend === 'postgres') await Promise.all(pools.map((p) => p.close()));
    }
    expect((await listJobs(db, { tenantId: tenantA })).every((j) => j.state === 'done')).toBe(true);
  });

  it('retries a failing job with backoff, then dead-letters it after its last attempt', async () => {
    await enqueueAs(tenantA, 'g0', 'npc-fails');
    let calls = 0;
    const worker = new Worker(db, {
      handlers: {
        consolidate: async () => {
          calls++;
          throw Object.assign(new Error('extractor down'), { code: 'EXTRACTOR_UNAVAILABLE' });
        },
      },
      clock,
    });
    const first = await worker.runOnce({ tenantId: tenantA });
    expect(first.map((r) => r.outcome)).toEqual(['queued']);
    const job = (await listJobs(db, { tenantId: tenantA })).find((j) => j.npcId === 'npc-fails')!;
    expect(job.runAt.getTime()).toBeGreaterThan(now.getTime()); // backoff
    expect(job.lastError).toMatch(/^EXTRACTOR_UNAVAILABLE: extractor down/);
    expect(await worker.runOnce({ tenantId: tenantA })).toEqual([]); // not due yet
    expect(await worker.drain({ tenantId: tenantA, gameId: 'g0' })).toEqual([]); // nor for drain: it skips only batching windows
    const outcomes: string[] = [];
    for (let i = 0; i < 10 && !outcomes.includes('dead'); i++) {
      now = new Date(now.getTime() + 15 * 60 * 1000);
      outcomes.push(...(await worker.runOnce({ tenantId: tenantA })).map((r) => r.outcome));
    }
    expect(outcomes).toEqual(['queued', 'queued', 'queued', 'dead']);
    expect(calls).toBe(5);
    expect((await queueStats(db, now)).dead).toBeGreaterThanOrEqual(1);
    // A new trigger after the dead letter gets a fresh job.
    await enqueueAs(tenantA, 'g0', 'npc-fails');
    expect((await listJobs(db, { tenantId: tenantA })).filter((j) => j.npcId === 'npc-fails').map((j) => j.state).sort()).toEqual(['dead', 'queued']);
  });

  it('holds ingest-triggered consolidation for its batching window, folds later batches into it, and lets drain run it at once', async () => {
    await game(tenantA, 'g-window');
    const ingestHook = () =>
      inScope(db, { tenantId: tenantA, gameId: 'g-window', role: 'runtime' }, (tx) => enqueueConsolidations(tx, tenantA, 'g-window', ['npc-w'], 'ingest', 60_000));
    await ingestHook();
    const [queued] = (await listJobs(db, { tenantId: tenantA })).filter((j) => j.gameId === 'g-window');
    await ingestHook();
    const jobs = (await listJobs(db, { tenantId: tenantA })).filter((j) => j.gameId === 'g-window');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.runAt).toEqual(queued!.runAt); // a later batch does not push the job back
    expect(jobs[0]!.runAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
    const ran: string[] = [];
    const worker = new Worker(db, { handlers: { consolidate: async (job) => void ran.push(job.gameId) }, clock: () => new Date() });
    expect(await worker.runOnce({ tenantId: tenantA, gameId: 'g-window' })).toEqual([]); // the background loop waits
    expect((await worker.drain({ tenantId: tenantA, gameId: 'g-window' })).map((r) => r.outcome)).toEqual(['done']);
    expect(ran).toEqual(['g-window']);
  });

  it('applies the configured batching window to what the memory service ingests', async () => {
    const keys = await tempDir('queue-window-keys');
    try {
      const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false, lifecycle: { consolidationWindowMs: 45_000 } });
      const scope = { tenantId: tenantA, gameId: 'g-ingest-window', role: 'runtime' as const };
      const before = Date.now();
      await system.service.ingest(scope, {
        idempotencyKey: 'w1',
        events: [{ gameId: 'g-ingest-window', roomId: 'hall', npcId: 'npc-w', participantId: 'part-w1', ts: 1_700_000_000, text: 'I like tea', targeted: true }],
      });
      const [job] = (await listJobs(db, { tenantId: tenantA })).filter((j) => j.gameId === 'g-ingest-window');
      expect(job!.runAt.getTime()).toBeGreaterThanOrEqual(before + 40_000);
      await system.app.close();
    } finally {
      await keys.remove();
    }
  });

  it('queues one consolidation job for each npc a batch speaks to, stores each npc\'s lines under it, and answers a retry of the batch as its replay', async () => {
    const keys = await tempDir('queue-two-npcs-keys');
    try {
      const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false });
      const scope = { tenantId: tenantA, gameId: 'g-two-npcs', role: 'runtime' as const };
      const line = (npcId: string, text: string, ts: number) => ({ gameId: 'g-two-npcs', roomId: 'hall', npcId, participantId: 'part-t1', ts, text, targeted: true });
      const batch = { idempotencyKey: 't1', events: [line('npc-a', 'I keep bees', 1), line('npc-b', 'I grew up in Cork', 2), line('npc-a', 'and I hate spiders', 3)] };
      const first = await system.service.ingest(scope, batch);
      expect(first).toMatchObject({ accepted: 3, replayed: false });
      const jobs = (await listJobs(db, { tenantId: tenantA })).filter((j) => j.gameId === 'g-two-npcs');
      expect(jobs.map((j) => [j.npcId, j.state, j.reason]).sort()).toEqual([['npc-a', 'queued', 'ingest'], ['npc-b', 'queued', 'ingest']]);
      const rows = async () =>
        (await db.query<{ id: string; npc_id: string }>('SELECT id, npc_id FROM memory.episodic WHERE tenant_id = $1 AND game_id = $2 ORDER BY ts', [tenantA, 'g-two-npcs'])).rows;
      expect((await rows()).map((r) => [r.id, r.npc_id])).toEqual([[first.ids[0], 'npc-a'], [first.ids[1], 'npc-b'], [first.ids[2], 'npc-a']]);
      expect(await system.service.ingest(scope, batch)).toEqual({ ...first, replayed: true });
      expect(await rows()).toHaveLength(3);
      await system.app.close();
    } finally {
      await keys.remove();
    }
  });

  it('hands the job of a worker that died mid-job to another once its lease runs out', async () => {
    await enqueueAs(tenantA, 'g1', 'npc-crash');
    const [claimed] = await claimJobs(db, 'dead-worker', { now, limit: 1, leaseMs: 30_000, tenantId: tenantA, gameId: 'g1' });
    expect(claimed?.npcId).toBe('npc-crash');
    const survivor = new Worker(db, { handlers: { consolidate: async () => {} }, clock });
    expect(await survivor.runOnce({ tenantId: tenantA, gameId: 'g1' })).toEqual([]); // still leased
    now = new Date(now.getTime() + 31_000);
    const rescued = await survivor.runOnce({ tenantId: tenantA, gameId: 'g1' });
    expect(rescued.map((r) => [r.job.id, r.outcome, r.job.attempts])).toEqual([[claimed!.id, 'done', 2]]);
  });
  it('keeps up to its concurrency of jobs running in the background, a slow one holding only its own slot, and asks the queue once per poll while idle', async () => {
    for (let i = 20; i < 28; i++) await enqueueAs(tenantA, `g${i}`, 'npc-background');
    let running = 0;
    let most = 0;
    let done = 0;
    const finished: string[] = [];
    const handlers = {
      consolidate: async (job: { npcId: string; gameId: string }) => {
        if (job.npcId !== 'npc-background') return; // (what other tests left due)
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, job.gameId === 'g20' ? 600 : 30));
        running--;
        done++;
        finished.push(job.gameId);
      },
    };
    let polls = 0;
    const counting: Database = { ...db, transaction: (fn, settings) => (settings?.some((x) => x.includes('memory_worker')) && polls++, db.transaction(fn, settings)) };
    const worker = new Worker(counting, { handlers, clock, concurrency: 3, pollMs: 50 });
    worker.start();
    try {
      for (let waited = 0; done < 8 && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      expect(done).toBe(8);
      expect(most).toBe(3);
      // The first job claimed is the slow one: the other seven ran beside it in the two other slots.
      expect(finished.at(-1)).toBe('g20');
      // Idle now (once what other tests left due has run too): about one claim per poll (every
      // 50 ms, 10 in 500 ms), not one per slot (30).
      await new Promise((r) => setTimeout(r, 300));
      const before = polls;
      await new Promise((r) => setTimeout(r, 500));
      expect(polls - before).toBeLessThanOrEqual(15);
      expect(polls - before).toBeGreaterThanOrEqual(3);
    } finally {
      await worker.stop();
    }
  });
});
