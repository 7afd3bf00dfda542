import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngineDatabase, type EngineDatabase } from '../../src/engine/store/database.js';
import { startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { TOBIAS, makeEngine, sample, savedPlayersJoin } from './support/engine-fixture.js';

// Native PostgreSQL only: the engine's database is a cluster of this test's own, stopped for 20 s
// while two players talk. A crash here is an unhandled 'error' event, which fails the run.
describe.skipIf(!process.env.DATABASE_URL)('the engine\'s database stopped for 20 s during play', () => {
  let cluster: Cluster;
  let db: EngineDatabase;

  beforeAll(async () => {
    cluster = await startCluster();
    db = await openEngineDatabase({ url: cluster.url });
  }, 60_000);
  afterAll(async () => {
    await db?.close().catch(() => {});
    await cluster?.destroy();
  });

  it('keeps every acknowledged line once, keeps no refused one, and plays on when it is back', async () => {
    const proxySecret = new Uint8Array(32).fill(7);
    const first = makeEngine({ store: db, proxySecret, commitTimeoutMs: 1_000, journal: { retryDelayMs: 100, maxRetryDelayMs: 1_000, onError: () => {} } });
    const gameId = await first.engine.createGame(sample);
    const [ann, bo] = (await savedPlayersJoin(first.engine, gameId, 'Ann', 'Bo')) as [string, string];
    await first.engine.committed();

    const acked: string[] = [];
    const refused: string[] = [];
    let talking = true;
    let n = 0;
    const talk = (async () => {
      while (talking) {
        const text = `line ${++n}`;
        try {
          first.engine.say(n % 2 ? ann : bo, gameId, { text });
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' }); // refused before anything changed
          refused.push(text);
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        // Not confirmed in time: neither acknowledged nor refused (it is kept if the database returns).
        if (await first.engine.committed().then(() => true, () => false)) acked.push(text);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await cluster.stop();
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    await cluster.start();
    const until = Date.now() + 15_000;
    const ackedBefore = acked.length;
    while (acked.length < ackedBefore + 10 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    talking = false;
    await talk;
    await first.engine.idle();
    await first.engine.close();

    expect(refused.length).toBeGreaterThan(10);
    expect(acked.length).toBeGreaterThan(ackedBefore);
    const delivered = first.memory.eventsFor(TOBIAS).map((e) => e.text);
    const second = makeEngine({ store: db, proxySecret });
    await second.engine.restore();
    const feed = second.engine.feed(bo, gameId).map((e) => e.text);
    for (const text of acked) {
      expect(feed.filter((t) => t === text)).toHaveLength(1);
      expect(delivered.filter((t) => t === text)).toHaveLength(1);
    }
    for (const text of refused) {
      expect(feed).not.toContain(text);
      expect(delivered).not.toContain(text);
    }
    expect(second.engine.say(ann, gameId, { text: 'after the outage' }).text).toBe('after the outage');
    await second.engine.close();
  }, 90_000);
});
