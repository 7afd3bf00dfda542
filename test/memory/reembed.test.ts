import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { reembed, type ReembedProgress } from '../../src/memory/embeddings/reembed.js';
import type { Scope } from '../../src/memory/scope.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { onCitus, openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { setLocal } from '../../src/memory/scope.js';
import type { Tx } from '../../src/memory/db/types.js';

describe('memory reembed: rows written by another embedder (or with no vector) get the current one', () => {
  let database: TestDatabase;
  let keys: { dir: string; remove(): Promise<void> };
  let hashed: MemorySystem;
  let current: MemorySystem;
  let tenantId: string;
  let other: string;
  const player = 'part-dent1111';
  const game: Scope = { tenantId: '', gameId: 'game-reembed', npcId: 'npc-mara', participantIds: [player], role: 'runtime' };
  const base = { source: 'player_statement' as const, confidence: 0.9, importance: 0.6, retention: 'permanent' as const };

  const embedders = async (table: string, tenant = tenantId) =>
    (await database.db.query<{ embedder: string | null; has: boolean }>(`SELECT embedder, embedding IS NOT NULL AS has FROM ${table} WHERE tenant_id = $1 ORDER BY id`, [tenant])).rows;

  beforeAll(async () => {
    database = await openTestDatabase();
    keys = await tempDir('keyring');
    // Written by the hashing embedder; then the system is opened with the default sentence encoder.
    hashed = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
    current = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false });
    tenantId = (await createTenant(database.db, 'reembed-studio')).tenantId;
    other = (await createTenant(database.db, 'reembed-other')).tenantId;
    game.tenantId = tenantId;
    const event = (gameId: string, text: string, ts: number) => ({ gameId, roomId: 'surgery', npcId: 'npc-mara', participantId: player, ts, text, targeted: true });
    await hashed.service.ingest(game, {
      idempotencyKey: 'reembed-0001',
      events: [
        event('game-reembed', 'I used to be a dentist before I retired', 1_700_000_001),
        event('game-reembed', 'The lighthouse lamp has been broken since the storm', 1_700_000_002),
        event('game-reembed', 'My sister plays the cello in an orchestra', 1_700_000_003),
      ],
    });
    await hashed.service.writeFact(game, { ...base, tier: 'social', participantId: player, key: 'job', value: 'dentist', summary: 'they pulled teeth for forty years' });
    await hashed.service.writeFact(game, { ...base, tier: 'lore', key: 'harbour', value: 'ferry', summary: 'the ferry leaves the harbour at dawn' });
    await hashed.service.writeFact(game, { ...base, tier: 'clue', key: 'safe', value: 'behind the clock', summary: 'the safe is hidden behind the grandfather clock' });
    await hashed.service.writeFact(game, { ...base, tier: 'fragment', key: 'topic.scooter', value: 'an old Vespa', summary: 'someone told me they rebuilt an old Vespa' });
    // A row with no vector at all (as migration 0005 leaves every row).
    await database.db.query("UPDATE memory.lore SET embedding = NULL WHERE tenant_id = $1", [tenantId]);
    // An ended game: its vectors were cleared for good and must stay so.
    const ended: Scope = { ...game, gameId: 'game-ended' };
    await hashed.service.ingest(ended, { idempotencyKey: 'reembed-0002', events: [event('game-ended', 'I hid the map in the boathouse', 1_700_000_010)] });
    await hashed.lifecycle.endGame(tenantId, 'game-ended', 'test');
    // Another tenant's row, for --tenant.
    await hashed.service.writeFact({ tenantId: other, npcId: 'npc-mara', role: 'runtime' }, { ...base, tier: 'lore', key: 'x', value: 'y', summary: 'the moon is made of rock' });
  });
  afterAll(async () => {
    await hashed?.app.close();
    await current?.app.close();
    await keys?.remove();
    await database?.drop();
  });

  it('records the writing embedder, and clears it with the vector (game end, migration)', async () => {
    expect((await embedders('memory.social')).map((r) => r.embedder)).toEqual(['local-hash-v2']);
    expect(await embedders('memory.lore')).toEqual([{ embedder: null, has: false }]);
    const endedRows = await database.db.query<{ embedder: string | null; has: boolean }>(
      "SELECT embedder, embedding IS NOT NULL AS has FROM memory.episodic WHERE game_id = 'game-ended'",
    );
    expect(endedRows.rows).toEqual([{ embedder: null, has: false }]);
    // A row with no vector is still found, as the farthest (not as distance 0, the nearest).
    const found = await current.service.search(game, { text: 'when does the ferry leave?', k: 5, tiers: ['lore', 'clue'] });
    expect(found.map((m) => [m.tier, m.distance === 2])).toEqual([['clue', false], ['lore', true]]);
  });

  it('re-embeds only the chosen tenant, with progress, and then searching by meaning finds the rows', async () => {
    const before = await current.service.search(game, { text: 'who fixed teeth for a living?', k: 1, tiers: ['episodic'] });
    const progress: ReembedProgress[] = [];
    const report = await reembed(database.db, current.service, { tenantId, batch: 2, onProgress: (p) => progress.push({ ...p }) });
    expect(report).toMatchObject({ embedder: 'use-lite-512', total: 7, unreadable: 0, reembedded: { episodic: 3, social: 1, lore: 1, clue: 1, fragment: 1 } });
    expect(progress.at(-1)).toMatchObject({ done: 7, total: 7 });
    expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
    for (const table of ['memory.episodic', 'memory.clues', 'memory.social', 'memory.lore', 'memory.fragments']) {
      // Game end consolidated the ended game's episodes first; those rows have no vector and keep none.
      const live = (await database.db.query<{ embedder: string | null; has: boolean }>(
        `SELECT embedder, embedding IS NOT NULL AS has FROM ${table} WHERE tenant_id = $1 ${table === 'memory.episodic' || table === 'memory.clues' ? "AND game_id <> 'game-ended'" : ''}`,
        [tenantId],
      )).rows;
      expect(live.length, table).toBeGreaterThan(0);
      for (const r of live) expect(r, table).toEqual({ embedder: 'use-lite-512', has: true });
    }
    // The ended game's row was not given a vector back; the other tenant was not touched.
    expect((await database.db.query("SELECT 1 FROM memory.episodic WHERE game_id = 'game-ended' AND embedding IS NOT NULL")).rows).toEqual([]);
    expect((await embedders('memory.lore', other)).map((r) => r.embedder)).toEqual(['local-hash-v2']);

    // A paraphrase with no shared word finds the episode now.
    const after = await current.service.search(game, { text: 'who fixed teeth for a living?', k: 1, tiers: ['episodic'] });
    expect(after[0]!.tier).toBe('episodic');
    expect((after[0] as { text: string }).text).toBe('I used to be a dentist before I retired');
    expect(after[0]!.distance).toBeLessThan(before[0]?.distance ?? 2);
    const social = await current.service.search(game, { text: 'a dentist', k: 1, tiers: ['social'] });
    expect(social[0]!.distance).toBeLessThan(0.6);
  });

  it('has nothing left to do on a second run; every tenant when none is named', async () => {
    expect((await reembed(database.db, current.service, { tenantId })).total).toBe(0);
    const all = await reembed(database.db, current.service);
    expect(all.total).toBe(1);
    expect(all.reembedded.lore).toBe(1);
  });

  it('runs as memory_reembed, which sees one tenant, no ended game, and may change only the vector and its embedder', async () => {
    const asReembed = <T>(tenant: string, fn: (tx: Tx) => Promise<T>) =>
      database.db.transaction(async (tx) => {
        await setLocal(tx, { role: 'memory_reembed', 'memory.tenant': tenant });
        return fn(tx);
      });
    const seen = await asReembed(tenantId, async (tx) => ({
      lore: (await tx.query<{ tenant_id: string }>('SELECT tenant_id FROM memory.lore')).rows.map((r) => r.tenant_id),
      games: (await tx.query<{ game_id: string }>('SELECT DISTINCT game_id FROM memory.episodic')).rows.map((r) => r.game_id),
      ended: (await tx.query("UPDATE memory.episodic SET embedder = 'x' WHERE game_id = 'game-ended'")).rowCount,
    }));
    expect(seen).toEqual({ lore: [tenantId], games: ['game-reembed'], ended: 0 });
    await expect(asReembed(tenantId, (tx) => tx.query("UPDATE memory.lore SET fact_key = 'x'"))).rejects.toThrow(/permission denied/);
    await expect(asReembed(tenantId, (tx) => tx.query('DELETE FROM memory.lore'))).rejects.toThrow(/permission denied/);
    // On Citus the distribution refuses first: a row never changes tenant.
    await expect(asReembed(tenantId, (tx) => tx.query('UPDATE memory.lore SET tenant_id = $1', [other]))).rejects.toThrow(
      onCitus ? /modifying the partition value/ : /permission denied/,
    );
    expect(await asReembed('', async (tx) => (await tx.query('SELECT id FROM memory.social')).rows)).toEqual([]);
  });

  it('refuses a bad batch size', async () => {
    await expect(reembed(database.db, current.service, { batch: 0 })).rejects.toThrow(/--batch/);
  });
});
