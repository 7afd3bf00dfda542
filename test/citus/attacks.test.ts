import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIER_TABLES, type DurableTier } from '../../src/memory/types.js';
import { citusWorkers, onCitus, openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { buildFixture, type Fixture } from '../helpers/fixture.js';

/**
 * Attacks that exist only on a distributed cluster, made as the runtime role: scope settings that
 * do not travel to the workers, a query without the distribution key, and a connection straight
 * to a worker, past the coordinator. The isolation suites (SQL, HTTP, property-based, mutation)
 * run on the same cluster besides (`npm run test:citus`).
 */
const TIERS = ['episodic', 'clue', 'social', 'lore', 'fragment'] as const satisfies readonly DurableTier[];
const TABLES = TIERS.map((tier) => TIER_TABLES[tier].table.replace(/^memory\./, ''));

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const count = async (c: pg.Client, sql: string, params: unknown[] = []) => Number((await c.query(sql, params)).rows[0].n);

describe.skipIf(!onCitus)('isolation attacks peculiar to Citus, as the runtime role', () => {
  let database: TestDatabase;
  let fixture: Fixture;
  let tenantA: string;
  let tenantB: string;

  beforeAll(async () => {
    database = await openTestDatabase();
    fixture = await buildFixture(database.db);
    [tenantA, tenantB] = fixture.tenants.map((t) => t.tenantId) as [string, string];
  });
  afterAll(async () => {
    await fixture?.cleanup();
    await database?.drop();
  });

  /** The fixture's rows of a tier that a scope of (tenant, game alpha, npc-mara, every participant) may see. */
  const ownRows = (tenantId: string, tier: (typeof TIERS)[number]) =>
    fixture.rows.filter((r) => r.tier === tier && r.tenantId === tenantId && r.npcId === 'npc-mara' && (r.gameId === undefined || r.gameId === 'alpha')).length;

  const scopeOf = (tenantId: string) => [
    "SET LOCAL role = 'memory_runtime'",
    `SET LOCAL memory.tenant = '${tenantId}'`,
    "SET LOCAL memory.game = 'alpha'",
    "SET LOCAL memory.npc = 'npc-mara'",
    "SET LOCAL memory.participants = 'part-aaaa1111,part-bbbb2222,part-cccc3333'",
  ];

  it('has rows of both tenants on the workers, so that the attacks below had something to find', async () => {
    for (const tier of TIERS) {
      expect(ownRows(tenantA, tier), tier).toBeGreaterThan(0);
      expect(ownRows(tenantB, tier), tier).toBeGreaterThan(0);
    }
    const { rows } = await database.db.query<{ nodes: number }>(
      "SELECT count(DISTINCT nodename || nodeport)::int AS nodes FROM citus_shards WHERE table_name = 'memory.social'::regclass AND shard_size >= 0",
    );
    expect(rows[0]!.nodes).toBe(citusWorkers.length);
  });

  it('finds on every shard the policies of its table on the coordinator, permissive and restrictive alike', async () => {
    const policies = `SELECT regexp_replace(c.relname, '_[0-9]+$', '') AS tbl, p.polname, p.polpermissive, p.polcmd,
                             (SELECT array_agg(r.rolname ORDER BY r.rolname) FROM pg_roles r WHERE r.oid = ANY (p.polroles)) AS roles
                      FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'memory'`;
    const key = (r: Record<string, unknown>) => `${String(r.tbl)}|${String(r.polname)}|${String(r.polpermissive)}|${String(r.polcmd)}|${String(r.roles)}`;
    const coordinator = new Set((await database.db.query(policies)).rows.map(key));
    expect(coordinator.size).toBeGreaterThan(0);
    for (const workerUrl of citusWorkers) {
      const url = new URL(workerUrl);
      url.pathname = new URL(database.url!).pathname;
      await withClient(url.toString(), async (c) => {
        await c.query('SET citus.override_table_visibility = off');
        const onShards = (await c.query(`${policies} WHERE c.relname ~ '_[0-9]+$'`)).rows.map(key);
        expect(onShards.length).toBeGreaterThan(0);
        expect(onShards.filter((k) => !coordinator.has(k))).toEqual([]);
      });
    }
  });

  it('shows a scope set with a session-level SET nothing: the setting never reaches the workers', async () => {
    await withClient(database.url!, async (c) => {
      await c.query('SET ROLE memory_runtime');
      await c.query(`SET memory.tenant = '${tenantA}'`);
      await c.query("SET memory.game = 'alpha'");
      await c.query("SET memory.npc = 'npc-mara'");
      await c.query("SET memory.participants = 'part-aaaa1111,part-bbbb2222,part-cccc3333'");
      for (const table of TABLES) {
        expect(await count(c, `SELECT count(*) AS n FROM memory.${table} WHERE tenant_id = $1`, [tenantA]), table).toBe(0);
      }
    });
  });

  it('lets a query without the distribution key reach every shard but still shows only the scope own rows', async () => {
    await withClient(database.url!, async (c) => {
      for (const [i, tier] of TIERS.entries()) {
        const table = TABLES[i]!;
        await c.query('BEGIN');
        for (const s of scopeOf(tenantA)) await c.query(s);
        const plan = JSON.stringify((await c.query(`EXPLAIN (FORMAT JSON) SELECT * FROM memory.${table}`)).rows);
        expect(Number(/"Task Count":\s*(\d+)/.exec(plan)![1]), table).toBeGreaterThan(1);
        expect(await count(c, `SELECT count(*) AS n FROM memory.${table}`), table).toBe(ownRows(tenantA, tier));
        expect(await count(c, `SELECT count(*) AS n FROM memory.${table} WHERE tenant_id <> $1`, [tenantA]), table).toBe(0);
        await c.query('COMMIT');
      }
    });
  });

  it('refuses a connection straight to a worker anything the scope it sets does not cover, on the tables and on their shards', async () => {
    const { dbname } = { dbname: new URL(database.url!).pathname.slice(1) };
    for (const workerUrl of citusWorkers) {
      const url = new URL(workerUrl);
      url.pathname = `/${dbname}`;
      url.username = 'memory_runtime';
      await withClient(url.toString(), async (c) => {
        // Citus hides shards from pg_class for ordinary sessions; an attacker would not be fooled.
        await c.query('SET citus.override_table_visibility = off');
        const shards = (await c.query<{ shard: string; tier: string }>(
          `SELECT c.relname AS shard, t.tier FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'memory'
             JOIN unnest($1::text[]) t(tier) ON c.relname ~ ('^' || t.tier || '_[0-9]+$') WHERE c.relkind = 'r'`,
          [TABLES],
        )).rows;
        expect(shards.length).toBeGreaterThan(0);
        // No scope: nothing, through the distributed table or any shard.
        for (const table of TABLES) expect(await count(c, `SELECT count(*) AS n FROM memory.${table}`), table).toBe(0);
        for (const { shard } of shards) expect(await count(c, `SELECT count(*) AS n FROM memory.${shard}`), shard).toBe(0);
        // Tenant A's scope: nothing of tenant B on any shard of this worker.
        await c.query('BEGIN');
        for (const s of scopeOf(tenantA)) await c.query(s);
        for (const { shard } of shards) {
          expect(await count(c, `SELECT count(*) AS n FROM memory.${shard} WHERE tenant_id = $1`, [tenantB]), shard).toBe(0);
        }
        await c.query('COMMIT');
        // And it cannot switch the policies off: it owns no shard.
        await expect(c.query(`ALTER TABLE memory.${shards[0]!.shard} DISABLE ROW LEVEL SECURITY`)).rejects.toThrow(/must be owner/);
        await expect(c.query(`SET ROLE postgres`)).rejects.toThrow(/permission denied/);
      });
    }
  });
});
