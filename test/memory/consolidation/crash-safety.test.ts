import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { factsOf, harness, type Harness } from '../lifecycle/support.js';
import { Consolidator } from '../../../src/memory/consolidation/consolidator.js';
import { OpenDomainExtractor } from '../../../src/memory/consolidation/extract/open.js';
import type { EpisodeInput, Extractor } from '../../../src/memory/consolidation/extract/types.js';

const P = 'part-crash0001';

// One database and memory system for the file; each test uses its own games and participants.
let database: TestDatabase;
let h: Harness;
beforeAll(async () => {
  database = await openTestDatabase();
  h = await harness(database.db);
});
afterAll(async () => {
  await h?.cleanup();
  await database?.drop();
});

describe('crash safety of consolidation', () => {

  it('writes no fact of a batch that fails half-way, marks none of its episodes, and the retried job writes each fact once', async () => {
    await h.ingest('crashy', [
      { participantId: P, text: "I'm Alex" },
      { participantId: P, text: 'I hate spiders' },
      { participantId: P, text: 'I love climbing' },
    ]);
    const service = h.system.service;
    const original = service.writeFactIn.bind(service);
    let calls = 0;
    // The worker "dies" on the third write of the batch.
    service.writeFactIn = async (...args) => {
      if (++calls === 3) throw Object.assign(new Error('killed'), { code: 'KILLED' });
      return original(...args);
    };
    try {
      const ran = await h.system.jobs.runOnce();
      expect(ran.map((r) => r.outcome)).toEqual(['queued']);
    } finally {
      service.writeFactIn = original;
    }
    expect(await factsOf(h, 'crashy', [P], 'social')).toEqual([]);
    const marked = await database.db.query('SELECT count(*) AS n FROM memory.consolidated_episodes WHERE tenant_id = $1', [h.tenantId]);
    expect(Number((marked.rows[0] as { n: number }).n)).toBe(0);
    h.advance(60_000);
    const retried = await h.system.jobs.drain();
    expect(retried.map((r) => [r.outcome, r.job.lastError])).toEqual([['done', expect.stringMatching(/^KILLED/)]]);
    const social = await factsOf(h, 'crashy', [P], 'social');
    // (The topic in a key is read from meaning; what matters here is that each fact is written once.)
    expect(social.map((m) => m.fact.value).sort()).toEqual(['Alex', 'hate spiders', 'love climbing']);
  });
});

/** The default offline extractor behind a gate the test opens: a model that takes its time. */
class SlowExtractor implements Extractor {
  readonly id = 'slow-open';
  private readonly offline = new OpenDomainExtractor();
  started!: Promise<void>;
  private markStarted!: () => void;
  release!: () => void;
  private readonly gate: Promise<void>;
  constructor() {
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    this.gate = new Promise((resolve) => (this.release = resolve));
  }
  async extract(episodes: readonly EpisodeInput[]) {
    this.markStarted();
    await this.gate;
    return this.offline.extract(episodes);
  }
}

describe('consolidation while a slow extractor runs', () => {
  const Q = 'part-slow00001';

  it('holds no transaction while extracting: requests go on and the consolidation lock is free', async () => {
    await h.ingest('slow', [{ participantId: Q, text: "I'm Robin" }, { participantId: Q, text: 'I love sailing' }]);
    const slow = new SlowExtractor();
    const consolidating = new Consolidator(h.system.service, { extractor: slow }).consolidate({ tenantId: h.tenantId, gameId: 'slow', npcId: 'npc-mara' });
    await slow.started;
    // On PGlite (one connection) a transaction held across the extraction would stall these.
    const scope = { tenantId: h.tenantId, gameId: 'slow', npcId: 'npc-mara', participantIds: [Q], role: 'runtime' as const };
    const found = await Promise.race([h.system.service.search(scope, { text: 'sailing', k: 5 }), new Promise((r) => setTimeout(r, 5000, 'stalled'))]);
    expect(found).not.toBe('stalled');
    const free = await database.db.transaction(async (tx) =>
      (await tx.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS free', [`memory.consolidate:${h.tenantId}:slow:npc-mara`])).rows[0]!.free,
    );
    expect(free).toBe(true);
    slow.release();
    expect((await consolidating).written.social).toBe(2);
    expect((await factsOf(h, 'slow', [Q], 'social')).map((m) => m.fact.value).sort()).toEqual(['Robin', 'love sailing']);
  });

  it('writes nothing twice when another consolidator took the same episodes during the extraction', async () => {
    const R = 'part-race0001';
    await h.ingest('race', [{ participantId: R, text: "I'm Kit" }, { participantId: R, text: 'I hate thunder' }]);
    const slow = new SlowExtractor();
    const target = { tenantId: h.tenantId, gameId: 'race', npcId: 'npc-mara' };
    const late = new Consolidator(h.system.service, { extractor: slow }).consolidate(target);
    await slow.started;
    const first = await new Consolidator(h.system.service).consolidate(target);
    expect(first.written.social).toBe(2);
    slow.release(); // the late one finds its episodes taken, reads again, and finds nothing left
    const second = await late;
    expect(second.episodes).toBe(0);
    const social = await factsOf(h, 'race', [R], 'social');
    // (Each fact once, whatever topic its meaning files it under.)
    expect(social.map((m) => [m.fact.key, m.fact.value]).sort()).toEqual([
      [expect.stringMatching(/^speaker\.(dislikes|fear)\.hate-thunder$/), 'hate thunder'],
      ['speaker.name', 'Kit'],
    ]);
  });
});
