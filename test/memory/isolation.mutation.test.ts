import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { buildFixture, sqlIsolationViolations, type Fixture } from '../helpers/fixture.js';
import { DURABLE_TIERS, TIER_TABLES } from '../../src/memory/types.js';

/**
 * Mutation check: loosen one policy at a time in a throwaway database and require the
 * isolation attacks to notice. If they did not, the isolation suite could not fail.
 */
/** What binds a tier's rows to the runtime's scope: every tier is a tenant's and an NPC's; TIER_TABLES says the rest. */
const BINDINGS = {
  tenant: 'tenant_id = memory.scope_tenant()',
  npc: 'npc_id = memory.scope_npc()',
  game: 'game_id = memory.scope_game()',
  participant: 'participant_id = ANY (memory.scope_participants()::text[])',
} as const;

/** Every tier's scope policy with one of its bindings dropped, from TIER_TABLES: a new tier is attacked too. */
const LOOSENINGS = DURABLE_TIERS.flatMap((tier) => {
  const { table, gameBound, participantBound } = TIER_TABLES[tier];
  const bound = (['tenant', 'npc', ...(gameBound ? ['game'] : []), ...(participantBound ? ['participant'] : [])] as const) as readonly (keyof typeof BINDINGS)[];
  return bound.map((dropped) => ({ policy: `${tier}_scope`, table, rule: bound.filter((b) => b !== dropped).map((b) => BINDINGS[b]).join(' AND '), drops: `the ${dropped}` }));
});

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
