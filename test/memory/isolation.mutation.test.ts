import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { buildFixture, sqlIsolationViolations, type Fixture } from '../helpers/fixture.js';

/**
 * Mutation check: loosen one policy at a time in a throwaway database and require the
 * isolation attacks to notice. If they did not, the isolation suite could not fail.
 */
const LOOSENINGS = [
  { policy: 'episodic_scope', table: 'memory.episodic', rule: 'tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc()', drops: 'the game' },
  { policy: 'clue_scope', table: 'memory.clues', rule: 'tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc()', drops: 'the game' },
  { policy: 'social_scope', table: 'memory.social', rule: 'tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc()', drops: 'the participant' },
  { policy: 'lore_scope', table: 'memory.lore', rule: 'tenant_id = memory.scope_tenant()', drops: 'the npc' },
  { policy: 'fragment_scope', table: 'memory.fragments', rule: 'npc_id = memory.scope_npc()', drops: 'the tenant' },
  { policy: 'episodic_scope', table: 'memory.episodic', rule: 'game_id = memory.scope_game() AND npc_id = memory.scope_npc()', drops: 'the tenant' },
];

describe('the isolation attacks fail when a policy is loosened', () => {
  let database: TestDatabase;
  let fixture: Fixture;

  beforeAll(async () => {
    database = await openTestDatabase();
    fixture = await buildFixture(database.db);
  });
  afterAll(async () => {
    await fixture?.cleanup();
    await database?.drop();
  });

  it('finds no violation with the policies as shipped (the baseline of this throwaway database)', async () => {
    expect(await sqlIsolationViolations(fixture)).toEqual([]);
  });

  for (const m of LOOSENINGS) {
    it(`detects ${m.policy} loosened to drop ${m.drops}`, async () => {
      const { rows } = await database.db.query<{ qual: string; with_check: string }>(
        `SELECT pg_get_expr(polqual, polrelid) AS qual, pg_get_expr(polwithcheck, polrelid) AS with_check
         FROM pg_policy WHERE polname = $1 AND polrelid = $2::regclass`,
        [m.policy, m.table],
      );
      const original = rows[0]!;
      await database.db.exec(`ALTER POLICY ${m.policy} ON ${m.table} USING (${m.rule}) WITH CHECK (${m.rule})`);
      try {
        const violations = await sqlIsolationViolations(fixture);
        expect(violations.length).toBeGreaterThan(0);
      } finally {
        await database.db.exec(`ALTER POLICY ${m.policy} ON ${m.table} USING (${original.qual}) WITH CHECK (${original.with_check})`);
      }
    });
  }

  it('detects an extra permissive policy that opens a table', async () => {
    await database.db.exec('CREATE POLICY leak ON memory.clues TO memory_runtime USING (true)');
    try {
      expect((await sqlIsolationViolations(fixture)).some((v) => v.includes('clue'))).toBe(true);
    } finally {
      await database.db.exec('DROP POLICY leak ON memory.clues');
    }
  });

  it('is clean again once every policy is restored', async () => {
    expect(await sqlIsolationViolations(fixture)).toEqual([]);
  });
});
