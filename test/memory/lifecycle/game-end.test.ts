import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kekRef } from '../../../src/memory/crypto/data-keys.js';
import { inScope } from '../../../src/memory/scope.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { harness, harnessForTests, type Harness } from './support.js';

const P1 = 'part-alex0001';
const DAY = 24 * 60 * 60 * 1000;

describe('game end: expiry by policy, embeddings cleared at once, shredded after the audit window', () => {
  let database: TestDatabase;
  let h: Harness;
  let ids: string[] = [];
  let clueId: string;
  /** A token of the game minted (and used) before it ended. */
  let early: string;

  beforeAll(async () => {
    database = await openTestDatabase();
    h = await harness(database.db);
    const r = await h.ingest('doomed', [
      { participantId: P1, text: 'canary-episode-zx81 the code is 8675309' },
      { participantId: P1, text: "I'm Alex" },
    ]);
    ids = r.body.ids;
    await h.ingest('survivor', [{ participantId: P1, text: 'canary-other-game hello' }]);
    await h.system.jobs.drain();
    const t = (early = await h.token('doomed', [P1]));
    const clues = await h.call('GET', '/v1/npcs/npc-mara/memories?tier=clue', t);
    clueId = clues.body.memories[0].id;
  });
  afterAll(async () => {
    await h?.cleanup();
    await database?.drop();
  });

  it('shows the game through every path before it ends (the baseline)', async () => {
    const t = await h.token('doomed', [P1]);
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories/count?tier=episodic', t)).body.count).toBe(2);
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories/count?tier=clue', t)).body.count).toBe(2); // the code and the session summary
    expect((await h.call('GET', `/v1/npcs/npc-mara/memories/${ids[0]}`, t)).status).toBe(200);
  });

  it('answers the contract: endedAt, and shredAfter 30 days later (tenant API key)', async () => {
    const r = await h.call('POST', '/v1/games/doomed/end', h.runtimeKey);
    expect(r.status).toBe(200);
    expect(new Date(r.body.shredAfter).getTime() - new Date(r.body.endedAt).getTime()).toBe(30 * DAY);
    const again = await h.call('POST', '/v1/games/doomed/end', h.runtimeKey);
    expect(again.body).toEqual(r.body); // idempotent
    // A game token cannot end a game (here one of a game still running).
    const withToken = await h.call('POST', '/v1/games/survivor/end', await h.token('survivor', []));
    expect(withToken.status).toBe(403);
  });

  it('refuses every token of the game from that moment (minted before or after), via list, count, get and search', async () => {
    const gameEnded = { status: 409, body: { error: { code: 'GAME_ENDED' } } };
    for (const t of [early, await h.token('doomed', [P1])]) {
      for (const tier of ['episodic', 'clue']) {
        expect(await h.call('GET', `/v1/npcs/npc-mara/memories?tier=${tier}`, t)).toMatchObject(gameEnded);
        expect(await h.call('GET', `/v1/npcs/npc-mara/memories/count?tier=${tier}`, t)).toMatchObject(gameEnded);
      }
      for (const id of [...ids, clueId]) expect(await h.call('GET', `/v1/npcs/npc-mara/memories/${id}`, t)).toMatchObject(gameEnded);
      expect(await h.call('POST', '/v1/npcs/npc-mara/search', t, { text: 'code 8675309 canary', k: 50 })).toMatchObject(gameEnded);
    }
    // Social facts persist across games; the other game is untouched.
    const other = await h.token('survivor', [P1]);
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories?tier=social', other)).body.memories.length).toBeGreaterThan(0);
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories/count?tier=episodic', other)).body.count).toBe(1);
  });

  it('hides them at the SQL level too, as the runtime role with no WHERE clause', async () => {
    const seen = await inScope(database.db, { tenantId: h.tenantId, gameId: 'doomed', npcId: 'npc-mara', role: 'runtime' }, async (tx) => ({
      episodic: (await tx.query('SELECT id FROM memory.episodic')).rows.length,
      clues: (await tx.query('SELECT id FROM memory.clues')).rows.length,
      secrets: (await tx.query('SELECT id FROM memory.game_secrets')).rows.length,
    }));
    expect(seen).toEqual({ episodic: 0, clues: 0, secrets: 0 });
  });

  it('has deleted the embeddings of those rows at once, while the rows wait for the window', async () => {
    const { rows } = await database.db.query<{ n: number; with_embedding: number }>(
      `SELECT count(*) AS n, count(embedding) AS with_embedding FROM memory.episodic WHERE tenant_id = $1 AND game_id = 'doomed'
       UNION ALL SELECT count(*), count(embedding) FROM memory.clues WHERE tenant_id = $1 AND game_id = 'doomed'`,
      [h.tenantId],
    );
    expect(rows.map((r) => [Number(r.n), Number(r.with_embedding)])).toEqual([[2, 0], [2, 0]]);
  });

  it('refuses new events, facts and secrets for the ended game with GAME_ENDED', async () => {
    const r = await h.ingest('doomed', [{ participantId: P1, text: 'late' }]);
    expect(r).toMatchObject({ status: 409, body: { error: { code: 'GAME_ENDED' } } });
    const secrets = await h.call('PUT', '/v1/games/doomed/secrets', h.runtimeKey, { secrets: [{ kind: 'code', text: '1111' }] });
    expect(secrets.body.error.code).toBe('GAME_ENDED');
  });

  it('keeps the rows (unreadable) until the window has passed; the shred job then destroys the key and purges them', async () => {
    expect(await h.system.jobs.drain()).toEqual([]); // the shred job is not due
    h.advance(29 * DAY);
    expect(await h.system.jobs.drain()).toEqual([]);
    const ref = kekRef(h.tenantId, 'game', 'doomed');
    expect(await h.system.keyring.get(ref)).toBeDefined();
    h.advance(1 * DAY + 1000);
    const ran = await h.system.jobs.drain();
    expect(ran.map((r) => `${r.job.kind}:${r.outcome}`)).toEqual(['shred:done']);
    expect(await h.system.keyring.get(ref)).toBeUndefined();
    const counts = await database.db.query<{ t: string; n: number }>(
      `SELECT 'episodic' AS t, count(*) AS n FROM memory.episodic WHERE tenant_id = $1 AND game_id = 'doomed'
       UNION ALL SELECT 'clues', count(*) FROM memory.clues WHERE tenant_id = $1 AND game_id = 'doomed'
       UNION ALL SELECT 'secrets', count(*) FROM memory.game_secrets WHERE tenant_id = $1 AND game_id = 'doomed'`,
      [h.tenantId],
    );
    expect(counts.rows.map((r) => Number(r.n))).toEqual([0, 0, 0]);
    const key = await database.db.query<{ destroyed_at: unknown }>(
      "SELECT destroyed_at FROM memory.data_keys WHERE tenant_id = $1 AND scope_kind = 'game' AND scope_ref = 'doomed'",
      [h.tenantId],
    );
    expect(key.rows[0]!.destroyed_at).not.toBeNull();
    // A read after shredding returns nothing, never ciphertext; the other game is intact.
    const t = await h.token('doomed', [P1]);
    expect((await h.call('GET', `/v1/npcs/npc-mara/memories/${ids[0]}`, t)).status).toBe(409); // GAME_ENDED, never ciphertext
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories/count?tier=episodic', await h.token('survivor', [P1]))).body.count).toBe(1);
    expect((await h.system.lifecycle.shredGame(h.tenantId, 'doomed')).status).toBe('already_shredded');
  });

  it('leaves no canary in any table of the memory schema after shredding', async () => {
    const tables = await database.db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'memory' AND table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables.rows) {
      const { rows } = await database.db.query<{ n: number }>(`SELECT count(*) AS n FROM memory.${table_name} t WHERE t::text LIKE '%canary-episode-zx81%' OR t::text LIKE '%8675309%'`);
      expect(Number(rows[0]!.n), table_name).toBe(0);
    }
  });

  it('records the game end in the audit ledger, with ids and counts only', async () => {
    const { rows } = await database.db.query<{ action: string; subject: string; details: unknown }>(
      "SELECT action, subject, details FROM memory.audit_ledger WHERE tenant_id = $1 AND action = 'game_end'",
      [h.tenantId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toBe('game:doomed');
  });

  it('sweeps an ended game whose shred job was lost (the `shred` command\'s safety net)', async () => {
    await h.call('POST', '/v1/games/survivor/end', h.runtimeKey);
    await database.db.query("DELETE FROM memory.jobs WHERE tenant_id = $1 AND game_id = 'survivor' AND kind = 'shred'", [h.tenantId]);
    expect(await h.system.lifecycle.sweep()).toBe(0); // not past its window yet
    h.advance(31 * DAY);
    expect(await h.system.lifecycle.sweep()).toBe(1);
    const ran = await h.system.jobs.drain();
    expect(ran.map((r) => `${r.job.kind}:${r.job.gameId}:${r.outcome}`)).toEqual(['shred:survivor:done']);
    expect(await h.system.keyring.get(kekRef(h.tenantId, 'game', 'survivor'))).toBeUndefined();
  });
});

describe('a batch retried after its game ended', () => {
  const harnessOf = harnessForTests();

  it('answers a batch retried after its game ended as it answered it before (an outbox retry is not lost), and refuses any new one', async () => {
    const h = harnessOf();
    const t = await h.token('retried', [P1]);
    const batch = {
      idempotencyKey: 'retried-after-end',
      events: [{ gameId: 'retried', roomId: 'library', npcId: 'npc-mara', participantId: P1, ts: 1_700_000_000, text: 'said before the end', targeted: true }],
    };
    const first = await h.call('POST', '/v1/events', t, batch);
    expect(first.status).toBe(200);
    expect((await h.call('POST', '/v1/games/retried/end', h.runtimeKey)).status).toBe(200);
    const retried = await h.call('POST', '/v1/events', t, batch);
    expect(retried).toMatchObject({ status: 200, body: { ids: first.body.ids, replayed: true } });
    const late = await h.call('POST', '/v1/events', t, { ...batch, idempotencyKey: 'new-after-end' });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'GAME_ENDED' } } });
    expect((await h.call('GET', '/v1/npcs/npc-mara/memories/count?tier=episodic', t)).body.error.code).toBe('GAME_ENDED');
  });
});
