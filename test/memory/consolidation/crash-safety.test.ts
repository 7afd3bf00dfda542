import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { factsOf, harness, type Harness } from '../lifecycle/support.js';

const P = 'part-crash0001';

describe('crash safety of consolidation', () => {
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
    expect(social.map((m) => m.fact.value).sort()).toEqual(['Alex', 'climbing', 'dislikes spiders']);
  });
});
