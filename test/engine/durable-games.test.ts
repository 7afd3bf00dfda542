/**
 * Games kept in the engine's database (in-memory PGlite, or a fresh native database with
 * DATABASE_URL): a new engine on the same database takes every running game back as it was; an
 * acknowledgement means the command is kept; nothing leaves the engine before it is kept; an ended
 * game leaves memory and its log is deleted.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineDatabase, Statement } from '../../src/engine/store/database.js';
import { closeEngineDatabases, engineDatabase } from '../helpers/engine-database.js';
import { MARA, TOBIAS, expectOk, makeEngine, sample, savedPlayersJoin } from './support/engine-fixture.js';
import { RecordingMemoryPort } from './support/recording-memory-port.js';

afterEach(closeEngineDatabases);

/** Kept across restarts, as the keyring keeps it: returning players keep their boundary ids. */
const proxySecret = randomBytes(32);

/** The real database, with commits that can be made to fail (as a dropped connection would). */
function failable(db: EngineDatabase) {
  let failing = false;
  const wrapped: EngineDatabase = {
    query: (text, params) => db.query(text, params),
    transaction: async (statements: readonly Statement[]) => {
      if (failing) throw Object.assign(new Error('connection terminated'), { code: '57P01' });
      return db.transaction(statements);
    },
    close: () => db.close(),
  };
  return { db: wrapped, fail: (on: boolean) => (failing = on) };
}

const count = async (db: EngineDatabase, sql: string, params: unknown[] = []) => Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);

describe('games in the engine\'s database', () => {
  it('come back after a restart as they were: the same rooms, what each player holds, every feed with the same cursors, and play goes on', async () => {
    const db = await engineDatabase();
    const first = makeEngine({ store: db, proxySecret });
    const gameId = await first.engine.createGame(sample);
    const [ann, bo] = (await savedPlayersJoin(first.engine, gameId, 'Ann', 'Bo')) as [string, string];
    first.engine.say(ann, gameId, { text: '@Tobias I keep bees on a rooftop in Lyon' });
    expectOk(first.engine.act(ann, gameId, { type: 'move', direction: 'east' }));
    expectOk(first.engine.act(ann, gameId, { type: 'take', item: 'brass-key' }));
    first.engine.say(bo, gameId, { text: 'where did everyone go?' });
    await first.engine.committed();
    const feeds = { ann: [...first.engine.feed(ann, gameId)], bo: [...first.engine.feed(bo, gameId)] };
    const statusOfMara = first.engine.npcStatus(gameId, MARA);
    await first.engine.close();

    const second = makeEngine({ store: db, proxySecret });
    expect(await second.engine.restore()).toMatchObject({ games: 1, sessions: 2 });
    expect(second.engine.feed(ann, gameId)).toEqual(feeds.ann);
    expect(second.engine.feed(bo, gameId)).toEqual(feeds.bo);
    expect(second.engine.whereAmI(ann, gameId)).toBe(first.engine.whereAmI(ann, gameId));
    expect(second.engine.npcStatus(gameId, MARA)).toEqual(statusOfMara);
    // The key is still in Ann's hands: it opens the study door.
    expectOk(second.engine.act(ann, gameId, { type: 'move', direction: 'west' }));
    expectOk(second.engine.act(ann, gameId, { type: 'move', direction: 'north' }));
    expectOk(second.engine.act(ann, gameId, { type: 'unlock', direction: 'west' }));
    const line = second.engine.say(bo, gameId, { text: 'still here' });
    // The foyer's order goes on from where it was: Bo saw every foyer entry, this one last.
    expect(line.seq).toBe(second.engine.feed(bo, gameId).at(-2)!.seq + 1);
    expect(second.engine.feed(bo, gameId).slice(0, feeds.bo.length)).toEqual(feeds.bo);
    // Nothing the first process delivered is sent again by the second.
    await second.engine.idle();
    expect(second.memory.calls.filter((c) => c.name === 'registerSecrets')).toHaveLength(0);
    await second.engine.close();
  });

  it('give an account its place back through a new session: the same room, what it held, its feed', async () => {
    const db = await engineDatabase();
    const first = makeEngine({ store: db, proxySecret });
    await first.engine.accounts.register('kim_returns', 'a long passphrase');
    const { token } = await first.engine.sessions.login('kim_returns', 'a long passphrase');
    const gameId = await first.engine.createGame(sample);
    first.engine.join(token, gameId);
    expectOk(first.engine.act(token, gameId, { type: 'move', direction: 'east' }));
    expectOk(first.engine.act(token, gameId, { type: 'take', item: 'brass-key' }));
    await first.engine.committed();
    const feed = [...first.engine.feed(token, gameId)];
    await first.engine.close();

    const second = makeEngine({ store: db, proxySecret });
    await second.engine.restore();
    const again = (await second.engine.sessions.login('kim_returns', 'a long passphrase')).token;
    expect(again).not.toBe(token);
    expect(second.engine.join(again, gameId).roomId).toBe('cloakroom');
    expect(second.engine.feed(again, gameId)).toEqual(feed);
    // The old session no longer plays in this game; the new one holds the key.
    expect(() => second.engine.say(token, gameId, { text: 'me too' })).toThrowError(expect.objectContaining({ code: 'NOT_IN_GAME' }));
    expectOk(second.engine.act(again, gameId, { type: 'move', direction: 'west' }));
    expectOk(second.engine.act(again, gameId, { type: 'move', direction: 'north' }));
    expectOk(second.engine.act(again, gameId, { type: 'unlock', direction: 'west' }));
    await second.engine.committed();

    // And that, too, survives the next restart.
    await second.engine.close();
    const third = makeEngine({ store: db, proxySecret });
    await third.engine.restore();
    expect(third.engine.whereAmI(again, gameId)).toBe('reading-room');
    expectOk(third.engine.act(again, gameId, { type: 'move', direction: 'west' })); // the study door stayed unlocked
    await third.engine.close();
  });

  it('send nothing to the memory service and show nothing to other players before the command that caused it is kept', async () => {
    const real = await engineDatabase();
    const { db, fail } = failable(real);
    const { engine, memory } = makeEngine({ store: db, commitTimeoutMs: 200, journal: { retryDelayMs: 10, maxRetryDelayMs: 20, onError: () => {} } });
    const gameId = await engine.createGame(sample);
    const ann = engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
    const bo = engine.sessions.openAnonymous({ displayName: 'Bo' }).token;
    engine.join(ann, gameId);
    engine.join(bo, gameId);
    await engine.idle();
    const seen: string[] = [];
    engine.subscribe(bo, gameId, (entry) => seen.push(entry.text));
    const before = memory.eventsFor(TOBIAS).length;

    fail(true);
    engine.say(ann, gameId, { text: '@Tobias said while the database fails' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(memory.eventsFor(TOBIAS)).toHaveLength(before);
    expect(seen).toEqual([]);
    // Not kept, not acknowledged: the client is told so, and new commands are refused before they change anything.
    await expect(engine.committed()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(() => engine.say(ann, gameId, { text: 'a second line' })).toThrowError(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
    expect(engine.feed(bo, gameId).map((e) => e.text)).not.toContain('a second line');

    fail(false);
    await engine.committed();
    await engine.idle();
    expect(seen).toEqual(['@Tobias said while the database fails']);
    expect(memory.eventsFor(TOBIAS).map((e) => e.text).slice(before)).toEqual(['@Tobias said while the database fails']);
    expect(await count(real, 'SELECT count(*)::text AS n FROM engine.game_log WHERE game_id = $1', [gameId])).toBe(3);
    await engine.close();
  });

  it('key each batch to the memory service before its first attempt, so a batch sent again after a restart carries the same key', async () => {
    const db = await engineDatabase();
    const keysKeptAtSend: (string | null)[] = [];
    const memory = new RecordingMemoryPort();
    const port = {
      ...memory,
      registerSecrets: memory.registerSecrets.bind(memory),
      flushWorkingMemory: memory.flushWorkingMemory.bind(memory),
      endGame: memory.endGame.bind(memory),
      ingest: async (request: Parameters<RecordingMemoryPort['ingest']>[0]) => {
        const { rows } = await db.query<{ sealed_key: string | null }>('SELECT DISTINCT sealed_key FROM engine.outbox WHERE sealed_key = $1', [request.idempotencyKey]);
        keysKeptAtSend.push(rows[0]?.sealed_key ?? null);
        // The answer is lost: the call will be retried.
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      },
    };
    const first = makeEngine({ store: db, proxySecret, memory: port, outbox: { retry: { initialDelayMs: 5_000 } } });
    const gameId = await first.engine.createGame(sample);
    const ann = first.engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
    await first.engine.sessions.saved(ann);
    first.engine.join(ann, gameId);
    first.engine.say(ann, gameId, { text: '@Tobias one' });
    first.engine.say(ann, gameId, { text: '@Tobias two' });
    await first.engine.committed();
    const until = Date.now() + 5_000;
    while (keysKeptAtSend.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(keysKeptAtSend).toHaveLength(1);
    expect(keysKeptAtSend[0]).toMatch(/^ob-/);
    await first.engine.close();

    const second = makeEngine({ store: db, proxySecret });
    expect(await second.engine.restore()).toMatchObject({ undelivered: 2 });
    await second.engine.idle();
    const ingests = second.memory.calls.filter((c) => c.name === 'ingest');
    expect(ingests.map((c) => c.idempotencyKey)).toEqual([keysKeptAtSend[0]]);
    expect(second.memory.eventsFor(TOBIAS).map((e) => e.text)).toEqual(['@Tobias one', '@Tobias two']);
    await second.engine.close(); // waits for the deliveries' deletes to be kept
    expect(await count(db, 'SELECT count(*)::text AS n FROM engine.outbox')).toBe(0);
  });

  it('let an ended game leave memory and delete its log; its id answers GAME_ENDED after a restart, and is forgotten after a week', async () => {
    const db = await engineDatabase();
    const first = makeEngine({ store: db, proxySecret });
    const gameId = await first.engine.createGame(sample);
    const ann = first.engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
    await first.engine.sessions.saved(ann);
    first.engine.join(ann, gameId);
    first.engine.say(ann, gameId, { text: 'my sister lives in Porto' });
    first.engine.endGame(gameId);
    await first.engine.committed();
    expect(first.engine.runningGames).toBe(0);
    expect(await count(db, 'SELECT count(*)::text AS n FROM engine.game_log WHERE game_id = $1', [gameId])).toBe(0);
    expect(() => first.engine.say(ann, gameId, { text: 'hello?' })).toThrowError(expect.objectContaining({ code: 'GAME_ENDED' }));
    await first.engine.idle();
    await first.engine.close();

    const second = makeEngine({ store: db, proxySecret });
    expect(await second.engine.restore()).toMatchObject({ games: 0 });
    expect(() => second.engine.join(ann, gameId)).toThrowError(expect.objectContaining({ code: 'GAME_ENDED' }));
    await second.engine.close();

    // A week on, the ended game is forgotten: its definition is deleted too.
    const later = makeEngine({ store: db, proxySecret });
    later.clock.advance(8 * 24 * 3600 * 1000);
    await later.engine.restore();
    expect(await count(db, 'SELECT count(*)::text AS n FROM engine.games WHERE game_id = $1', [gameId])).toBe(0);
    const newcomer = later.engine.sessions.openAnonymous({ displayName: 'Newcomer' }).token;
    expect(() => later.engine.join(newcomer, gameId)).toThrowError(expect.objectContaining({ code: 'UNKNOWN_GAME' }));
    await later.engine.close();
  });
});
