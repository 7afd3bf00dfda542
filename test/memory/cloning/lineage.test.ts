import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, onCitus, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { memorySystemOn } from '../../helpers/fixture.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import type { TraceResult } from '../../../src/memory/cloning/lineage.js';
import type { FactMemory } from '../../../src/memory/types.js';
import { bearer, GAME, gameToken, newTenant, P1, P2, P3, populateNpc, type PopulatedNpc, type Tenant } from './support.js';

/** Lineage through clones of clones, one-command invalidation, and a ledger that stays linear under concurrency. */
describe(`lineage trace and cascading invalidation (${backend})`, () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let tenant: Tenant;
  let a: PopulatedNpc;
  let op1: string;
  let op2: string;
  const B = 'npc-lineage-b';
  const C = 'npc-lineage-c';

  const clone = async (from: string, to: string) => {
    const res = await system.app.inject({ method: 'POST', url: '/v1/clones', headers: bearer(tenant.adminKey), payload: { from, to } });
    expect(res.statusCode).toBe(201);
    return res.json().manifest.operationId as string;
  };
  const scope = (npcId: string) => ({ tenantId: tenant.tenantId, npcId, gameId: GAME, participantIds: [P1, P2, P3], role: 'runtime' as const });
  const visible = async (npcId: string) => {
    const lore = (await system.service.list(scope(npcId), 'lore', { limit: 100 })) as FactMemory[];
    const social = (await system.service.list(scope(npcId), 'social', { limit: 100 })) as FactMemory[];
    return [...lore, ...social];
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    tenant = await newTenant(database.db, 'lineage');
    a = await populateNpc(system, tenant, 'npc-lineage-a');
    const token = await gameToken(system.app, tenant, [P1]);
    for (const [src, dst] of [[a.npcId, B], [B, C]]) {
      await system.app.inject({ method: 'POST', url: '/v1/consents', headers: bearer(token), payload: { participantId: P1, sourceNpc: src, targetNpc: dst } });
    }
    op1 = await clone(a.npcId, B);
    op2 = await clone(B, C);
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('the clone of a clone points at the clone, and the trace of the first operation reaches both', async () => {
    const c = await visible(C);
    expect(c).toHaveLength(4); // 3 lore + P1's social fact, copied twice
    for (const m of c) expect(m.lineage).toMatchObject({ sourceNpcId: B, operationId: op2 });
    const res = await system.app.inject({ method: 'GET', url: `/v1/clones/${op1}/trace`, headers: bearer(tenant.adminKey) });
    const trace = res.json<TraceResult>();
    expect(trace.operations.sort()).toEqual([op1, op2].sort());
    expect(trace.npcs).toEqual([B, C]);
    expect(trace.rows.filter((r) => r.depth === 0).map((r) => r.npc_id)).toEqual(Array(5).fill(B));
    expect(trace.rows.filter((r) => r.depth === 1).map((r) => r.npc_id)).toEqual(Array(5).fill(C));
    // From one source row: its copy in B and the copy of that copy in C.
    const fromRow = (await system.admin.lineages.trace(tenant.tenantId, { rowId: a.ids.social1! })).rows;
    expect(fromRow.map((r) => [r.depth, r.npc_id, r.tier])).toEqual([[0, B, 'social'], [1, C, 'social']]);
  });

  it('one command invalidates every traced row: gone from retrieval, still traceable, in the ledger', async () => {
    const before = await system.admin.lineages.trace(tenant.tenantId, { operationId: op1 });
    const res = await system.app.inject({ method: 'POST', url: '/v1/lineage/invalidate', headers: bearer(tenant.adminKey), payload: { operationId: op1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().invalidated).toEqual({ lore: 6, social: 2, procedural: 2 });
    expect(await visible(B)).toEqual([]);
    expect(await visible(C)).toEqual([]);
    const found = await system.service.search(scope(C), { text: 'river king bridge cat', k: 20, tiers: ['lore', 'social'] });
    expect(found).toEqual([]);
    // Still there, marked, with lineage: the trace is unchanged.
    const history = (await system.service.list(scope(B), 'lore', { limit: 100, includeHistory: true })) as FactMemory[];
    expect(history).toHaveLength(3);
    for (const m of history) expect(m.invalidatedAt).not.toBeNull();
    expect((await system.admin.lineages.trace(tenant.tenantId, { operationId: op1 })).rows).toEqual(before.rows);
    const { rows } = await database.db.query<{ n: number }>(
      'SELECT count(*) AS n FROM memory.procedural WHERE tenant_id = $1 AND npc_id IN ($2, $3) AND invalidated_at IS NOT NULL',
      [tenant.tenantId, B, C],
    );
    expect(Number(rows[0]!.n)).toBe(2);
    // The cloned personas are gone from retrieval too: C had only the cloned one.
    expect(await system.service.getProcedural(scope(C))).toBeUndefined();
    // NPC-A is untouched.
    expect((await visible(a.npcId)).length).toBe(7); // 4 current lore + 3 social
    const [last] = (await system.admin.ledger.records(tenant.tenantId)).slice(-1);
    expect(last).toMatchObject({ action: 'invalidate', subject: `clone:${op1}`, details: { rows: 10, npcs: [B, C] } });
  });

  it('the ledger holds every procedural change, dry run, commit and invalidation, and verifies', async () => {
    const actions = (await system.admin.ledger.records(tenant.tenantId)).map((r) => r.action);
    expect(actions).toEqual(['procedural_change', 'clone_commit', 'clone_commit', 'invalidate']);
    expect((await system.admin.ledger.verify(tenant.tenantId)).ok).toBe(true);
  });

  it('concurrent clones, dry runs and invalidations keep the ledger linear and valid', async () => {
    const targets = ['npc-par-1', 'npc-par-2', 'npc-par-3', 'npc-par-4'];
    const request = (to: string) => ({ tenantId: tenant.tenantId, sourceNpc: a.npcId, targetNpc: to, actor: 'test' });
    const results = await Promise.all([
      ...targets.map((to) => system.admin.cloner.commit(request(to))),
      ...targets.map((to) => system.admin.cloner.dryRun(request(to))),
      system.admin.cloner.commit(request(B)),
      system.admin.cloner.commit(request(B)), // two clones into one target race for its next procedural version
    ]);
    const ops = results.filter((r) => r.manifest.mode === 'commit').map((r) => r.manifest.operationId);
    const invalidations = await Promise.all(ops.slice(0, 3).map((operationId) => system.admin.lineages.invalidate(tenant.tenantId, { operationId }, 'test', 'all')));
    const seqs = [...results.map((r) => r.ledger.seq), ...invalidations.map((r) => r.ledger.seq)].sort((x, y) => x - y);
    expect(new Set(seqs).size).toBe(seqs.length);
    const report = await system.admin.ledger.verify(tenant.tenantId);
    expect(report).toMatchObject({ ok: true, records: 4 + results.length + invalidations.length });
    const versions = await database.db.query<{ version: number }>('SELECT version FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2 ORDER BY version', [tenant.tenantId, B]);
    expect(versions.rows.map((r) => Number(r.version))).toEqual([1, 2, 3]);
  });

  it('the exported checkpoint catches a ledger cut back to before the invalidation', async () => {
    const exported = await system.app.inject({ method: 'POST', url: '/v1/audit/checkpoints', headers: bearer(tenant.adminKey) });
    expect(exported.statusCode).toBe(201);
    const { seq } = exported.json().checkpoint;
    await database.db.transaction(async (tx) => {
      // On Citus, switching a trigger of a distributed table needs this (a superuser may set it).
      if (onCitus) await tx.query('SET LOCAL citus.enable_unsafe_triggers = on');
      await tx.query('ALTER TABLE memory.audit_ledger DISABLE TRIGGER audit_ledger_no_rewrite');
      await tx.query('DELETE FROM memory.audit_ledger WHERE tenant_id = $1 AND seq > 3', [tenant.tenantId]);
      await tx.query('ALTER TABLE memory.audit_ledger ENABLE TRIGGER audit_ledger_no_rewrite');
    });
    const res = await system.app.inject({ method: 'GET', url: '/v1/audit/verify', headers: bearer(tenant.adminKey) });
    expect(res.json()).toMatchObject({ ok: false, records: 3, problems: [{ kind: 'TRUNCATED', seq, head: 3 }] });
  });
});
