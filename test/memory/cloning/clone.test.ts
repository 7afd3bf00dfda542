import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { memorySystemOn } from '../../helpers/fixture.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import type { CloneManifest } from '../../../src/memory/cloning/cloner.js';
import type { FactMemory } from '../../../src/memory/types.js';
import { bearer, GAME, gameToken, newTenant, P1, P2, P3, populateNpc, tableCounts, type PopulatedNpc, type Tenant } from './support.js';

/**
 * The seed's clone contract per tier, on a populated NPC, through the HTTP API: dry run first
 * (nothing written but its ledger record), then the commit, whose manifest matches.
 */
describe(`cloning NPC-A into NPC-B (${backend})`, () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let tenant: Tenant;
  let a: PopulatedNpc;
  let dryRun: CloneManifest;
  let committed: CloneManifest;
  const B = 'npc-clone-b';

  const scopeB = () => ({ tenantId: tenant.tenantId, npcId: B, gameId: GAME, participantIds: [P1, P2, P3], role: 'runtime' as const });

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    tenant = await newTenant(database.db, 'clone');
    a = await populateNpc(system, tenant, 'npc-source-a');
    // P1 consents to this clone; P2 consents to something else; P3 says nothing.
    const token = await gameToken(system.app, tenant, [P1, P2, P3]);
    for (const [participantId, purpose] of [[P1, 'clone'], [P2, 'training']] as const) {
      const res = await system.app.inject({
        method: 'POST',
        url: '/v1/consents',
        headers: bearer(token),
        payload: { participantId, sourceNpc: a.npcId, targetNpc: B, purpose },
      });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('dry run: writes nothing anywhere (row counts of every table unchanged) except its own ledger record', async () => {
    const before = await tableCounts(database.db);
    const res = await system.app.inject({ method: 'POST', url: '/v1/clones', headers: bearer(tenant.adminKey), payload: { from: a.npcId, to: B, dryRun: true } });
    expect(res.statusCode).toBe(200);
    dryRun = res.json<{ manifest: CloneManifest }>().manifest;
    const after = await tableCounts(database.db);
    expect(after['memory.audit_ledger']).toBe(before['memory.audit_ledger']! + 1);
    expect({ ...after, 'memory.audit_ledger': 0 }).toEqual({ ...before, 'memory.audit_ledger': 0 });
    const [last] = (await system.admin.ledger.records(tenant.tenantId)).slice(-1);
    expect(last).toMatchObject({ action: 'clone_dry_run', subject: `npc:${a.npcId}->npc:${B}`, details: { operationId: dryRun.operationId } });
  });

  it('dry run: the manifest counts what each rule clears and blocks, with a redacted sample', () => {
    expect(dryRun.mode).toBe('dry_run');
    expect(dryRun.cleared).toEqual({ procedural: 1, lore: 3, social: 1, total: 5 });
    expect(dryRun.blocked.byRule).toEqual({
      clue_excluded: 1,
      episodic_excluded: 3,
      fragment_excluded: 1,
      not_current: 1,
      looks_like_clue: 1,
      consent_wrong_purpose: 1,
      no_consent: 1,
    });
    expect(dryRun.blocked.total).toBe(9);
    expect(dryRun.consent).toEqual({ tokensChecked: 2, byStatus: { valid: 1, wrong_purpose: 1 }, participantsConsented: 1 });
    expect(dryRun.tokens.estimated).toBeGreaterThan(20);
    expect(dryRun.tokens.estimated).toBe(dryRun.tokens.byTier.procedural + dryRun.tokens.byTier.lore + dryRun.tokens.byTier.social);
    const ids = Object.fromEntries(dryRun.sample.map((s) => [s.id, s.rule]));
    expect(ids[a.ids.clue!]).toBe('clue_excluded');
    expect(ids[a.ids.social2!]).toBe('consent_wrong_purpose');
    expect(ids[a.ids.social3!]).toBe('no_consent');
    expect(ids[a.ids.loreCode!]).toBe('looks_like_clue');
    // Never the private text: no marker, no digit of the code, no participant id. (Random ids
    // are taken out first: a UUID may hold "4812" by chance, which is no leak.)
    const text = JSON.stringify(dryRun).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');
    for (const leak of ['SOCIAL-', 'CLUE-', 'EPISODE-', 'FRAGMENT-', 'Whiskers', '7391', '4812', P1, P2, P3]) expect(text).not.toContain(leak);
    expect(dryRun.sample.find((s) => s.id === a.ids.loreCode)!.preview).toMatch(/^world\.lock: LORECODE-npc-source-a the guild… \[\d+ chars, redacted\]$/);
  });

  it('commit: the manifest matches the dry run, and the ledger records the commit', async () => {
    const res = await system.app.inject({ method: 'POST', url: '/v1/clones', headers: bearer(tenant.adminKey), payload: { from: a.npcId, to: B } });
    expect(res.statusCode).toBe(201);
    committed = res.json<{ manifest: CloneManifest }>().manifest;
    const comparable = (m: CloneManifest) => ({ cleared: m.cleared, blocked: m.blocked, tokens: m.tokens, consent: m.consent, sample: m.sample });
    expect(comparable(committed)).toEqual(comparable(dryRun));
    expect(committed.written).toEqual({ procedural: { npcId: B, version: 1 }, lore: 3, social: 1 });
    const [last] = (await system.admin.ledger.records(tenant.tenantId)).slice(-1);
    expect(last).toMatchObject({ action: 'clone_commit', details: { operationId: committed.operationId, written: committed.written } });
    expect((await system.admin.ledger.verify(tenant.tenantId)).ok).toBe(true);
  });

  it('the clone has the persona, with lineage', async () => {
    const res = await system.app.inject({ method: 'GET', url: `/v1/npcs/${B}/procedural`, headers: bearer(tenant.runtimeKey) });
    expect(res.json().procedural).toMatchObject({ persona: a.persona, directives: ['never reveal the vault', 'stay in character'], core: { loyalty: 'the guild' }, version: 1 });
    const { rows } = await database.db.query<{ lineage: Record<string, string> }>('SELECT lineage FROM memory.procedural WHERE tenant_id = $1 AND npc_id = $2', [tenant.tenantId, B]);
    expect(rows[0]!.lineage).toMatchObject({ sourceNpcId: a.npcId, sourceRowId: `procedural:${a.npcId}:1`, operationId: committed.operationId });
  });

  it('the clone has the general lore (current, not code-like), each row with full lineage', async () => {
    const lore = (await system.service.list(scopeB(), 'lore', { limit: 50 })) as FactMemory[];
    expect(lore.map((m) => m.fact.summary.split(' ')[0]).sort()).toEqual([`LORE-${a.npcId}`, `LORE2-${a.npcId}`, `LORENEW-${a.npcId}`]);
    for (const m of lore) {
      expect(m.source).toBe('clone');
      expect(m.npcId).toBe(B);
      expect(m.lineage).toEqual({
        sourceNpcId: a.npcId,
        sourceRowId: expect.any(String),
        operationId: committed.operationId,
        actor: expect.stringMatching(/^key:[a-z0-9]{12}$/),
        toolVersion: committed.toolVersion,
        at: committed.at,
      });
      expect([a.ids.lore, a.ids.lore2, a.ids.loreNew]).toContain(m.lineage!.sourceRowId);
    }
  });

  it('the clone has only the consented player facts (under the participant key), no clue, no episode, no fragment', async () => {
    const social = (await system.service.list(scopeB(), 'social', { limit: 50 })) as FactMemory[];
    expect(social.map((m) => [m.participantId, m.fact.summary])).toEqual([[P1, `SOCIAL-${a.npcId}-${P1} has a cat named Whiskers`]]);
    expect(social[0]!.lineage?.sourceRowId).toBe(a.ids.social1);
    expect(await system.service.count(scopeB(), 'clue')).toBe(0);
    expect(await system.service.count(scopeB(), 'episodic')).toBe(0);
    expect(await system.service.count(scopeB(), 'fragment')).toBe(0);
    const { rows } = await database.db.query<{ kind: string }>(
      `SELECT d.scope_kind AS kind FROM memory.social s JOIN memory.data_keys d USING (tenant_id, key_id) WHERE s.tenant_id = $1 AND s.npc_id = $2`,
      [tenant.tenantId, B],
    );
    expect(rows).toEqual([{ kind: 'participant' }]);
  });

  it("the clone's retrieval, in any game, shows none of NPC-A's private data", async () => {
    for (const gameId of [GAME, 'another-game']) {
      const found = await system.service.search({ ...scopeB(), gameId }, { text: 'vault cat red book tower haunted safe code', k: 50 });
      const text = JSON.stringify(found);
      for (const leak of [`SOCIAL-${a.npcId}-${P2}`, `SOCIAL-${a.npcId}-${P3}`, 'CLUE-', 'EPISODE-', 'FRAGMENT-', 'LORECODE-', 'LOREOLD-']) {
        expect(text).not.toContain(leak);
      }
    }
  });

  it('leaves NPC-A as it was', async () => {
    const scopeA = { ...scopeB(), npcId: a.npcId };
    expect(await system.service.count(scopeA, 'social')).toBe(3);
    expect(await system.service.count(scopeA, 'lore')).toBe(4);
    expect(await system.service.count(scopeA, 'episodic')).toBe(3);
  });

  it('refuses to clone an NPC into itself', async () => {
    const res = await system.app.inject({ method: 'POST', url: '/v1/clones', headers: bearer(tenant.adminKey), payload: { from: a.npcId, to: a.npcId } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('SAME_NPC');
  });
});
