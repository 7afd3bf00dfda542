/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read as loose JSON */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listJobs } from '../../../src/memory/jobs/queue.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { factsOf, harness, type Harness } from '../lifecycle/support.js';

const P1 = 'part-alex0001';
const P2 = 'part-bree0002';

describe('consolidation end to end: ingest over HTTP -> job -> facts', () => {
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

  it('queues one job per npc in the ingest transaction and turns varied dialogue into facts, dropping trivia', async () => {
    const r = await h.ingest('e2e', [
      { participantId: P1, text: 'hello!' },
      { participantId: P1, text: "I'm Alex. I live in Oslo." },
      { participantId: P1, text: 'thanks' },
      { participantId: P2, text: 'My name is Bree and I work as a nurse' },
      { participantId: P2, text: 'The lighthouse was built in 1820.' },
      { participantId: P2, text: 'I hate spiders', npcId: 'npc-otto' },
    ]);
    expect(r.status).toBe(200);
    const queued = (await listJobs(database.db, { tenantId: h.tenantId })).filter((j) => j.state === 'queued');
    expect(queued.map((j) => `${j.kind}:${j.gameId}:${j.npcId}`).sort()).toEqual(['consolidate:e2e:npc-mara', 'consolidate:e2e:npc-otto']);
    const ran = await h.system.jobs.drain();
    expect(ran.map((x) => x.outcome)).toEqual(['done', 'done']);

    const social = await factsOf(h, 'e2e', [P1, P2], 'social');
    // One fact per self-disclosure: the slot as key, the proper noun (or the clause said back
    // without its "You") as value, the clause said back to its speaker as summary.
    const byKey = Object.fromEntries(social.map((m) => [`${m.participantId}:${m.fact.key}`, { value: m.fact.value, summary: m.fact.summary }]));
    expect(byKey).toEqual({
      [`${P1}:speaker.name`]: { value: 'Alex', summary: 'You are Alex.' },
      [`${P1}:speaker.home`]: { value: 'Oslo', summary: 'You live in Oslo.' },
      [`${P2}:speaker.name`]: { value: 'Bree', summary: 'Your name is Bree.' },
      [`${P2}:speaker.occupation`]: { value: 'work as a nurse', summary: 'You work as a nurse.' },
    });
    expect(social).toHaveLength(4); // hello / thanks are trivia
    for (const m of social) {
      expect(m.derivedFrom).toHaveLength(1);
      expect(r.body.ids).toContain(m.derivedFrom[0]);
      expect(m.source).toBe('player_statement');
    }
    const lore = await factsOf(h, 'e2e', [], 'lore');
    expect(lore.map((m) => [m.fact.key, m.fact.value])).toEqual([['world.lighthouse', 'The lighthouse was built in 1820']]);
    const otto = await factsOf(h, 'e2e', [P2], 'social', 'npc-otto');
    // "hate" names a dislike; the meaning of hating spiders is confidently a fear, and wins.
    expect(otto.map((m) => [m.fact.key, m.fact.value, m.fact.summary])).toEqual([['speaker.fear.hate-spider', 'hate spiders', 'You hate spiders.']]);
  });

  it('supersedes "Oslo" with "Geneva" (same slot, speaker.home), keeps the history, and links provenance', async () => {
    const r = await h.ingest('e2e', [{ participantId: P1, text: "we've just moved, to Geneva" }]);
    await h.system.jobs.drain();
    const homes = (await factsOf(h, 'e2e', [P1], 'social')).filter((m) => m.fact.key === 'speaker.home');
    expect(homes).toHaveLength(2);
    const current = homes.find((m) => m.supersededAt === null)!;
    const old = homes.find((m) => m.supersededAt !== null)!;
    expect(current.fact.value).toBe('Geneva');
    expect(current.fact.summary).toBe("You've just moved, to Geneva.");
    expect(current.supersedes).toBe(old.id);
    expect(current.derivedFrom).toEqual([r.body.ids[0]]);
    expect(old.fact.value).toBe('Oslo');
    // A social fact persists across games: another game of the same npc sees the current one.
    const elsewhere = await h.call('POST', '/v1/npcs/npc-mara/search', await h.token('another-game', [P1]), { text: 'where do I live', k: 10, tiers: ['social'] });
    expect(elsewhere.body.memories.map((m: any) => m.fact.value)).toContain('Geneva');
    expect(elsewhere.body.memories.map((m: any) => m.fact.value)).not.toContain('Oslo');
  });

  it('reinforces a repeated fact instead of duplicating it; "I am the emperor" stays a low-confidence claim however often it is said', async () => {
    for (let i = 0; i < 4; i++) await h.ingest('e2e', [{ participantId: P1, text: "I'm the emperor, and I'm Alex" }]);
    await h.system.jobs.drain();
    const social = (await factsOf(h, 'e2e', [P1], 'social')).filter((m) => m.supersededAt === null);
    const names = social.filter((m) => m.fact.key === 'speaker.name');
    expect(names).toHaveLength(1);
    expect(names[0].fact.value).toBe('Alex');
    expect(names[0].derivedFrom.length).toBeGreaterThan(1);
    // Whatever its key, the grand title is one fact, never more sure than a claim (0.3).
    const claim = social.filter((m) => /emperor/i.test(m.fact.value));
    expect(claim.map((m) => m.fact.summary)).toEqual(['You claim to be the emperor.']);
    expect(claim[0].confidence).toBeLessThanOrEqual(0.3);
  });

  it('consolidates each episode once: a job run again finds nothing new', async () => {
    const before = (await factsOf(h, 'e2e', [P1, P2], 'social')).length;
    const report = await h.system.consolidator.consolidate({ tenantId: h.tenantId, gameId: 'e2e', npcId: 'npc-mara' });
    expect(report.episodes).toBe(0);
    expect((await factsOf(h, 'e2e', [P1, P2], 'social')).length).toBe(before);
  });

  it('summarizes the session in one game-bound fact, superseded at each batch, keeping the major events', async () => {
    const summaries = (await factsOf(h, 'e2e', [], 'clue')).filter((m) => m.fact.key === 'session.summary');
    const current = summaries.filter((m) => m.supersededAt === null);
    expect(current).toHaveLength(1);
    expect(summaries.length).toBeGreaterThan(1);
    // Ten messages to npc-mara; the major events in the words said back to their speakers.
    // The summary is a clue every participant of the game hears: personal facts never enter it.
    expect(current[0].fact.summary).toBe('10 messages so far');
    expect(current[0].retention).toBe('session_only');
  });
});
