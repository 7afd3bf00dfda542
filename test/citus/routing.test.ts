import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { ContextAssembler } from '../../src/memory/context/assemble.js';
import type { Database, Tx } from '../../src/memory/db/types.js';
import type { Scope } from '../../src/memory/scope.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { migrate } from '../../src/memory/db/migrate.js';
import { onCitus, openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

/**
 * Every statement the memory service sends on its hot paths, replayed as `EXPLAIN` with the
 * settings it ran under (so as the runtime role, with its scope), must be answered by at most one
 * shard: the distribution key is in its WHERE clause, not only in the policy (row-level security
 * alone does not prune shards, citusdata/citus#7415).
 */
type Recorded =
  | { kind: 'query'; settings: string[]; text: string; params: readonly unknown[] }
  | { kind: 'batch'; script: string; prepare: readonly { name: string; text: string }[]; settings?: readonly string[] };

/** The database, with every statement sent through it written down (and the SET LOCAL scripts each ran under). */
function recording(db: Database): { db: Database; log: Recorded[] } {
  const log: Recorded[] = [];
  const wrapTx = (tx: Tx, opening: readonly string[]): Tx => {
    const settings: string[] = opening.length > 0 ? [opening.join(';\n')] : [];
    return {
      async exec(script) {
        if (/^\s*SET LOCAL/.test(script)) settings.push(script);
        return tx.exec(script);
      },
      async query(text, params = []) {
        log.push({ kind: 'query', settings: [...settings], text, params });
        return tx.query(text, params);
      },
    };
  };
  const wrapped: Database = {
    backend: db.backend,
    query: (text, params) => db.query(text, params),
    exec: (script) => db.exec(script),
    close: async () => {}, // the test database closes the pool
    transaction: (fn, settings = []) => db.transaction((tx) => fn(wrapTx(tx, settings)), settings),
    async batch(script, prepare = [], settings = []) {
      log.push({ kind: 'batch', script, prepare, settings });
      return db.batch(script, prepare, settings);
    },
  };
  return { db: wrapped, log };
}

/** The number of shards each distributed step of a plan goes to. */
function taskCounts(plan: unknown): number[] {
  const counts: number[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'Task Count' && typeof value === 'number') counts.push(value);
        else walk(value);
      }
    }
  };
  walk(plan);
  return counts;
}

const explained = (rows: Record<string, unknown>[]) => rows[0]!['QUERY PLAN'];

/** A bound value as an SQL literal, for EXPLAIN EXECUTE (test-only: the service binds its values). */
function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Uint8Array) return `'\\x${Buffer.from(value).toString('hex')}'`;
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  if (Array.isArray(value)) return pg.escapeLiteral(`{${value.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`);
  return pg.escapeLiteral(String(value));
}

/**
 * EXPLAIN of a statement with these values inlined (as Citus plans it for them: it cannot explain
 * a statement whose parameters it would send to a worker untyped), under these settings.
 */
async function explain(db: Database, settings: readonly string[], text: string, args: readonly string[]): Promise<number[]> {
  const inlined = text.replace(/\$(\d+)/g, (_, n: string) => `(${args[Number(n) - 1]!})`);
  return db.transaction(async (tx) => {
    for (const s of settings) await tx.exec(s);
    return taskCounts(explained((await tx.query(`EXPLAIN (FORMAT JSON) ${inlined}`)).rows));
  });
}

/** Replays what was recorded as EXPLAIN, under the settings it ran with; the shard counts per statement. */
async function explainAll(db: Database, log: readonly Recorded[]): Promise<{ statement: string; tasks: number[] }[]> {
  const out: { statement: string; tasks: number[] }[] = [];
  for (const entry of log) {
    if (entry.kind === 'query') {
      if (!/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(entry.text) || entry.settings.length === 0) continue;
      out.push({ statement: entry.text, tasks: await explain(db, entry.settings, entry.text, entry.params.map(sqlLiteral)) });
    } else {
      for (const execute of entry.script.split(';\n')) {
        const [, name, args] = /^\s*EXECUTE (\w+)(?:\((.*)\))?\s*$/s.exec(execute)!;
        const statement = entry.prepare.find((p) => p.name === name)!;
        // The EXECUTE's own arguments are literals already (literal() in the service).
        const values = args ? splitArgs(args) : [];
        out.push({ statement: statement.text, tasks: await explain(db, entry.settings ?? [], statement.text, values) });
      }
    }
  }
  return out;
}

/** The top-level comma-separated arguments of an EXECUTE (literals are quoted and never contain a quote). */
function splitArgs(args: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of args) {
    if (ch === "'") quoted = !quoted;
    if (ch === ',' && !quoted) {
      out.push(current.trim());
      current = '';
    } else current += ch;
  }
  out.push(current.trim());
  return out;
}

describe.skipIf(!onCitus)('every hot query on Citus routes to one shard', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let recorded: ReturnType<typeof recording>;
  let keyring: Awaited<ReturnType<typeof tempDir>>;
  let scope: Scope;
  const P = ['part-route0001', 'part-route0002'];

  beforeAll(async () => {
    database = await openTestDatabase();
    keyring = await tempDir('keyring');
    recorded = recording(database.db);
    system = await buildMemorySystem(recorded.db, { keyringDir: keyring.dir, logger: false });
    // Several tenants, so that their rows are spread over the shards.
    for (let i = 0; i < 6; i++) await createTenant(database.db, `other-studio-${i}`);
    const { tenantId } = await createTenant(database.db, 'routing-studio');
    scope = { tenantId, gameId: 'game-route', npcId: 'npc-mara', participantIds: P, role: 'runtime' };
    await system.service.ingest(scope, {
      idempotencyKey: 'seed',
      events: ['@Mara I keep bees on a rooftop in Lyon', "I'm terrified of spiders", 'the safe code is 7492'].map((text, i) => ({
        gameId: 'game-route', roomId: 'vault', npcId: 'npc-mara', participantId: P[i % 2]!, ts: 1_700_000_000 + i, text, targeted: true,
      })),
    });
    await system.jobs.drain({ tenantId });
  });
  afterAll(async () => {
    await system?.close();
    await keyring?.remove();
    await database?.drop();
  });

  it('distributes every memory table by tenant, except the reference tables and the coordinator-local queue', async () => {
    const { rows } = await database.db.query<{ table_name: string; citus_table_type: string; distribution_column: string }>(
      "SELECT table_name::text, citus_table_type, distribution_column FROM citus_tables WHERE table_name::text LIKE 'memory.%' ORDER BY 1",
    );
    const byType = (type: string) => rows.filter((r) => r.citus_table_type === type).map((r) => r.table_name);
    expect(byType('reference').sort()).toEqual(['memory.api_keys', 'memory.tenants']);
    expect(byType('local')).toEqual(['memory.jobs']);
    expect(byType('distributed')).toEqual(expect.arrayContaining(['memory.episodic', 'memory.clues', 'memory.social', 'memory.lore', 'memory.fragments', 'memory.games', 'memory.data_keys']));
    expect(rows.filter((r) => r.citus_table_type === 'distributed').every((r) => r.distribution_column === 'tenant_id')).toBe(true);
  });

  const paths: [string, () => Promise<unknown>][] = [
    ['an ingest', () => system.service.ingest(scope, { idempotencyKey: `again-${Math.random()}`, events: [{ gameId: 'game-route', roomId: 'vault', npcId: 'npc-mara', participantId: P[0]!, ts: 1_700_000_100, text: 'my sister Ada lives in Oslo', targeted: true }] })],
    ['a search', () => system.service.search(scope, { text: 'what does she keep on the roof', k: 10 })],
    ['a GET by id', async () => {
      const [hit] = await system.service.search(scope, { text: 'safe code', k: 1, tiers: ['episodic'] });
      return system.service.get(scope, hit!.id);
    }],
    ['a context assembly', () => new ContextAssembler(system.service).assemble(scope, {
      roomId: 'vault',
      participants: P.map((participantId) => ({ participantId, anonymous: false })),
      messages: [{ seq: 1, speaker: { participantId: P[0]! }, text: '@Mara where do I live?', targeted: true, ts: 1_700_000_200 }],
      state: { version: 1, facts: {} },
    })],
  ];

  for (const [name, path] of paths) {
    it(`answers ${name} from one shard: every statement it sends, explained as the runtime role, has one task`, async () => {
      recorded.log.length = 0;
      await path();
      const plans = await explainAll(database.db, recorded.log);
      expect(plans.length).toBeGreaterThan(0);
      // Statements on distributed tables show a task count; each must be 1.
      expect(plans.some((p) => p.tasks.length > 0)).toBe(true);
      const spread = plans.filter((p) => p.tasks.some((n) => n > 1));
      expect(spread.map((p) => p.statement)).toEqual([]);
    });
  }

  it('would see a query without the distribution key go to every shard (so the check above can fail)', async () => {
    const plan = await database.db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL role = 'memory_runtime'; SET LOCAL memory.tenant = '${scope.tenantId}'; SET LOCAL memory.npc = 'npc-mara'; SET LOCAL memory.participants = '${P.join(',')}'`);
      return explained((await tx.query('EXPLAIN (FORMAT JSON) SELECT id FROM memory.social WHERE npc_id = $1', ['npc-mara'])).rows);
    });
    expect(Math.max(...taskCounts(plan))).toBeGreaterThan(1);
  });

  it("asks whether the game is still open once per statement on the shard, not for every row it scans", async () => {
    const plan = await database.db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL role = 'memory_runtime'; SET LOCAL memory.tenant = '${scope.tenantId}'; SET LOCAL memory.game = 'game-route'; SET LOCAL memory.npc = 'npc-mara'`);
      const { rows } = await tx.query(
        'EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM memory.episodic WHERE tenant_id = $1 AND game_id = $2 AND npc_id = $3',
        [scope.tenantId, 'game-route', 'npc-mara'],
      );
      return JSON.stringify(explained(rows));
    });
    // The shard's plan: the check in a one-time filter (run once), none in the scan's per-row filter.
    const filters = [...plan.matchAll(/"(One-Time Filter|Filter)":\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => ({ kind: m[1], text: m[2]! }));
    expect(filters.filter((f) => f.text.includes('open_game')).map((f) => f.kind)).toEqual(['One-Time Filter']);
  });

  it('lets a second replica start on the same cluster: the profile is applied again, changing nothing', async () => {
    const snapshot = async () =>
      (await database.db.query<{ t: string }>(
        `SELECT string_agg(format('%s %s %s %s', tablename, policyname, qual, with_check), E'\\n' ORDER BY tablename, policyname) AS t FROM pg_policies WHERE schemaname = 'memory'`,
      )).rows[0]!.t + (await database.db.query<{ t: string }>("SELECT string_agg(format('%s %s', logicalrelid, partmethod), ',' ORDER BY logicalrelid::text) AS t FROM pg_dist_partition")).rows[0]!.t;
    const before = await snapshot();
    // The first service's pool stays open, as a running replica's would.
    await system.service.search(scope, { text: 'bees', k: 1 });
    await migrate(database.db);
    expect(await snapshot()).toBe(before);
    expect(await system.service.search(scope, { text: 'bees', k: 1 })).toHaveLength(1);
  }, 30_000);
});
