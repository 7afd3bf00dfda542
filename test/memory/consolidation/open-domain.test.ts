/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read as loose JSON */
/**
 * The open-domain offline extractor end to end: lines ingested over HTTP, consolidated by the
 * job queue, read back through the memory and context endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { factsOf, harness, type Harness } from '../lifecycle/support.js';
import { msg } from '../context/harness.js';
import type { ContextWindow } from '../../../src/boundary/context.js';
import { CONFIDENT } from '../../../src/memory/embeddings/topics.js';

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

/** Current facts only (neither superseded nor invalidated). */
const current = (facts: any[]) => facts.filter((m) => m.supersededAt === null && m.invalidatedAt === null);

/** The context window of npc-mara for a game token of `participants`, the last line being `last`. */
async function context(gameId: string, participants: { participantId: string; anonymous: boolean }[], last: { participantId: string; text: string }): Promise<ContextWindow> {
  const token = await h.token(gameId, participants.map((p) => p.participantId));
  const r = await h.call('POST', '/v1/npcs/npc-mara/context', token, {
    roomId: 'library',
    participants,
    messages: [msg(1, last.participantId, last.text, true)],
    state: { version: 1, facts: {} },
  });
  if (r.status !== 200) throw new Error(`context: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as ContextWindow;
}

/** What a participant's current facts say after `told` was consolidated, then `update` (each its own batch). */
async function summariesAfter(gameId: string, participantId: string, told: string[], update: string): Promise<string[]> {
  await h.ingest(gameId, told.map((text) => ({ participantId, text })));
  await h.system.jobs.drain();
  await h.ingest(gameId, [{ participantId, text: update }]);
  await h.system.jobs.drain();
  return current(await factsOf(h, gameId, [participantId], 'social')).map((m) => m.fact.summary);
}

/** Clue rows of a game that hold a game detail (not the session summary), straight from the table. */
async function gameClueKeys(gameId: string): Promise<string[]> {
  const { rows } = await database.db.query<{ fact_key: string }>(
    "SELECT fact_key FROM memory.clues WHERE tenant_id = $1 AND game_id = $2 AND fact_key <> 'session.summary' ORDER BY fact_key",
    [h.tenantId, gameId],
  );
  return rows.map((r) => r.fact_key);
}

describe('open-domain extraction, end to end', () => {
  it('turns a line with several self-disclosures and filler into one social fact per clause, said back in the second person, with no @mention and no filler', async () => {
    const P = 'part-bees00001';
    const r = await h.ingest('od-clauses', [
      { participantId: P, text: '@Tobias hello there, I keep bees on a rooftop in Lyon' },
      { participantId: P, text: "ugh I'm so allergic to cats lol and my little sister Mia would love this room" },
    ]);
    expect(r.status).toBe(200);
    await h.system.jobs.drain();
    const social = await factsOf(h, 'od-clauses', [P], 'social');
    expect(social.map((m) => ({ key: m.fact.key, value: m.fact.value, summary: m.fact.summary })).sort((a, b) => a.value.localeCompare(b.value))).toEqual([
      { key: 'speaker.allergy.allergic-cat', value: 'are so allergic to cats', summary: 'You are so allergic to cats.' },
      // No word of it names a topic: the one nearest its meaning is in its key.
      { key: expect.stringMatching(/^speaker\.[a-z]+\.keep-bee-rooftop$/), value: 'keep bees on a rooftop in Lyon', summary: 'You keep bees on a rooftop in Lyon.' },
      // Where the clause places the speaker is their home too, however it was put.
      { key: 'speaker.home', value: 'Lyon', summary: 'You keep bees on a rooftop in Lyon.' },
      { key: 'speaker.family.sister', value: 'Your little sister Mia would love this room', summary: 'Your little sister Mia would love this room.' },
    ]);
    for (const m of social) {
      for (const text of [m.fact.value, m.fact.summary]) {
        expect(text).not.toMatch(/@|Tobias|\b(?:hello|there|ugh|lol)\b/i);
        expect(text).not.toMatch(/\b(?:I|I'm|my)\b/); // said back to the speaker, never in their own voice
      }
      expect(m.participantId).toBe(P);
    }
    // The first line is one episode, the second line another: each fact links its own.
    const bees = (m: { fact: { summary: string } }) => m.fact.summary.includes('bees');
    expect(social.filter(bees).map((m) => m.derivedFrom)).toEqual([[r.body.ids[0]], [r.body.ids[0]]]);
    expect(social.filter((m) => !bees(m)).map((m) => m.derivedFrom)).toEqual([[r.body.ids[1]], [r.body.ids[1]]]);
  });

  it('keeps where a speaker comes from and where they live now in two slots', async () => {
    const P = 'part-halifax01';
    await h.ingest('od-origin', [{ participantId: P, text: 'grew up just outside Halifax tbh but I live in Oslo now' }]);
    await h.system.jobs.drain();
    const social = await factsOf(h, 'od-origin', [P], 'social');
    expect(social.map((m) => [m.fact.key, m.fact.value, m.fact.summary]).sort()).toEqual([
      ['speaker.home', 'Oslo', 'You live in Oslo now.'],
      ['speaker.origin', 'Halifax', 'You grew up just outside Halifax.'],
    ]);
    expect(current(social)).toHaveLength(2);
  });

  it('supersedes the home when the speaker moves ("we\'ve just moved house, to Geneva"), keeping the old one as history', async () => {
    const P = 'part-geneva001';
    await h.ingest('od-move', [{ participantId: P, text: 'I live in Oslo' }]);
    await h.system.jobs.drain();
    await h.ingest('od-move', [{ participantId: P, text: "we've just moved house, to Geneva" }]);
    await h.system.jobs.drain();
    const homes = (await factsOf(h, 'od-move', [P], 'social')).filter((m) => m.fact.key === 'speaker.home');
    expect(homes).toHaveLength(2);
    const now = homes.find((m) => m.supersededAt === null);
    const before = homes.find((m) => m.supersededAt !== null);
    expect(now.fact).toEqual({ key: 'speaker.home', value: 'Geneva', summary: "You've just moved house, to Geneva." });
    expect(before.fact.value).toBe('Oslo');
    expect(now.supersedes).toBe(before.id);
    expect(before.invalidatedAt).toBeNull(); // history, not erased
    // Only the new home is current: a context window in another game shows Geneva, never Oslo.
    const w = await context('od-move-later', [{ participantId: P, anonymous: false }], { participantId: P, text: 'where do I live?' });
    const values = w.participants[P]!.facts.map((f) => f.value);
    expect(values).toContain('Geneva');
    expect(values).not.toContain('Oslo');
  });

  it('keeps a line of work told without naming it beside the occupation\'s value, and lets the next job replace it too', async () => {
    const P = 'part-shifts001';
    await h.ingest('od-shifts', [{ participantId: P, text: 'the night shifts at the warehouse are wearing me down' }]);
    await h.system.jobs.drain();
    const before = current(await factsOf(h, 'od-shifts', [P], 'social'));
    // No line of work is named: the fact is of the occupation, under a key of its own, not the slot's value.
    expect(before.map((m) => m.fact.key)).toEqual([expect.stringMatching(/^speaker\.occupation\.[a-z-]+$/)]);
    await h.ingest('od-shifts', [{ participantId: P, text: "I'm a baker now" }]);
    await h.system.jobs.drain();
    const jobs = (await factsOf(h, 'od-shifts', [P], 'social')).filter((m) => m.fact.key.startsWith('speaker.occupation'));
    expect(jobs.map((m) => ({ key: m.fact.key, summary: m.fact.summary, current: m.supersededAt === null && m.invalidatedAt === null })).sort((a, b) => Number(a.current) - Number(b.current))).toEqual([
      { key: before[0]!.fact.key, summary: 'The night shifts at the warehouse are wearing you down.', current: false },
      { key: 'speaker.occupation', summary: 'You are a baker now.', current: true },
    ]);
  });

  it('lets a value read from meaning without a confident vote stand beside the slot\'s value, never replace it', async () => {
    const P = 'part-origin001';
    await h.ingest('od-origin', [{ participantId: P, text: 'i grew up in columbus ohio' }]);
    await h.system.jobs.drain();
    // Nothing in its words names an origin; its meaning leans that way, weakly.
    await h.ingest('od-origin', [{ participantId: P, text: 'joining from warsaw' }]);
    await h.system.jobs.drain();
    const facts = current(await factsOf(h, 'od-origin', [P], 'social'));
    expect(facts.find((m) => m.fact.key === 'speaker.origin')?.fact.summary).toBe('You grew up in Columbus Ohio.');
    expect(facts.some((m) => /warsaw/i.test(m.fact.summary))).toBe(true);
  });

  it('keeps a place-less line about home beside where the speaker lives, never replacing it', async () => {
    const P = 'part-flat00001';
    await h.ingest('od-flat', [{ participantId: P, text: 'I live in Canaryville' }]);
    await h.system.jobs.drain();
    await h.ingest('od-flat', [{ participantId: P, text: 'my flat is freezing, the heating died' }]);
    await h.system.jobs.drain();
    const home = current(await factsOf(h, 'od-flat', [P], 'social')).filter((m) => m.fact.key.startsWith('speaker.home'));
    expect(home.map((m) => m.fact.key).sort()).toEqual(['speaker.home', expect.stringMatching(/^speaker\.home\./)]);
    expect(home.find((m) => m.fact.key === 'speaker.home')!.fact.value).toBe('Canaryville');
  });

  it('takes where a line places the speaker as their home ("good evening from lagos"), but never over a home they named', async () => {
    const P = 'part-lagos0001';
    await h.ingest('od-lagos', [{ participantId: P, text: '@Elias good evening from lagos, power came back just in time lol' }]);
    await h.system.jobs.drain();
    const first = current(await factsOf(h, 'od-lagos', [P], 'social'));
    expect(first.map((m) => [m.fact.key, m.fact.value])).toEqual([['speaker.home', 'Lagos']]);
    const Q = 'part-oslolyon1';
    await h.ingest('od-lyon', [{ participantId: Q, text: 'I live in Oslo' }]);
    await h.system.jobs.drain();
    await h.ingest('od-lyon', [{ participantId: Q, text: 'I keep bees on a rooftop in lyon' }]);
    await h.system.jobs.drain();
    const home = current(await factsOf(h, 'od-lyon', [Q], 'social')).filter((m) => m.fact.key.startsWith('speaker.home'));
    expect(home.find((m) => m.fact.key === 'speaker.home')!.fact.value).toBe('Oslo');
    expect(home.map((m) => m.fact.value)).toContain('Lyon');
  });

  it('takes a question\'s topic from its meaning alone only when the reading is confident; a weak reading names no topic', async () => {
    const P = 'part-weakread1';
    const read = async (text: string) => {
      const [vector] = await h.system.embedder.embed([text]);
      return (await h.system.service.topics.classify([vector!], 'question'))[0];
    };
    const asked = async (text: string) => (await context('od-weak', [{ participantId: P, anonymous: false }], { participantId: P, text })).retrieval;
    // Words name no topic in either; meaning reads one, surely for the first and weakly for the second.
    const sure = 'who barks at the postman every morning?';
    const weak = "what's my deal?";
    expect((await read(sure))!.confidence).toBeGreaterThanOrEqual(CONFIDENT);
    expect((await read(weak))?.confidence ?? 0).toBeLessThan(CONFIDENT);
    expect(await asked(sure)).toMatchObject({ topic: (await read(sure))!.topic, topicFrom: 'meaning' });
    expect((await asked(weak))?.topic).toBeUndefined();
  });

  it('reads what a question asks about without what it sets apart ("what keeps me busy outside of my job?" is not about the job)', async () => {
    const P = 'part-apart0001';
    await h.ingest('od-apart', [{ participantId: P, text: 'i work as a canary keeper at the zoo' }, { participantId: P, text: "I'm obsessed with archery lately" }]);
    await h.system.jobs.drain();
    const window = await context('od-apart', [{ participantId: P, anonymous: false }], { participantId: P, text: 'what keeps me busy outside of my job?' });
    expect(window.retrieval?.topic).not.toBe('occupation');
    const facts = window.participants[P]!.facts;
    const match = (re: RegExp) => facts.find((f) => re.test(f.summary))?.match ?? -1;
    expect(match(/archery/)).toBeGreaterThan(match(/canary keeper/));
  });

  it('invalidates the fact about the husband, and only it, on "forget what I said about my husband"; "scrap that" invalidates the speaker\'s last fact', async () => {
    const P = 'part-forget001';
    await h.ingest('od-forget', [
      { participantId: P, text: 'my husband Tom is a chef' },
      { participantId: P, text: 'I have a dog called Rex' },
      { participantId: P, text: 'I live in Oslo' },
    ]);
    await h.system.jobs.drain();
    await h.ingest('od-forget', [{ participantId: P, text: 'forget what I said about my husband' }]);
    await h.system.jobs.drain();
    let social = await factsOf(h, 'od-forget', [P], 'social');
    expect(social.filter((m) => m.invalidatedAt !== null).map((m) => [m.fact.key, m.fact.value])).toEqual([['speaker.family.husband', 'Your husband Tom is a chef']]);
    expect(current(social).map((m) => m.fact.key).sort()).toEqual(['speaker.home', 'speaker.pet.dog']);
    // The request itself is no fact about the speaker.
    expect(social).toHaveLength(3);

    await h.ingest('od-forget', [{ participantId: P, text: "I'm allergic to shellfish" }]);
    await h.system.jobs.drain();
    await h.ingest('od-forget', [{ participantId: P, text: 'scrap that' }]);
    await h.system.jobs.drain();
    social = await factsOf(h, 'od-forget', [P], 'social');
    expect(social.filter((m) => m.invalidatedAt !== null).map((m) => m.fact.key).sort()).toEqual(['speaker.allergy.allergic-shellfish', 'speaker.family.husband']);
    expect(current(social).map((m) => m.fact.key).sort()).toEqual(['speaker.home', 'speaker.pet.dog']);
  });

  it('lets "scrap that" invalidate every fact of the line said last, both of a clause that gave two', async () => {
    const P = 'part-scrap0001';
    await h.ingest('od-scrap', [{ participantId: P, text: 'I have a dog called Rex' }]);
    await h.system.jobs.drain();
    await h.ingest('od-scrap', [{ participantId: P, text: 'I keep bees on a rooftop in lyon' }]);
    await h.system.jobs.drain();
    expect(current(await factsOf(h, 'od-scrap', [P], 'social'))).toHaveLength(3);
    await h.ingest('od-scrap', [{ participantId: P, text: 'scrap that' }]);
    await h.system.jobs.drain();
    expect(current(await factsOf(h, 'od-scrap', [P], 'social')).map((m) => m.fact.summary)).toEqual(['You have a dog called Rex.']);
  });

  it('keeps what a line tells beside a request to forget, and applies the request only to what was said before the line ("scrap that, we moved to Geneva")', async () => {
    const P = 'part-scrap0002';
    // (Told in two batches: which of two lines consolidated together was said last is not kept.)
    await h.ingest('od-scrap2', [{ participantId: P, text: 'I have a dog called Rex' }]);
    await h.system.jobs.drain();
    const now = await summariesAfter('od-scrap2', P, ['we live in Lyon'], 'actually scrap that, we moved to Geneva last month');
    expect(now.some((s) => /Geneva/.test(s))).toBe(true);
    expect(now.some((s) => /Lyon/.test(s))).toBe(false);
    expect(now).toContain('You have a dog called Rex.');
  });

  it('takes a request to forget that follows a comma, and "forget everything about my ..." as the speaker\'s own request, not an attack on the NPC', async () => {
    const P = 'part-forget002';
    const now = await summariesAfter('od-forget2', P, ['my sister Vey lives in Graz', 'i support Benfica, have done since i was a kid'], 'sorry I overshared, forget everything about the team I support');
    expect(now.some((s) => /Benfica/.test(s))).toBe(false);
    expect(now.some((s) => /Vey/.test(s))).toBe(true);
  });

  it('does not read a past-tense forget verb as a request ("work got busy, dropped the gym" tells what the speaker did)', async () => {
    const P = 'part-drop00001';
    const now = await summariesAfter('od-drop', P, ['my sister Vey lives in Graz'], 'work got busy, dropped the gym, I swim every morning now');
    expect(now.some((s) => /Vey/.test(s))).toBe(true);
    expect(now.some((s) => /swim/.test(s))).toBe(true);
  });

  it('lets an update line replace every fact of its topic that names what it leaves behind, even told in its own clause ("gave up juggling, doing snorkeling now")', async () => {
    const P = 'part-swap0001';
    const now = await summariesAfter('od-swap', P, ['took up juggling last year and I am hooked', 'my sister Vey lives in Graz'], 'gave up juggling, doing snorkeling now');
    expect(now.filter((s: string) => /juggl/i.test(s))).toEqual([]);
    expect(now.some((s: string) => /snorkeling/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true); // another topic: untouched
  });

  it('never lets an update replace a fact of a topic only guessed for it from meaning ("seeing someone called Rowan now" is no pet)', async () => {
    const P = 'part-guess001';
    const now = await summariesAfter('od-guess', P, ['we adopted a greyhound named Bolt'], "i'm seeing someone called Rowan now");
    expect(now.some((s: string) => /Bolt/.test(s))).toBe(true);
    expect(now.some((s: string) => /Rowan/.test(s))).toBe(true);
  });

  it('moves the home on "we finally left glasgow, just moved into a place in cardiff" in one batch, keeping where the speaker grew up', async () => {
    const P = 'part-left0001';
    await h.ingest('od-left', [{ participantId: P, text: 'things are hectic up in glasgow' }, { participantId: P, text: 'i grew up in lagos' }]);
    await h.system.jobs.drain();
    await h.ingest('od-left', [{ participantId: P, text: 'big news, we finally left glasgow, just moved into a place in cardiff' }]);
    const runs = await h.system.jobs.drain();
    expect(runs.map((r) => r.outcome)).toEqual(['done']);
    const now = current(await factsOf(h, 'od-left', [P], 'social'));
    expect(now.find((m) => m.fact.key === 'speaker.home')?.fact.summary).toMatch(/Cardiff/i);
    expect(now.find((m) => m.fact.key === 'speaker.origin')?.fact.summary).toMatch(/Lagos/i);
    expect(now.some((m) => m.fact.key.startsWith('speaker.home') && /Glasgow/i.test(m.fact.summary) && !/left/.test(m.fact.summary))).toBe(false);
  });

  it('never lets an update replace another fact of its own line ("my sister Vey lives in Canarytown, and I\'m doing canaryball now")', async () => {
    const P = 'part-line0001';
    await h.ingest('od-line', [{ participantId: P, text: "my sister Vey lives in Canarytown, and I'm doing canaryball now" }]);
    await h.system.jobs.drain();
    const now = current(await factsOf(h, 'od-line', [P], 'social')).map((m) => m.fact.summary);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
    expect(now.some((s: string) => /canaryball/.test(s))).toBe(true);
  });

  it('forgets about a sibling without forgetting the husband: a partner and a relative are two sides of a family', async () => {
    const P = 'part-kin00001';
    await h.ingest('od-kin', [{ participantId: P, text: 'my husband Oren is making dinner while I play' }, { participantId: P, text: 'my little brother Ilo would love this' }]);
    await h.system.jobs.drain();
    await h.ingest('od-kin', [{ participantId: P, text: 'forget what I said about my sibling' }]);
    await h.system.jobs.drain();
    const social = await factsOf(h, 'od-kin', [P], 'social');
    expect(social.filter((m) => m.invalidatedAt !== null).map((m) => m.fact.key)).toEqual(['speaker.family.brother']);
    expect(current(social).map((m) => m.fact.key)).toEqual(['speaker.family.husband']);
  });

  it('never takes a lowercase word after "called" for a name, and never captures an @mention into a value', async () => {
    const P = 'part-called001';
    await h.ingest('od-called', [
      { participantId: P, text: 'my husband is called forget-me-not guy' },
      { participantId: P, text: "@Elias I'm allergic to shellfish" },
    ]);
    await h.system.jobs.drain();
    const social = await factsOf(h, 'od-called', [P], 'social');
    // Not a request to forget either: both facts are current.
    expect(current(social).map((m) => m.fact.key).sort()).toEqual(['speaker.allergy.allergic-shellfish', 'speaker.family.husband']);
    for (const m of social) {
      expect(m.fact.value).not.toMatch(/\bForget\b/);
      expect(`${m.fact.value} ${m.fact.summary}`).not.toMatch(/Elias|@/);
    }
    expect(social.find((m) => m.fact.key === 'speaker.allergy.allergic-shellfish').fact).toMatchObject({ value: 'are allergic to shellfish', summary: 'You are allergic to shellfish.' });
    // The nickname is kept as it was said, lowercase and whole.
    expect(social.find((m) => m.fact.key === 'speaker.family.husband').fact.value).toBe('Your husband is called forget-me-not guy');
  });

  it('keeps "my wife\'s called Nadia, the puzzle genius of the two of us" a social fact of the speaker, while a code and a find are clues; the other participant\'s window holds nothing about Nadia', async () => {
    const A = 'part-nadia0001';
    const B = 'part-other0002';
    await h.ingest('od-nadia', [{ participantId: A, text: "my wife's called Nadia, the puzzle genius of the two of us" }]);
    await h.system.jobs.drain();
    expect(await gameClueKeys('od-nadia')).toEqual([]);
    const social = await factsOf(h, 'od-nadia', [A], 'social');
    expect(social.map((m) => m.fact)).toEqual([
      { key: 'speaker.family.wife', value: "Your wife's called Nadia, the puzzle genius of the two of you", summary: "Your wife's called Nadia, the puzzle genius of the two of you." },
    ]);

    await h.ingest('od-nadia', [
      { participantId: A, text: 'I think the code is 4792' },
      { participantId: A, text: 'I found the key behind the painting' },
    ]);
    await h.system.jobs.drain();
    expect(await gameClueKeys('od-nadia')).toEqual(['game.code', 'game.solution']);
    const clues = (await factsOf(h, 'od-nadia', [], 'clue')).filter((m) => m.fact.key !== 'session.summary');
    expect(clues.map((m) => [m.fact.key, m.fact.value]).sort()).toEqual([
      ['game.code', 'I think the code is 4792'],
      ['game.solution', 'I found the key behind the painting'],
    ]);
    expect(await factsOf(h, 'od-nadia', [A], 'social')).toHaveLength(1); // the clues are no social facts

    // B plays the same game: the game's clues are B's too, A's wife is not.
    const w = await context('od-nadia', [{ participantId: B, anonymous: false }], { participantId: B, text: 'who is good at puzzles around here?' });
    expect(Object.keys(w.participants)).toEqual([B]);
    expect(w.clues.map((c) => c.value)).toEqual(expect.arrayContaining(['I think the code is 4792', 'I found the key behind the painting']));
    // (The room's own lines of this game, `episodes`, are the game's transcript, heard by everyone
    // in it; what consolidation made of them is what must not cross over.)
    const memory = JSON.stringify({ clues: w.clues, participants: w.participants, lore: w.lore, directives: w.directives });
    for (const trace of ['Nadia', 'puzzle genius', 'wife', A]) expect(memory).not.toContain(trace);
  });

  describe('anonymous speakers', () => {
    const first = 'anon-vespa-session-a1';

    it('keeps an anonymous speaker\'s story only as a fragment: no participant, no game', async () => {
      await h.ingest('od-anon-a', [{ participantId: first, text: "I rebuilt my grandmother's 1958 Vespa", anonymous: true }]);
      await h.system.jobs.drain();
      expect(await gameClueKeys('od-anon-a')).toEqual([]);
      expect(await factsOf(h, 'od-anon-a', [first], 'social')).toEqual([]);
      const fragments = (await factsOf(h, 'od-anon-a', [], 'fragment')).filter((m) => /rebuilt/i.test(m.fact.value));
      expect(fragments.map((m) => ({ tier: m.tier, participantId: m.participantId, gameId: m.gameId, value: m.fact.value, summary: m.fact.summary }))).toEqual([
        {
          tier: 'fragment',
          participantId: null,
          gameId: null,
          value: "they rebuilt their grandmother's 1958 Vespa",
          summary: "someone told me they rebuilt their grandmother's 1958 Vespa",
        },
      ]);
    });

    it('gives another anonymous speaker of another game who fixes up an old Vespa the uncertain-reconstruction directive', async () => {
      const second = 'anon-vespa-session-b2';
      const w = await context('od-anon-b', [{ participantId: second, anonymous: true }], { participantId: second, text: "I'm fixing up an old Vespa" });
      expect(w.directives.map((d) => d.kind)).toContain('uncertain_reconstruction');
      const text = JSON.stringify(w);
      for (const trace of [first, 'od-anon-a', 'grandmother', '1958']) expect(text).not.toContain(trace);
    });

    it('gives no such directive for an unrelated anonymous line ("the weather is awful today")', async () => {
      const third = 'anon-weather-session-c3';
      const w = await context('od-anon-b', [{ participantId: third, anonymous: true }], { participantId: third, text: 'the weather is awful today' });
      expect(w.directives.map((d) => d.kind)).not.toContain('uncertain_reconstruction');
    });
  });

  it('lets a line saying what ended and what replaced it ("the canarycar finally died, picked up a used Mazda") replace the old value, of any topic', async () => {
    const P = 'part-ended0001';
    const now = await summariesAfter('od-ended', P, ['my old canarycar is older than some of you lol', 'my sister Vey lives in Graz'], 'the canarycar finally died rip, picked up a used Mazda yesterday');
    expect(now.filter((s: string) => /canarycar/i.test(s))).toEqual([]);
    expect(now.some((s: string) => /Mazda/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
  });

  it('reads a relationship broken up as an ending: "canaryjo and i split up, seeing someone called Orrin now" leaves only Orrin as the partner', async () => {
    const P = 'part-split0001';
    const now = await summariesAfter('od-split', P, ['me and my boyfriend Canaryjo have been together three years', 'my sister Vey lives in Graz'], 'canaryjo and i split up, seeing someone called Orrin now');
    expect(now.filter((s: string) => /canaryjo/i.test(s))).toEqual([]);
    expect(now.some((s: string) => /Orrin/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
  });

  it('reads a verb in the past tense as an ending by a less frequent sense of it ("dropped italian, doing Greek lessons now")', async () => {
    const P = 'part-kick00001';
    const now = await summariesAfter('od-kick', P, ["i've been learning Italian for a year", 'my sister Vey lives in Graz'], 'dropped italian, doing Greek lessons now');
    // What ended is what the update replaces, not a fact of its own ("You dropped italian").
    expect(now.some((s) => /italian/i.test(s))).toBe(false);
    expect(now.some((s) => /Greek/.test(s))).toBe(true);
    expect(now.some((s) => /Vey/.test(s))).toBe(true);
  });

  it('lets an update replace the fact naming what its line left, whatever topic each was filed under ("left the garden centre, i\'m a postwoman now")', async () => {
    const P = 'part-left0002';
    const now = await summariesAfter('od-left2', P, ['i work the tills at a garden centre', 'my sister Vey lives in Graz'], "left the garden centre, i'm a postwoman now");
    expect(now.filter((s: string) => /tills/.test(s))).toEqual([]);
    expect(now.some((s: string) => /postwoman/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
  });

  it('lets any later line that names what an earlier fact named, beside something new, replace it, and says only what is now ("nibbles passed :( we got a kitten, her name\'s Mochi")', async () => {
    const P = 'part-named0001';
    const now = await summariesAfter('od-named', P, ['i have a hamster called Nibbles, hes tiny and evil', 'my sister Vey lives in Graz'], "@Mara sad news, nibbles passed :( we got a kitten, her name's Mochi");
    expect(now.filter((s: string) => /nibbles/i.test(s))).toEqual([]);
    expect(now.some((s: string) => /kitten, her name's Mochi/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
  });

  it('lets a line that says only what ended ("I quit deloitte") end the fact it names without becoming a fact of now, and keeps one that ends nothing told', async () => {
    const P = 'part-ended0003';
    const now = await summariesAfter('od-ended3', P, ['i work at Deloitte, consulting, as boring as it sounds', 'my sister Vey lives in Graz'], '@Mara I quit deloitte');
    expect(now.filter((s: string) => /deloitte/i.test(s))).toEqual([]);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
    const Q = 'part-ended0004';
    expect((await summariesAfter('od-ended4', Q, ['my sister Vey lives in Graz'], 'I sold my canarybike')).some((s: string) => /sold your canarybike/i.test(s))).toBe(true);
  });

  it('never lets a later line replace an earlier fact by a common noun the two share ("puzzle nerd by night", "my sister thinks I\'m a nerd")', async () => {
    const P = 'part-named0003';
    const now = await summariesAfter('od-named3', P, ['paramedic by trade, puzzle nerd by night'], 'my kid sister Zoe thinks im a nerd for playing this');
    expect(now.some((s: string) => /paramedic/i.test(s))).toBe(true);
    expect(now.some((s: string) => /Zoe/.test(s))).toBe(true);
  });

  it('never lets a later line naming the town a speaker comes from replace where they come from ("left glasgow in march, got a flat in Valencia")', async () => {
    const P = 'part-named0002';
    await summariesAfter('od-named2', P, ['im from Glasgow btw, born and raised'], 'quick update @Mara, left glasgow in march, got a flat in Valencia');
    const facts = current(await factsOf(h, 'od-named2', [P], 'social'));
    expect(facts.some((m: any) => m.fact.key === 'speaker.origin' && /Glasgow/.test(m.fact.summary))).toBe(true);
    expect(facts.some((m: any) => /Valencia/.test(m.fact.summary))).toBe(true);
  });

  it('lets an update replace the fact nearest in meaning to what its line says ended ("gave up the swimming" ends "I swim every morning"), and no other', async () => {
    const P = 'part-ended0002';
    const now = await summariesAfter('od-ended2', P, ['i swim every morning before work', 'my sister Vey lives in Graz', 'i play the cello in an orchestra'], "gave up the swimming, i'm into bouldering now");
    expect(now.filter((s: string) => /swim/.test(s))).toEqual([]);
    expect(now.some((s: string) => /bouldering/.test(s))).toBe(true);
    expect(now.some((s: string) => /Vey/.test(s))).toBe(true);
    expect(now.some((s: string) => /cello/.test(s))).toBe(true);
  });

  it('compares what a line says ended with the facts without the verb that says so: "i quit coffee" ends no job ("quit" is near a hard shift, coffee is not)', async () => {
    const P = 'part-ended0003';
    const now = await summariesAfter('od-ended3', P, ['sry im slow tonight, just got off a 12hr shift at the bakery, baking is brutal lol'], 'oh btw i quit coffee, matcha every morning now, way less jittery');
    expect(now.some((s: string) => /bakery/.test(s))).toBe(true);
    expect(now.some((s: string) => /matcha/.test(s))).toBe(true);
  });

  it('names, for a question asking for a kind of thing, the word of each of the asker\'s facts that is one ("Denver" for "which city?"), whatever topic the fact was filed under', async () => {
    const P = 'part-kinds0001';
    await h.ingest('od-kinds', [
      { participantId: P, text: 'i go rock climbing every weekend at the gym here in denver' },
      { participantId: P, text: 'asante lol, sorry i switch to swahili when im tired' },
    ]);
    await h.system.jobs.drain();
    const city = await context('od-kinds', [{ participantId: P, anonymous: false }], { participantId: P, text: 'which city do i call home?' });
    expect(city.retrieval?.asksFor).toBe('city');
    expect(city.participants[P]!.facts.filter((f) => f.names).map((f) => f.names)).toEqual(['Denver']);
    const language = await context('od-kinds', [{ participantId: P, anonymous: false }], { participantId: P, text: 'what language do i speak?' });
    expect(language.participants[P]!.facts.filter((f) => f.names).map((f) => f.names)).toEqual(['swahili']);
    // A language said as an adjective ("doing korean now") names one too.
    await h.ingest('od-kinds', [{ participantId: P, text: 'gave up on spanish lol, doing korean now' }]);
    await h.system.jobs.drain();
    const studying = await context('od-kinds', [{ participantId: P, anonymous: false }], { participantId: P, text: 'what language am i studying?' });
    expect(studying.participants[P]!.facts.filter((f) => f.names).map((f) => f.names!.toLowerCase()).sort()).toEqual(['korean', 'swahili']);
    // A kind WordNet puts at its top (an animal, an act) tells too little: no word is named for it.
    const animal = await context('od-kinds', [{ participantId: P, anonymous: false }], { participantId: P, text: 'which animal do i have?' });
    expect(animal.retrieval?.asksFor).toBeUndefined();
    expect(animal.participants[P]!.facts.some((f) => f.names !== undefined)).toBe(false);
  });

  it('gives every social fact of the window its match with the last line said and the answer threshold; "what am I afraid of?" matches the spider fact best', async () => {
    const P = 'part-spider001';
    await h.ingest('od-match', [
      { participantId: P, text: "I'm honestly terrified of spiders" },
      { participantId: P, text: 'I keep bees on a rooftop in Lyon' },
      { participantId: P, text: 'I live in Oslo' },
      { participantId: P, text: 'my husband Tom is a chef' },
      { participantId: P, text: 'I love sailing' },
    ]);
    await h.system.jobs.drain();
    const w = await context('od-match', [{ participantId: P, anonymous: false }], { participantId: P, text: 'what am I afraid of?' });
    // The question names its topic by its words; the window says which.
    expect(w.retrieval).toEqual({ embedder: expect.any(String), answerThreshold: expect.any(Number), topic: 'fear', topicFrom: 'words' });
    const facts = w.participants[P]!.facts;
    expect(facts).toHaveLength(5);
    for (const f of facts) {
      expect(f.match).toEqual(expect.any(Number));
      expect(f.match!).toBeGreaterThanOrEqual(-1);
      expect(f.match!).toBeLessThanOrEqual(1);
    }
    const best = [...facts].sort((a, b) => b.match! - a.match!)[0]!;
    expect(best).toMatchObject({ key: 'speaker.fear.terrify-spider', value: 'are honestly terrified of spiders', summary: 'You are honestly terrified of spiders.' });
    expect(best.match!).toBeGreaterThanOrEqual(w.retrieval!.answerThreshold);
  });
});
