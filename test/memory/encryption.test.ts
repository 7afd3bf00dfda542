import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, open, seal } from '../../src/memory/crypto/cipher.js';
import { kekRef } from '../../src/memory/crypto/data-keys.js';
import { LocalKeyring } from '../../src/memory/crypto/keyring.js';
import { createTenant } from '../../src/memory/credentials.js';
import { MemoryService, type FactInput } from '../../src/memory/service.js';
import { inScope, type Scope } from '../../src/memory/scope.js';
import type { EpisodeMemory, FactMemory, FactTier } from '../../src/memory/types.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

const P1 = 'part-aaaa1111';
const P2 = 'part-bbbb2222';
const NPC = 'npc-mara';

const fact = (tier: FactTier, value: string, summary: string, extra: Partial<FactInput> = {}): FactInput => ({
  tier,
  key: `${tier}.note`,
  value,
  summary,
  source: 'player_statement',
  confidence: 0.8,
  importance: 0.6,
  retention: 'permanent',
  ...extra,
});

const event = (gameId: string, text: string, participantId = P1, ts = 1_700_000_000) => ({
  gameId,
  roomId: 'vault',
  npcId: NPC,
  participantId,
  ts,
  text,
  targeted: true,
});

const toBuffer = (v: unknown) => Buffer.from(v as Uint8Array);

describe('encryption at rest', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let keyring: { dir: string; remove(): Promise<void> };
  let keyringDir: string;
  let tenantId: string;
  let game: (gameId: string, npcId?: string) => Scope;

  beforeAll(async () => {
    database = await openTestDatabase();
    keyring = await tempDir('keyring');
    keyringDir = keyring.dir;
    system = await buildMemorySystem(database.db, { keyringDir, logger: false });
    tenantId = (await createTenant(database.db, 'crypto-studio')).tenantId;
    game = (gameId, npcId = NPC) => ({ tenantId, gameId, npcId, participantIds: [P1, P2], role: 'runtime' });
  });
  afterAll(async () => {
    await system?.app.close();
    await keyring?.remove();
    await database?.drop();
  });

  describe('no memory text in plaintext anywhere in the database', () => {
    const markers = {
      episodic: 'zq-episodic-marker-Quokka7492',
      episodicAccent: 'Éléonore-vault-marker-9931',
      clueValue: 'zq-clue-value-marker-Wombat',
      clueSummary: 'zq-clue-summary-marker-Numbat',
      social: 'zq-social-marker-Platypus',
      lore: 'zq-lore-marker-Echidna',
      fragment: 'zq-fragment-marker-Bilby',
    };
    const canaryKey = 'lore.canary_key_in_the_clear';

    beforeAll(async () => {
      const scope = game('g-plain');
      await system.service.ingest(scope, {
        idempotencyKey: 'plain-batch-01',
        events: [event('g-plain', `she said ${markers.episodic} twice`), event('g-plain', `${markers.episodicAccent}`, P2)],
      });
      await system.service.writeFact(scope, fact('clue', markers.clueValue, `the code is ${markers.clueSummary}`));
      await system.service.writeFact(scope, { ...fact('social', markers.social, `likes ${markers.social}`), participantId: P1 });
      await system.service.writeFact(scope, fact('lore', markers.lore, `the world has ${markers.lore}`, { key: canaryKey }));
      await system.service.writeFact(scope, fact('fragment', markers.fragment, `someone said ${markers.fragment}`));
    });

    /** Every table of schema memory, every row cast to text, plus every bytea value as raw bytes. */
    async function scanMemorySchema(): Promise<{ tables: Map<string, number>; texts: string[]; blobs: Buffer[] }> {
      const { rows: tables } = await database.db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'memory' AND table_type = 'BASE TABLE' ORDER BY 1`,
      );
      const counts = new Map<string, number>();
      const texts: string[] = [];
      const blobs: Buffer[] = [];
      for (const { table_name: table } of tables) {
        const { rows } = await database.db.query<{ row: string }>(`SELECT t::text AS row FROM memory.${table} t`);
        counts.set(table, rows.length);
        texts.push(...rows.map((r) => r.row));
        const { rows: cols } = await database.db.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = 'memory' AND table_name = $1 AND data_type = 'bytea'`,
          [table],
        );
        for (const { column_name: col } of cols) {
          const { rows: values } = await database.db.query<{ v: unknown }>(`SELECT ${col} AS v FROM memory.${table}`);
          blobs.push(...values.map((r) => toBuffer(r.v)));
        }
      }
      return { tables: counts, texts, blobs };
    }

    const forms = (marker: string) => [marker, marker.toLowerCase(), Buffer.from(marker, 'utf8').toString('hex')];

    it('scans every tier table, and they hold the rows just written', async () => {
      const { tables } = await scanMemorySchema();
      for (const t of ['episodic', 'clues', 'social', 'lore', 'fragments', 'data_keys', 'ingest_requests', 'games']) {
        expect(tables.get(t), t).toBeGreaterThan(0);
      }
    });

    it('finds a value that is stored in the clear by design (the fact key), so the scan can fail', async () => {
      const { texts } = await scanMemorySchema();
      expect(texts.some((t) => t.includes(canaryKey))).toBe(true);
    });

    it('finds no memory text in any row of any table, as text, as hex, or inside any bytea value', async () => {
      const { texts, blobs } = await scanMemorySchema();
      const leaks: string[] = [];
      for (const marker of Object.values(markers)) {
        for (const form of forms(marker)) for (const t of texts) if (t.toLowerCase().includes(form.toLowerCase())) leaks.push(`${marker} in ${t.slice(0, 80)}`);
        const bytes = Buffer.from(marker, 'utf8');
        for (const b of blobs) {
          if (b.includes(bytes) || b.toString('utf8').includes(marker) || b.toString('latin1').includes(marker)) leaks.push(`${marker} in a bytea value`);
        }
      }
      expect(leaks).toEqual([]);
    });

    it('reads every marker back through the service, so the rows scanned are the ones that hold them', async () => {
      const scope = game('g-plain');
      const episodes = (await system.service.list(scope, 'episodic', { limit: 10 })) as EpisodeMemory[];
      expect(episodes.map((e) => e.text).sort()).toEqual([`${markers.episodicAccent}`, `she said ${markers.episodic} twice`].sort());
      const clue = (await system.service.list(scope, 'clue', { limit: 10 }))[0] as FactMemory;
      expect(clue.fact).toMatchObject({ value: markers.clueValue, summary: `the code is ${markers.clueSummary}` });
      for (const [tier, marker] of [['social', markers.social], ['lore', markers.lore], ['fragment', markers.fragment]] as const) {
        expect(((await system.service.list(scope, tier, { limit: 10 }))[0] as FactMemory).fact.value).toBe(marker);
      }
    });

    it('keeps the keyring keys and the unwrapped data keys out of the database', async () => {
      const { blobs, texts } = await scanMemorySchema();
      const keyFiles = (await readdir(keyringDir)).filter((f) => f.endsWith('.key'));
      expect(keyFiles.length).toBeGreaterThan(0);
      const secrets = await Promise.all(keyFiles.map((f) => readFile(path.join(keyringDir, f))));
      const { rows } = await database.db.query<{ key_id: string }>('SELECT key_id FROM memory.data_keys WHERE tenant_id = $1', [tenantId]);
      for (const { key_id } of rows) {
        // As the owner (no scope needed): the unwrapped data key itself.
        const key = await system.service.keys.forRead(database.db, tenantId, key_id);
        if (key) secrets.push(Buffer.from(key));
      }
      expect(secrets.length).toBeGreaterThan(keyFiles.length);
      for (const secret of secrets) {
        for (const b of blobs) expect(b.includes(secret)).toBe(false);
        for (const t of texts) expect(t.includes(secret.toString('hex'))).toBe(false);
      }
    });
  });

  describe('the cipher', () => {
    const key = newKey();
    const sealed = seal(key, Buffer.from('the safe code is 7492'), 'row-1');

    it('opens with the right key and the right associated data', () => {
      expect(open(key, sealed, 'row-1').toString()).toBe('the safe code is 7492');
      expect(sealed.includes(Buffer.from('7492'))).toBe(false);
    });

    it('uses a fresh nonce per seal, so the same text never gives the same ciphertext', () => {
      expect(seal(key, Buffer.from('the safe code is 7492'), 'row-1').equals(sealed)).toBe(false);
    });

    it('refuses to open with another key', () => {
      expect(() => open(newKey(), sealed, 'row-1')).toThrow();
    });

    it('refuses to open under other associated data (another row)', () => {
      expect(() => open(key, sealed, 'row-2')).toThrow();
    });

    it('refuses a ciphertext with one bit flipped, anywhere', () => {
      for (const at of [1, 13, 29, sealed.length - 1]) {
        const tampered = Buffer.from(sealed);
        tampered[at]! ^= 0x01;
        expect(() => open(key, tampered, 'row-1'), `bit flipped at ${at}`).toThrow();
      }
    });

    it('refuses an unknown format version or a truncated envelope', () => {
      const other = Buffer.from(sealed);
      other[0] = 2;
      expect(() => open(key, other, 'row-1')).toThrow(/unknown ciphertext format/);
      expect(() => open(key, sealed.subarray(0, 20), 'row-1')).toThrow();
    });

    it("cannot unwrap one game's data key with another game's key-encryption key", async () => {
      await system.service.ingest(game('g-wrap-a'), { idempotencyKey: 'wrap-a-0001', events: [event('g-wrap-a', 'wrap a')] });
      await system.service.ingest(game('g-wrap-b'), { idempotencyKey: 'wrap-b-0001', events: [event('g-wrap-b', 'wrap b')] });
      const { rows } = await database.db.query<{ scope_ref: string; kek_ref: string; wrapped: unknown }>(
        "SELECT scope_ref, kek_ref, wrapped FROM memory.data_keys WHERE tenant_id = $1 AND scope_ref IN ('g-wrap-a', 'g-wrap-b') ORDER BY scope_ref",
        [tenantId],
      );
      const [a, b] = rows;
      const kekB = (await system.keyring.get(b!.kek_ref))!;
      expect(a!.kek_ref).toBe(kekRef(tenantId, 'game', 'g-wrap-a'));
      expect(() => open(kekB, toBuffer(a!.wrapped), `dek\0${a!.kek_ref}`)).toThrow();
      expect(() => open(kekB, toBuffer(a!.wrapped), `dek\0${b!.kek_ref}`)).toThrow();
      expect(open(kekB, toBuffer(b!.wrapped), `dek\0${b!.kek_ref}`)).toHaveLength(32);
    });
  });

  it('creates a game data key exactly once when 20 first writes for a new game race, from two service instances', async () => {
    // A second instance with its own key cache but the same keyring: two replicas.
    const other = new MemoryService(database.db, new LocalKeyring(keyringDir), system.embedder);
    const scope = game('g-race');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? other : system.service).ingest(scope, {
          idempotencyKey: `race-batch-${String(i).padStart(2, '0')}`,
          events: [event('g-race', `racing write number ${i}`, P1, 1_700_000_000 + i)],
        }),
      ),
    );
    expect(results.every((r) => r.accepted === 1 && !r.replayed)).toBe(true);
    const { rows: keys } = await database.db.query<{ key_id: string }>(
      "SELECT key_id FROM memory.data_keys WHERE tenant_id = $1 AND scope_kind = 'game' AND scope_ref = 'g-race'",
      [tenantId],
    );
    expect(keys).toHaveLength(1);
    const { rows: used } = await database.db.query<{ key_id: string; n: number }>(
      "SELECT key_id, count(*)::int AS n FROM memory.episodic WHERE tenant_id = $1 AND game_id = 'g-race' GROUP BY key_id",
      [tenantId],
    );
    expect(used).toEqual([{ key_id: keys[0]!.key_id, n: 20 }]);
    const ref = kekRef(tenantId, 'game', 'g-race');
    expect((await readdir(keyringDir)).filter((f) => f.startsWith(ref))).toEqual([`${ref}.key`]);
    for (const reader of [system.service, other]) {
      const texts = ((await reader.list(scope, 'episodic', { limit: 100 })) as EpisodeMemory[]).map((e) => e.text).sort();
      expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `racing write number ${i}`).sort());
    }
  });

  it('does not keep using a data key whose creating transaction rolled back', async () => {
    // A fresh npc: its lore key is created inside the write's transaction, which then fails.
    const scope = game('g-any', 'npc-rollback');
    await expect(system.service.writeFact(scope, fact('lore', 'never stored', 'never stored', { confidence: 7 }))).rejects.toThrow();
    const { rows } = await database.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory.data_keys WHERE tenant_id = $1 AND scope_kind = 'npc' AND scope_ref = 'npc-rollback'",
      [tenantId],
    );
    expect(rows[0]!.n).toBe(0);
    const written = await system.service.writeFact(scope, fact('lore', 'stored after all', 'stored after all'));
    expect((await system.service.get(scope, written.id)) as FactMemory).toMatchObject({ fact: { value: 'stored after all' } });
  });

  it('does not keep a key that its own transaction asked for twice before rolling back', async () => {
    const subject = 'npc-rollback-twice';
    await expect(
      inScope(database.db, { tenantId, npcId: subject, role: 'runtime' }, async (tx) => {
        await system.service.keys.forWrite(tx, tenantId, 'npc', subject);
        await system.service.keys.forWrite(tx, tenantId, 'npc', subject); // found in this transaction: must not be cached
        throw new Error('the batch fails after both writes');
      }),
    ).rejects.toThrow('the batch fails');
    const written = await system.service.writeFact(game('g-any', subject), fact('lore', 'stored after the rollback', 'stored after the rollback'));
    expect((await system.service.get(game('g-any', subject), written.id)) as FactMemory).toMatchObject({ fact: { value: 'stored after the rollback' } });
  });

  describe("destroying a game's key-encryption key (crypto-shredding)", () => {
    let shreddedIds: string[];
    let keptIds: string[];

    beforeAll(async () => {
      const shred = await system.service.ingest(game('g-shred'), {
        idempotencyKey: 'shred-batch-1',
        events: [event('g-shred', 'the shredded secret lies in the cellar'), event('g-shred', 'another shredded line', P2)],
      });
      const clue = await system.service.writeFact(game('g-shred'), fact('clue', 'shredded clue', 'the cellar code is 1234'));
      shreddedIds = [...shred.ids, clue.id];
      const kept = await system.service.ingest(game('g-kept'), { idempotencyKey: 'kept-batch-1', events: [event('g-kept', 'the kept line in the cellar')] });
      const keptClue = await system.service.writeFact(game('g-kept'), fact('clue', 'kept clue', 'the attic code is 5678'));
      keptIds = [...kept.ids, keptClue.id];
      // Readable before, so that "unreadable after" means something.
      expect(await system.service.list(game('g-shred'), 'episodic', { limit: 10 })).toHaveLength(2);
      expect(await system.keyring.destroy(kekRef(tenantId, 'game', 'g-shred'))).toBe(true);
      system.service.keys.forget();
    });

    it('makes that game\'s episodes and clues unreadable by list, search and get', async () => {
      const scope = game('g-shred');
      expect(await system.service.list(scope, 'episodic', { limit: 10 })).toEqual([]);
      expect(await system.service.list(scope, 'clue', { limit: 10 })).toEqual([]);
      const found = await system.service.search(scope, { text: 'shredded secret cellar code', k: 10 });
      expect(found.filter((m) => shreddedIds.includes(m.id))).toEqual([]);
      for (const id of shreddedIds) await expect(system.service.get(scope, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('leaves other games readable', async () => {
      const scope = game('g-kept');
      const episodes = (await system.service.list(scope, 'episodic', { limit: 10 })) as EpisodeMemory[];
      expect(episodes.map((e) => e.text)).toEqual(['the kept line in the cellar']);
      for (const id of keptIds) expect((await system.service.get(scope, id)).id).toBe(id);
    });

    it('refuses new writes to the shredded game instead of minting a fresh key for it', async () => {
      await expect(
        system.service.ingest(game('g-shred'), { idempotencyKey: 'shred-batch-2', events: [event('g-shred', 'after the shredding')] }),
      ).rejects.toThrow(/destroyed/);
      const { rows } = await database.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM memory.data_keys WHERE tenant_id = $1 AND scope_ref = 'g-shred'",
        [tenantId],
      );
      expect(rows[0]!.n).toBe(1);
      expect(await system.keyring.get(kekRef(tenantId, 'game', 'g-shred'))).toBeUndefined();
    });
  });

  describe('ciphertext copied from one row into another (as the database owner)', () => {
    let victim: FactMemory;
    let donor: FactMemory;
    let victimEpisode: string;
    let donorEpisode: string;
    let original: { clue: unknown; episode: unknown };
    const scope = () => game('g-swap');

    beforeAll(async () => {
      victim = await system.service.writeFact(scope(), fact('clue', 'victim value', 'victim summary'));
      donor = await system.service.writeFact(scope(), fact('clue', 'donor secret 7492', 'donor summary 7492'));
      const ingested = await system.service.ingest(scope(), {
        idempotencyKey: 'swap-batch-1',
        events: [event('g-swap', 'victim episode text'), event('g-swap', 'donor episode secret 7492', P1, 1_700_000_001)],
      });
      [victimEpisode, donorEpisode] = ingested.ids as [string, string];
      original = {
        clue: (await database.db.query<{ c: unknown }>('SELECT ciphertext AS c FROM memory.clues WHERE id = $1', [victim.id])).rows[0]!.c,
        episode: (await database.db.query<{ c: unknown }>('SELECT ciphertext AS c FROM memory.episodic WHERE id = $1', [victimEpisode])).rows[0]!.c,
      };
      // Read the donor's ciphertext, write it over the victim's (two statements: on Citus a row's
      // subquery may not read another shard's row).
      const copy = async (table: string, to: string, from: string) => {
        const { rows } = await database.db.query<{ c: unknown }>(`SELECT ciphertext AS c FROM memory.${table} WHERE id = $1`, [from]);
        await database.db.query(`UPDATE memory.${table} SET ciphertext = $2 WHERE id = $1`, [to, rows[0]!.c]);
      };
      await copy('clues', victim.id, donor.id);
      await copy('episodic', victimEpisode, donorEpisode);
    });

    it('fails authentication on GET by id: the altered row is not found rather than showing the donor row\'s text', async () => {
      for (const id of [victim.id, victimEpisode]) {
        await expect(system.service.get(scope(), id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      }
    });

    it('leaves the altered rows out of a list while the rest of the tier still reads', async () => {
      const clues = (await system.service.list(scope(), 'clue', { limit: 10 })) as FactMemory[];
      expect(clues.map((m) => m.id)).toEqual([donor.id]);
      const episodes = (await system.service.list(scope(), 'episodic', { limit: 10 })) as EpisodeMemory[];
      expect(episodes.map((m) => m.id)).toEqual([donorEpisode]);
      expect(JSON.stringify(clues.concat(episodes as never[]))).not.toContain('victim');
    });

    it('answers the same 404 over HTTP as for an unknown id, carrying no memory text, and keeps serving', async () => {
      const { token } = await system.credentials.issueGameToken(tenantId, 'g-swap', [P1], 300);
      for (const id of [victim.id, victimEpisode]) {
        const response = await system.app.inject({ method: 'GET', url: `/v1/npcs/${NPC}/memories/${id}`, headers: { authorization: `Bearer ${token}` } });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
        expect(response.body).not.toContain('7492');
      }
      expect((await system.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    });

    it('reads the donor rows unharmed, and the victims again once their own ciphertext is restored', async () => {
      expect(((await system.service.get(scope(), donor.id)) as FactMemory).fact.value).toBe('donor secret 7492');
      expect(((await system.service.get(scope(), donorEpisode)) as EpisodeMemory).text).toBe('donor episode secret 7492');
      await database.db.query('UPDATE memory.clues SET ciphertext = $2 WHERE id = $1', [victim.id, original.clue]);
      await database.db.query('UPDATE memory.episodic SET ciphertext = $2 WHERE id = $1', [victimEpisode, original.episode]);
      expect(((await system.service.get(scope(), victim.id)) as FactMemory).fact.value).toBe('victim value');
      expect(((await system.service.get(scope(), victimEpisode)) as EpisodeMemory).text).toBe('victim episode text');
    });
  });

  it('seals each row under a different nonce even for identical text in the same game', async () => {
    const r = await system.service.ingest(game('g-nonce'), {
      idempotencyKey: 'nonce-batch-1',
      events: [event('g-nonce', 'identical words'), event('g-nonce', 'identical words', P2)],
    });
    const { rows } = await database.db.query<{ c: unknown }>('SELECT ciphertext AS c FROM memory.episodic WHERE id = ANY ($1::uuid[])', [r.ids]);
    expect(rows).toHaveLength(2);
    expect(toBuffer(rows[0]!.c).equals(toBuffer(rows[1]!.c))).toBe(false);
  });
});
