import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { ContextAssembler } from '../../src/memory/context/assemble.js';
import type { Scope } from '../../src/memory/scope.js';
import type { ScoredMemory } from '../../src/memory/service.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { onCitus, openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

/**
 * The hot spot distribution by tenant accepts is one very large tenant. Citus's remedy is to give
 * it a shard of its own (`isolate_tenant_to_new_shard`, every co-located table with it): the
 * service must go on serving that tenant, and every other, with the same policies, unchanged.
 */
describe.skipIf(!onCitus)('a very large tenant moved to a shard of its own', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let keyring: Awaited<ReturnType<typeof tempDir>>;
  let big: Scope;
  let small: Scope;
  const P = ['part-hot00001', 'part-hot00002'];
  const event = (scope: Scope, i: number, text: string) => ({
    gameId: scope.gameId!, roomId: 'vault', npcId: 'npc-mara', participantId: P[i % 2]!, ts: 1_700_000_000 + i, text, targeted: true,
  });
  const shardOf = async (tenantId: string) =>
    (await database.db.query<{ shardid: string; min: string; max: string }>(
      `SELECT s.shardid::text, s.shardminvalue AS min, s.shardmaxvalue AS max FROM pg_dist_shard s
       WHERE s.shardid = get_shard_id_for_distribution_column('memory.social', $1::uuid)`,
      [tenantId],
    )).rows[0]!;

  beforeAll(async () => {
    database = await openTestDatabase();
    keyring = await tempDir('keyring');
    // (The test database closes its own pool.)
    system = await buildMemorySystem({ ...database.db, close: async () => {} }, { keyringDir: keyring.dir, logger: false });
    const [a, b] = [await createTenant(database.db, 'huge-studio'), await createTenant(database.db, 'small-studio')];
    big = { tenantId: a.tenantId, gameId: 'game-hot', npcId: 'npc-mara', participantIds: P, role: 'runtime' };
    small = { ...big, tenantId: b.tenantId };
    await system.service.ingest(big, { idempotencyKey: 'big-seed', events: [event(big, 0, 'I keep bees on a rooftop in Lyon'), event(big, 1, 'the safe code is 7492')] });
    await system.service.ingest(small, { idempotencyKey: 'small-seed', events: [event(small, 0, 'I grew up in Halifax'), event(small, 1, 'the safe code is 1111')] });
    await system.jobs.drain({ tenantId: big.tenantId });
    await system.jobs.drain({ tenantId: small.tenantId });
    // While the service is running, as an operator would.
    await database.db.query("SELECT isolate_tenant_to_new_shard('memory.games', $1::uuid, 'CASCADE', shard_transfer_mode => 'block_writes')", [big.tenantId]);
  }, 120_000);
  afterAll(async () => {
    await system?.close();
    await keyring?.remove();
    await database?.drop();
  });

  it('gives the tenant a shard holding it alone, apart from the others', async () => {
    const own = await shardOf(big.tenantId);
    expect(own.min).toBe(own.max);
    expect((await shardOf(small.tenantId)).shardid).not.toBe(own.shardid);
  });

  it('goes on serving the moved tenant: search, a new line, and a context assembly', async () => {
    expect((await system.service.search(big, { text: 'safe code', k: 5, tiers: ['episodic'] })).map(lineOf)).toContain('the safe code is 7492');
    await system.service.ingest(big, { idempotencyKey: 'big-after', events: [event(big, 2, 'the clock hides the key')] });
    const { window } = await new ContextAssembler(system.service).assemble(big, {
      roomId: 'vault',
      participants: P.map((participantId) => ({ participantId, anonymous: false })),
      messages: [{ seq: 1, speaker: { participantId: P[0]! }, text: '@Mara where is the key?', targeted: true, ts: 1_700_000_100 }],
      state: { version: 1, facts: {} },
    });
    expect(window.contextId).toBeTruthy();
  });

  it('keeps the tenants apart after the move: neither scope sees the other one\'s lines', async () => {
    const texts = async (scope: Scope) => (await system.service.search(scope, { text: 'safe code', k: 10, tiers: ['episodic'] })).map(lineOf);
    expect(await texts(small)).not.toContain('the safe code is 7492');
    expect(await texts(big)).not.toContain('the safe code is 1111');
    expect(await texts(small)).toContain('the safe code is 1111');
  });

  it("puts the tables' policies on the new shards, as on every other shard", async () => {
    const own = await shardOf(big.tenantId);
    const { rows } = await database.db.query<{ result: string }>(
      `SELECT result FROM run_command_on_shards('memory.social',
         $$SELECT string_agg(polname || ':' || polpermissive, ',' ORDER BY polname) FROM pg_policy WHERE polrelid = '%s'::regclass$$)
       WHERE shardid = $1::bigint`,
      [own.shardid],
    );
    const expected = (await database.db.query<{ p: string }>(
      "SELECT string_agg(polname || ':' || polpermissive, ',' ORDER BY polname) AS p FROM pg_policy WHERE polrelid = 'memory.social'::regclass",
    )).rows[0]!.p;
    expect(rows[0]?.result).toBe(expected);
  });
});

/** What an episode said (facts have no line of their own). */
const lineOf = (m: ScoredMemory) => (m.tier === 'episodic' ? m.text : undefined);
