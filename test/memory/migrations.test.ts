import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, type Migration } from '../../src/memory/db/migrate.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('numbered, forward-only migrations', () => {
  let database: TestDatabase;
  let shipped: Migration[];

  const recorded = async () =>
    (await database.db.query<{ version: number }>('SELECT version FROM public.memory_migrations ORDER BY version')).rows.map((r) => r.version);
  const tableExists = async (name: string) =>
    (await database.db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name])).rows[0]!.t !== null;

  beforeAll(async () => {
    database = await openTestDatabase({ migrate: false });
    shipped = await loadMigrations();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('ships migrations numbered 1..n without gaps', () => {
    expect(shipped.length).toBeGreaterThan(0);
    expect(shipped.map((m) => m.version)).toEqual(shipped.map((_, i) => i + 1));
    for (const m of shipped) expect(m.sql.trim().length).toBeGreaterThan(0);
  });

  it('applies every migration exactly once to a fresh database, even with three migrators racing (replicas starting together)', async () => {
    expect(await tableExists('memory.episodic')).toBe(false);
    const runs = await Promise.all([migrate(database.db), migrate(database.db), migrate(database.db)]);
    expect(runs.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(shipped.map((m) => m.version));
    expect(runs.filter((r) => r.applied.length > 0)).toHaveLength(1);
    expect(await recorded()).toEqual(shipped.map((m) => m.version));
    expect(await tableExists('memory.episodic')).toBe(true);
  });

  it('applies nothing when run a second time', async () => {
    const second = await migrate(database.db);
    expect(second.applied).toEqual([]);
    expect(await recorded()).toEqual(shipped.map((m) => m.version));
  });

  it('leaves nothing half-applied when a migration has a broken statement', async () => {
    const broken: Migration = {
      version: shipped.length + 1,
      name: 'broken',
      sql: `CREATE TABLE memory.half_applied (id integer PRIMARY KEY);
            INSERT INTO memory.half_applied VALUES (1);
            SELEC this is not sql;`,
    };
    await expect(migrate(database.db, [...shipped, broken])).rejects.toThrow();
    expect(await tableExists('memory.half_applied')).toBe(false);
    expect(await recorded()).toEqual(shipped.map((m) => m.version));
  });

  it('rolls back the earlier migrations of the same run too when a later one fails', async () => {
    const good: Migration = { version: shipped.length + 1, name: 'good', sql: 'CREATE TABLE memory.good_one (id integer)' };
    const bad: Migration = { version: shipped.length + 2, name: 'bad', sql: 'CREATE TABLE memory.bad_one (id no_such_type)' };
    await expect(migrate(database.db, [...shipped, good, bad])).rejects.toThrow();
    expect(await tableExists('memory.good_one')).toBe(false);
    expect(await tableExists('memory.bad_one')).toBe(false);
    expect(await recorded()).toEqual(shipped.map((m) => m.version));
  });

  it('applies a valid new migration after a failed run, so the failure left no lock or debris behind', async () => {
    const next: Migration = { version: shipped.length + 1, name: 'next', sql: 'CREATE TABLE memory.next_one (id integer)' };
    expect((await migrate(database.db, [...shipped, next])).applied).toEqual([next.version]);
    expect(await tableExists('memory.next_one')).toBe(true);
    await database.db.exec('DROP TABLE memory.next_one');
    await database.db.query('DELETE FROM public.memory_migrations WHERE version = $1', [next.version]);
  });

  it('refuses a database whose schema is newer than the code, with code SCHEMA_NEWER_THAN_CODE, and changes nothing', async () => {
    await database.db.query("INSERT INTO public.memory_migrations (version, name) VALUES (9999, 'from_the_future')");
    try {
      await expect(migrate(database.db)).rejects.toMatchObject({
        code: 'SCHEMA_NEWER_THAN_CODE',
        message: expect.stringMatching(/version 9999 .* only up to \d+/),
      });
      expect(await recorded()).toEqual([...shipped.map((m) => m.version), 9999]);
    } finally {
      await database.db.query('DELETE FROM public.memory_migrations WHERE version = 9999');
    }
    expect((await migrate(database.db)).applied).toEqual([]);
  });
});

describe('loading migration files', () => {
  const write = async (dir: string, files: Record<string, string>) => {
    for (const [name, sql] of Object.entries(files)) await writeFile(path.join(dir, name), sql);
  };

  it('loads files in version order, with names taken from the file names', async () => {
    const tmp = await tempDir('migrations');
    try {
      await write(tmp.dir, { '0002_second.sql': 'SELECT 2;', '0001_first.sql': 'SELECT 1;', 'README.md': 'not a migration' });
      expect(await loadMigrations(`${tmp.dir}/`)).toEqual([
        { version: 1, name: 'first', sql: 'SELECT 1;' },
        { version: 2, name: 'second', sql: 'SELECT 2;' },
      ]);
    } finally {
      await tmp.remove();
    }
  });

  it('accepts a directory given without a trailing slash', async () => {
    const tmp = await tempDir('migrations');
    try {
      await write(tmp.dir, { '0001_first.sql': 'SELECT 1;' });
      expect((await loadMigrations(tmp.dir)).map((m) => m.name)).toEqual(['first']);
    } finally {
      await tmp.remove();
    }
  });

  for (const [label, files] of [
    ['a gap in the numbering', { '0001_a.sql': 'SELECT 1;', '0003_c.sql': 'SELECT 3;' }],
    ['two files with the same number', { '0001_a.sql': 'SELECT 1;', '0001_b.sql': 'SELECT 1;' }],
    ['a first file that is not 0001', { '0002_b.sql': 'SELECT 2;' }],
  ] as const) {
    it(`refuses ${label} as out of sequence`, async () => {
      const tmp = await tempDir('migrations');
      try {
        await write(tmp.dir, files);
        await expect(loadMigrations(`${tmp.dir}/`)).rejects.toThrow(/out of sequence/);
      } finally {
        await tmp.remove();
      }
    });
  }
});

describe('migration 0005: 512-dimensional embeddings and the embedder of each row', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase({ migrate: false });
    const shipped = await loadMigrations();
    await migrate(database.db, shipped.filter((m) => m.version < 5));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('resets every 384-dimensional vector to NULL, adds embedder, keeps the lifecycle grants and policies', async () => {
    const { db } = database;
    const { rows: tenant } = await db.query<{ tenant_id: string }>("INSERT INTO memory.tenants (name) VALUES ('m5') RETURNING tenant_id");
    const tenantId = tenant[0]!.tenant_id;
    await db.query("INSERT INTO memory.games (tenant_id, game_id) VALUES ($1, 'g')", [tenantId]);
    const { rows: key } = await db.query<{ key_id: string }>(
      "INSERT INTO memory.data_keys (tenant_id, scope_kind, scope_ref, kek_ref, wrapped) VALUES ($1, 'game', 'g', 'k', '\\x00') RETURNING key_id",
      [tenantId],
    );
    const old = `[${Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0)).join(',')}]`;
    await db.query(
      `INSERT INTO memory.episodic (id, tenant_id, game_id, npc_id, room_id, participant_id, ts, key_id, ciphertext, embedding)
       VALUES (gen_random_uuid(), $1, 'g', 'npc', 'r', 'p', 1, $2, '\\x00', $3::vector)`,
      [tenantId, key[0]!.key_id, old],
    );

    expect((await migrate(db)).applied).toEqual([5]);

    const columns = await db.query<{ table_name: string; column_name: string; type: string }>(
      `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'memory' AND a.attname IN ('embedding', 'embedder') AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2`,
    );
    const tables = ['clues', 'episodic', 'fragments', 'lore', 'social'];
    expect(columns.rows).toEqual(tables.flatMap((t) => [
      { table_name: t, column_name: 'embedder', type: 'text' },
      { table_name: t, column_name: 'embedding', type: 'vector(512)' },
    ]));
    expect((await db.query('SELECT embedding, embedder FROM memory.episodic')).rows).toEqual([{ embedding: null, embedder: null }]);

    const privilege = async (role: string, table: string, column: string) =>
      (await db.query<{ ok: boolean }>('SELECT has_column_privilege($1, $2, $3, \'UPDATE\') AS ok', [role, table, column])).rows[0]!.ok;
    // Game end (memory_lifecycle) may still clear vectors; only memory_reembed may set them, and nothing else.
    expect(await privilege('memory_lifecycle', 'memory.episodic', 'embedding')).toBe(true);
    expect(await privilege('memory_lifecycle', 'memory.clues', 'embedding')).toBe(true);
    expect(await privilege('memory_reembed', 'memory.social', 'embedding')).toBe(true);
    expect(await privilege('memory_reembed', 'memory.episodic', 'embedder')).toBe(true);
    expect(await privilege('memory_reembed', 'memory.episodic', 'ciphertext')).toBe(false);
    expect(await privilege('memory_runtime', 'memory.episodic', 'embedding')).toBe(false);
    const policies = await db.query<{ policyname: string; with_check: string }>(
      "SELECT policyname, with_check FROM pg_policies WHERE schemaname = 'memory' AND policyname IN ('episodic_lifecycle', 'clue_lifecycle') ORDER BY 1",
    );
    expect(policies.rows.map((p) => p.policyname)).toEqual(['clue_lifecycle', 'episodic_lifecycle']);
    for (const p of policies.rows) expect(p.with_check).toMatch(/embedding IS NULL/);

    // A row that loses its vector loses its embedder with it.
    await db.query("UPDATE memory.episodic SET embedding = $1::vector, embedder = 'x'", [`[${Array(512).fill(0.1).join(',')}]`]);
    expect((await db.query('SELECT embedder FROM memory.episodic')).rows).toEqual([{ embedder: 'x' }]);
    await db.query('UPDATE memory.episodic SET embedding = NULL');
    expect((await db.query('SELECT embedder FROM memory.episodic')).rows).toEqual([{ embedder: null }]);
  });
});
