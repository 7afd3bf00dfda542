import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { setLocal } from '../../src/memory/scope.js';
import { buildFixture, sqlIsolationViolations, type Fixture } from '../helpers/fixture.js';
import { inScope } from '../../src/memory/scope.js';

describe('database-enforced isolation, attacked at the SQL level as the runtime role', () => {
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

  it('runs the attacks as a role that is neither superuser nor BYPASSRLS', async () => {
    const who = await inScope(database.db, { tenantId: fixture.tenants[0]!.tenantId, role: 'runtime' }, async (tx) =>
      (await tx.query<{ rolsuper: boolean; rolbypassrls: boolean; current_user: string }>(
        'SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user',
      )).rows[0],
    );
    expect(who).toEqual({ current_user: 'memory_runtime', rolsuper: false, rolbypassrls: false });
  });

  it('lets no scope list, count, search, get, update, delete or insert into another tenant, game, npc or participant', async () => {
    expect(await sqlIsolationViolations(fixture)).toEqual([]);
  });

  it('shows each scope exactly its own rows, so the attacks above had something to find', async () => {
    const t = fixture.tenants[0]!.tenantId;
    const scope = { tenantId: t, gameId: 'alpha', npcId: 'npc-mara', participantIds: ['part-aaaa1111'], role: 'runtime' as const };
    const counts = await inScope(database.db, scope, async (tx) => {
      const n = async (table: string) => Number((await tx.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
      return {
        episodic: await n('memory.episodic'),
        clues: await n('memory.clues'),
        social: await n('memory.social'),
        lore: await n('memory.lore'),
        fragments: await n('memory.fragments'),
      };
    });
    expect(counts).toEqual({ episodic: 3, clues: 1, social: 1, lore: 1, fragments: 1 });
  });

  it('sees nothing at all when no scope is set', async () => {
    const seen = await database.db.transaction(async (tx) => {
      await setLocal(tx, { role: 'memory_runtime' });
      const tables = ['episodic', 'clues', 'social', 'lore', 'fragments', 'procedural', 'data_keys', 'games', 'api_keys', 'tenants'];
      let total = 0;
      for (const t of tables) total += Number((await tx.query<{ n: number }>(`SELECT count(*) AS n FROM memory.${t}`)).rows[0]!.n);
      return total;
    });
    expect(seen).toBe(0);
  });

  it('keeps scopes apart when transactions of two games interleave on the same pool', async () => {
    const t = fixture.tenants[0]!.tenantId;
    const counts = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const gameId = i % 2 ? 'alpha' : 'beta';
        return inScope(database.db, { tenantId: t, gameId, npcId: 'npc-mara', role: 'runtime' }, async (tx) => {
          const { rows } = await tx.query<{ game_id: string }>('SELECT DISTINCT game_id FROM memory.episodic');
          return { gameId, seen: rows.map((r) => r.game_id) };
        });
      }),
    );
    for (const c of counts) expect(c.seen).toEqual([c.gameId]);
  });

  it('refuses to let the runtime role rewrite or erase episodic memory, even its own', async () => {
    const own = fixture.rows.find((r) => r.tier === 'episodic')!;
    const scope = { tenantId: own.tenantId, gameId: own.gameId, npcId: own.npcId, role: 'runtime' as const };
    await expect(inScope(database.db, scope, (tx) => tx.query('UPDATE memory.episodic SET ts = 0 WHERE id = $1', [own.id]))).rejects.toMatchObject({ code: '42501' });
    await expect(inScope(database.db, scope, (tx) => tx.query('DELETE FROM memory.episodic WHERE id = $1', [own.id]))).rejects.toMatchObject({ code: '42501' });
  });
});
