import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { literal, prepared } from '../../src/memory/db/literal.js';
import type { Scope } from '../../src/memory/scope.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { onCitus, openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('the read path runs prepared statements', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let keyring: { dir: string; remove(): Promise<void> };
  let scope: Scope;

  beforeAll(async () => {
    database = await openTestDatabase();
    keyring = await tempDir('keyring');
    system = await buildMemorySystem(database.db, { keyringDir: keyring.dir, logger: false });
    const { tenantId } = await createTenant(database.db, 'prepared-studio');
    scope = { tenantId, gameId: 'game-alpha', npcId: 'npc-mara', role: 'runtime' };
    await system.service.ingest(scope, {
      idempotencyKey: 'seed',
      events: ['the safe code is 7492', 'the clock stopped at midnight', 'the ledger is in the cellar'].map((text, i) => ({
        gameId: 'game-alpha', roomId: 'vault', npcId: 'npc-mara', participantId: 'part-aaaa1111', ts: 1_700_000_000 + i, text, targeted: true,
      })),
    });
  });
  afterAll(async () => {
    await system?.app.close();
    await keyring?.remove();
    await database?.drop();
  });

  const search = () => system.service.search(scope, { text: 'safe code', k: 10, tiers: ['episodic'] });
  // Sequential calls reuse the same pooled connection (pg-pool hands out the last idle one).
  const preparedHere = () => database.db.batch(`SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'q\\_%'`);

  it('plans the scoped search with its policies once per connection, then reuses a generic plan', async () => {
    for (let i = 0; i < 8; i++) expect(await search()).toHaveLength(3);
    const [rows] = await preparedHere();
    const runs = rows!.map((r) => ({ generic: Number(r.generic_plans), custom: Number(r.custom_plans) }));
    expect(runs.some((r) => r.generic >= 1 && r.custom + r.generic >= 8)).toBe(true);
  });

  it('lets a tightened policy take effect on statements already prepared and planned', async () => {
    expect(await search()).toHaveLength(3);
    await database.db.exec(`ALTER POLICY episodic_scope ON memory.episodic USING (false)`);
    expect(await search()).toHaveLength(0);
  });

  it('re-checks the game-end rule at every execution, not once per plan', async () => {
    const other: Scope = { ...scope, gameId: 'game-beta' };
    await system.service.ingest(other, {
      idempotencyKey: 'beta',
      events: [{ gameId: 'game-beta', roomId: 'vault', npcId: 'npc-mara', participantId: 'part-aaaa1111', ts: 1_700_000_100, text: 'the safe code is 1234', targeted: true }],
    });
    const clues = () => system.service.search(other, { text: 'safe code', k: 10, tiers: ['episodic'] });
    // On Citus a policy cannot hold a subquery: its profile asks memory.open_game() the same.
    const open = onCitus
      ? 'game_id = memory.open_game(memory.scope_tenant(), memory.scope_game())'
      : 'EXISTS (SELECT 1 FROM memory.games g WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL)';
    await database.db.exec(`ALTER POLICY episodic_scope ON memory.episodic
      USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc() AND ${open})`);
    for (let i = 0; i < 7; i++) expect(await clues()).toHaveLength(1);
    await database.db.query(`UPDATE memory.games SET ended_at = now() WHERE game_id = 'game-beta'`);
    expect(await clues()).toHaveLength(0);
  });
});

describe('values inlined into EXECUTE', () => {
  it('names a statement after its text, so every caller shares one prepared statement', () => {
    const a = prepared('SELECT $1::int', [1]);
    const b = prepared('SELECT $1::int', [2]);
    expect(a.statement.name).toBe(b.statement.name);
    expect(prepared('SELECT $1::bigint', [1]).statement.name).not.toBe(a.statement.name);
    expect(a.execute).toBe(`EXECUTE ${a.statement.name}(1)`);
  });

  it('renders arrays untyped, so they take the type the statement expects', () => {
    expect(literal(['7f0c', 'ab-1'])).toBe(`'{"7f0c","ab-1"}'`);
    expect(literal([])).toBe(`'{}'`);
  });

  it('refuses to inline anything that would need quoting', () => {
    expect(() => literal("x' OR true --")).toThrow(TypeError);
    expect(() => literal(['a"b'])).toThrow(TypeError);
    expect(() => literal(['a\\b'])).toThrow(TypeError);
    expect(() => literal([1])).toThrow(TypeError);
    expect(() => literal({})).toThrow(TypeError);
  });
});
