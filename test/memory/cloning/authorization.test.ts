import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, onCitus, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { memorySystemOn } from '../../helpers/fixture.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import { createAdminPrincipal } from '../../../src/memory/admin/principals.js';
import { revokePrincipal } from '../../../src/memory/admin/store.js';
import { inScope } from '../../../src/memory/scope.js';
import { bearer, gameToken, newTenant, P1, populateNpc, tableCounts, type PopulatedNpc, type Tenant } from './support.js';

/** Every admin action refused without its attribute, and across tenants; nothing changes when refused. */
describe(`admin principals with attributes (${backend})`, () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let one: Tenant;
  let two: Tenant;
  let a: PopulatedNpc;
  let operationId: string;
  const B = 'npc-authz-b';

  const principal = async (tenant: Tenant, npcs: string[], actions: Parameters<typeof createAdminPrincipal>[2]['actions']) =>
    (await createAdminPrincipal(database.db, tenant.tenantId, { name: 'test principal', npcs, actions })).key;
  const inject = (key: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    system.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  /** Every admin request, as this key; each must be refused with `code` and change no row anywhere. */
  const refusedEverything = async (key: string, code: string) => {
    const before = await tableCounts(database.db);
    const requests: [string, 'GET' | 'POST' | 'PUT', string, object?][] = [
      ['dry run', 'POST', '/v1/clones', { from: a.npcId, to: B, dryRun: true }],
      ['clone', 'POST', '/v1/clones', { from: a.npcId, to: B }],
      ['trace', 'GET', `/v1/clones/${operationId}/trace`],
      ['invalidate', 'POST', '/v1/lineage/invalidate', { operationId }],
      ['ledger records', 'GET', '/v1/audit/records'],
      ['verify', 'GET', '/v1/audit/verify'],
      ['checkpoint', 'POST', '/v1/audit/checkpoints'],
      ['procedural', 'PUT', `/v1/npcs/${a.npcId}/procedural`, { persona: 'a liar', directives: [], core: {} }],
    ];
    for (const [what, method, url, payload] of requests) {
      const res = await inject(key, method, url, payload);
      expect({ what, status: res.statusCode, code: res.json().error?.code }).toEqual({ what, status: 403, code });
    }
    expect(await tableCounts(database.db)).toEqual(before);
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    one = await newTenant(database.db, 'authz-one');
    two = await newTenant(database.db, 'authz-two');
    a = await populateNpc(system, one, 'npc-authz-a');
    const res = await inject(one.adminKey, 'POST', '/v1/clones', { from: a.npcId, to: B });
    expect(res.statusCode).toBe(201);
    operationId = res.json().manifest.operationId;
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('refuses every admin action to a principal with no attribute for it (403 ATTRIBUTE_REQUIRED), and nothing happens', async () => {
    await refusedEverything(await principal(one, ['*'], ['erase', 'end_game']), 'ATTRIBUTE_REQUIRED');
  });

  it('refuses a principal whose attributes name other NPCs', async () => {
    const key = await principal(one, ['npc-someone-else'], ['clone', 'invalidate', 'write_procedural']);
    const before = await tableCounts(database.db);
    for (const [method, url, payload] of [
      ['POST', '/v1/clones', { from: a.npcId, to: B, dryRun: true }],
      ['POST', '/v1/lineage/invalidate', { operationId }],
      ['PUT', `/v1/npcs/${a.npcId}/procedural`, { persona: 'x', directives: [], core: {} }],
    ] as const) {
      const res = await inject(key, method, url, payload);
      expect([res.statusCode, res.json().error.code]).toEqual([403, 'ATTRIBUTE_REQUIRED']);
    }
    expect(await tableCounts(database.db)).toEqual(before);
  });

  it('needs "clone" on both the source and the target', async () => {
    const onlySource = await principal(one, [a.npcId], ['clone']);
    const res = await inject(onlySource, 'POST', '/v1/clones', { from: a.npcId, to: 'npc-new-target', dryRun: true });
    expect([res.statusCode, res.json().error.code]).toEqual([403, 'ATTRIBUTE_REQUIRED']);
    const both = await principal(one, [a.npcId, 'npc-new-target'], ['clone']);
    expect((await inject(both, 'POST', '/v1/clones', { from: a.npcId, to: 'npc-new-target', dryRun: true })).statusCode).toBe(200);
  });

  it('refuses runtime keys and game tokens (403 ADMIN_KEY_REQUIRED) and revoked principals', async () => {
    const token = await gameToken(system.app, one, [P1]);
    for (const key of [one.runtimeKey, token]) {
      const res = await inject(key, 'POST', '/v1/clones', { from: a.npcId, to: B, dryRun: true });
      expect([res.statusCode, res.json().error.code]).toEqual([403, 'ADMIN_KEY_REQUIRED']);
    }
    const key = await principal(one, ['*'], ['audit']);
    expect((await inject(key, 'GET', '/v1/audit/verify')).statusCode).toBe(200);
    await revokePrincipal(database.db, key.split('_')[1]!);
    expect((await inject(key, 'GET', '/v1/audit/verify')).json().error.code).toBe('ATTRIBUTE_REQUIRED');
  });

  it('a narrow principal can write procedural memory of its own NPC, and the ledger records who', async () => {
    const key = await principal(one, [a.npcId], ['write_procedural']);
    const res = await inject(key, 'PUT', `/v1/npcs/${a.npcId}/procedural`, { persona: 'new persona', directives: [], core: {} });
    expect(res.statusCode).toBe(201);
    const [last] = (await system.admin.ledger.records(one.tenantId)).slice(-1);
    expect(last).toMatchObject({ action: 'procedural_change', actor: `key:${key.split('_')[1]}`, subject: `npc:${a.npcId}`, details: { version: res.json().procedural.version } });
  });

  it('makes a clone across tenants impossible: another tenant finds nothing to clone, cannot name a tenant, cannot trace', async () => {
    const before = await tableCounts(database.db);
    const res = await inject(two.adminKey, 'POST', '/v1/clones', { from: a.npcId, to: B });
    expect([res.statusCode, res.json().error.code]).toEqual([404, 'SOURCE_NOT_FOUND']);
    const named = await inject(two.adminKey, 'POST', '/v1/clones', { from: a.npcId, to: B, tenantId: one.tenantId });
    expect([named.statusCode, named.json().error.code]).toEqual([400, 'UNKNOWN_FIELD']);
    const trace = await inject(two.adminKey, 'GET', `/v1/clones/${operationId}/trace`);
    expect([trace.statusCode, trace.json().error.code]).toEqual([404, 'OPERATION_NOT_FOUND']);
    const invalidate = await inject(two.adminKey, 'POST', '/v1/lineage/invalidate', { operationId });
    expect(invalidate.statusCode).toBe(404);
    expect(await tableCounts(database.db)).toEqual(before);
    // At the SQL level: the admin role scoped to tenant two sees none of tenant one's rows.
    const seen = await inScope(database.db, { tenantId: two.tenantId, npcId: a.npcId, role: 'admin' }, async (tx) => {
      let n = 0;
      for (const t of ['social', 'lore', 'fragments', 'clues', 'episodic', 'procedural', 'clone_operations', 'clone_rows', 'audit_ledger', 'consents']) {
        n += Number((await tx.query<{ n: number }>(`SELECT count(*) AS n FROM memory.${t}`)).rows[0]!.n);
      }
      return n;
    });
    expect(seen).toBe(0);
  });

  it('a principal can never carry another tenant: the foreign key binds it to its key\'s tenant', async () => {
    const key = await principal(one, ['*'], ['audit']);
    // Refused by the foreign key; on Citus already by the distribution (a row never changes tenant).
    await expect(
      database.db.query("UPDATE memory.admin_principals SET tenant_id = $1 WHERE key_id = $2", [two.tenantId, key.split('_')[1]]),
    ).rejects.toMatchObject(onCitus ? { message: expect.stringMatching(/modifying the partition value/) } : { code: '23503' });
  });
});
