import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('the catalog leaves no path around row-level security', () => {
  let database: TestDatabase;
  const q = async <R>(sql: string) => (await database.db.query<R>(sql)).rows;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('has row-level security enabled and forced on every table of the memory schema', async () => {
    const tables = await q<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      `SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class
       WHERE relnamespace = 'memory'::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`,
    );
    expect(tables.map((t) => t.relname)).toEqual(
      expect.arrayContaining(['episodic', 'clues', 'social', 'lore', 'fragments', 'procedural', 'data_keys', 'ingest_requests', 'tenants', 'api_keys', 'games']),
    );
    expect(tables.filter((t) => !t.relrowsecurity || !t.relforcerowsecurity)).toEqual([]);
  });

  it('runs every memory role (runtime, admin, worker, lifecycle, reembed) without superuser, BYPASSRLS, login or ownership of any table', async () => {
    const roles = await q<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }>(
      `SELECT rolname, rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname LIKE 'memory\\_%' ORDER BY rolname`,
    );
    expect(roles.map((r) => r.rolname)).toEqual(['memory_admin', 'memory_lifecycle', 'memory_reembed', 'memory_runtime', 'memory_worker']);
    for (const role of roles) expect(role, role.rolname).toMatchObject({ rolsuper: false, rolbypassrls: false, rolcanlogin: false });
    const owned = await q(`SELECT relname FROM pg_class WHERE relowner IN (SELECT oid FROM pg_roles WHERE rolname LIKE 'memory\\_%')`);
    expect(owned).toEqual([]);
  });

  it('has no views and no SECURITY DEFINER functions that could run with more rights than the caller', async () => {
    const views = await q(`SELECT relname FROM pg_class WHERE relnamespace = 'memory'::regnamespace AND relkind IN ('v', 'm')`);
    expect(views).toEqual([]);
    const definers = await q<{ proname: string }>(
      `SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(definers).toEqual([]);
  });

  it('gives every policy that admits writes a WITH CHECK clause', async () => {
    const loose = await q<{ polname: string }>(
      `SELECT polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
       WHERE c.relnamespace = 'memory'::regnamespace AND polcmd IN ('*', 'a', 'w') AND polwithcheck IS NULL
         AND EXISTS (SELECT 1 FROM unnest(p.polroles) r
                     WHERE has_table_privilege(r, c.oid, 'INSERT') OR has_table_privilege(r, c.oid, 'UPDATE'))`,
    );
    expect(loose).toEqual([]);
  });

  it('makes episodic memory append-only and procedural memory read-only for the runtime role', async () => {
    const privileges = await q<Record<string, boolean>>(
      `SELECT has_table_privilege('memory_runtime', 'memory.episodic', 'UPDATE') AS episodic_update,
              has_table_privilege('memory_runtime', 'memory.episodic', 'DELETE') AS episodic_delete,
              has_table_privilege('memory_runtime', 'memory.episodic', 'TRUNCATE') AS episodic_truncate,
              has_table_privilege('memory_runtime', 'memory.procedural', 'INSERT') AS procedural_insert,
              has_table_privilege('memory_runtime', 'memory.procedural', 'UPDATE') AS procedural_update,
              has_table_privilege('memory_runtime', 'memory.procedural', 'DELETE') AS procedural_delete,
              has_table_privilege('memory_runtime', 'memory.api_keys', 'INSERT') AS api_keys_insert,
              has_table_privilege('memory_admin', 'memory.procedural', 'INSERT') AS admin_procedural_insert`,
    );
    expect(privileges[0]).toEqual({
      episodic_update: false,
      episodic_delete: false,
      episodic_truncate: false,
      procedural_insert: false,
      procedural_update: false,
      procedural_delete: false,
      api_keys_insert: false,
      admin_procedural_insert: true,
    });
  });

  it('binds every game-bound table to its game through a foreign key that includes the scope columns', async () => {
    const gameBound = await q<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
       WHERE table_schema = 'memory' AND column_name = 'game_id' AND table_name <> 'games' ORDER BY 1`,
    );
    const fks = await q<{ table: string; def: string }>(
      `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE contype = 'f' AND connamespace = 'memory'::regnamespace AND confrelid = 'memory.games'::regclass`,
    );
    expect(gameBound.map((t) => t.table_name)).toEqual(expect.arrayContaining(['clues', 'episodic', 'ingest_requests']));
    for (const { table_name } of gameBound) {
      const fk = fks.find((f) => f.table === `memory.${table_name}`);
      expect(fk?.def, `memory.${table_name} references its game`).toContain('(tenant_id, game_id) REFERENCES memory.games(tenant_id, game_id)');
    }
  });

  it('has no game column on the social, lore and fragment tables, and a non-null one on episodic and clues', async () => {
    const columns = await q<{ table_name: string; is_nullable: string }>(
      `SELECT table_name, is_nullable FROM information_schema.columns WHERE table_schema = 'memory' AND column_name = 'game_id' ORDER BY 1`,
    );
    const gameBound = Object.fromEntries(columns.map((c) => [c.table_name, c.is_nullable]));
    expect(gameBound).toMatchObject({ episodic: 'NO', clues: 'NO' });
    for (const t of ['social', 'lore', 'fragments', 'procedural']) expect(gameBound[t]).toBeUndefined();
  });
});
