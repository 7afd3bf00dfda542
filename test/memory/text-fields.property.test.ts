import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isText, nastyText as nasty } from '../helpers/text.js';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('every text field of the memory service, with arbitrary strings', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;
  let token: string;
  let adminKey: string;
  let n = 0;
  const NPC = 'npc-mara';
  const P = 'part-prop00001';

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
    const { tenantId, adminKey: admin } = await createTenant(database.db, `studio-${Math.random().toString(36).slice(2)}`);
    adminKey = admin;
    ({ token } = await system.credentials.issueGameToken(tenantId, 'prop-game', [P], 3600));
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  const post = (url: string, payload: unknown) =>
    system.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

  it('never answers 5xx, refuses what is not text with 400, and stores an event, a fact and a search exactly as sent', async () => {
    const counts = { events: 0, facts: 0 };
    await fc.assert(
      fc.asyncProperty(nasty, async (text) => {
        const event = await post('/v1/events', { idempotencyKey: `prop-${++n}-key`, events: [{ gameId: 'prop-game', roomId: 'hall', npcId: NPC, participantId: P, ts: 1_700_000_000, text, targeted: true }] });
        expect(event.statusCode).toBeLessThan(500);
        if (!isText(text)) expect(event.json()).toMatchObject({ error: { code: 'INVALID_TEXT' } });
        if (event.statusCode === 200) {
          const [id] = event.json<{ ids: string[] }>().ids;
          const stored = await system.app.inject({ method: 'GET', url: `/v1/npcs/${NPC}/memories/${id}`, headers: { authorization: `Bearer ${token}` } });
          expect(stored.json<{ memory: { text: string } }>().memory.text).toBe(text);
          counts.events++;
        }
        const fact = await post(`/v1/npcs/${NPC}/facts`, { tier: 'clue', key: `clue.prop${n}`, value: text, summary: text, source: 'player_statement', confidence: 0.5, importance: 0.5, retention: 'permanent' });
        expect(fact.statusCode).toBeLessThan(500);
        if (!isText(text)) expect(fact.statusCode).toBe(400);
        if (fact.statusCode === 201) {
          const { memory } = fact.json<{ memory: { id: string } }>();
          const stored = await system.app.inject({ method: 'GET', url: `/v1/npcs/${NPC}/memories/${memory.id}`, headers: { authorization: `Bearer ${token}` } });
          expect(stored.json<{ memory: { fact: { value: string; summary: string } } }>().memory.fact).toMatchObject({ value: text, summary: text });
          counts.facts++;
        }
        const search = await post(`/v1/npcs/${NPC}/search`, { text });
        expect(search.statusCode).toBeLessThan(500);
        if (!isText(text)) expect(search.statusCode).toBe(400);
      }),
      { numRuns: 60, seed: 15 },
    );
    // Both paths were exercised: some strings were text and were stored.
    expect(counts.events).toBeGreaterThan(5);
    expect(counts.facts).toBeGreaterThan(5);
  }, 120_000);

  it('never answers 5xx to a context request whatever its message text and state values hold, and refuses what is not text with 400', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(nasty, fc.boolean(), async (text, inState) => {
        const r = await post(`/v1/npcs/${NPC}/context`, {
          roomId: 'hall',
          participants: [{ participantId: P, anonymous: false }],
          messages: [{ seq: ++n, speaker: { participantId: P }, text: inState ? 'hello' : text, targeted: true, ts: 1_700_000_000 }],
          state: { version: 1, facts: inState ? { 'door.north': text } : {} },
        });
        expect(r.statusCode).toBeLessThan(500);
        if (!isText(text)) expect(r.json()).toMatchObject({ error: { code: expect.any(String) } });
        if (!isText(text)) expect(r.statusCode).toBe(400);
        if (r.statusCode === 200) answered++;
      }),
      { numRuns: 60, seed: 16 },
    );
    expect(answered).toBeGreaterThan(5);
  }, 120_000);

  it('never answers 5xx to procedural memory whatever its persona, directives and core hold, and keeps text exactly as sent', async () => {
    let kept = 0;
    await fc.assert(
      fc.asyncProperty(nasty, async (text) => {
        const put = await system.app.inject({
          method: 'PUT',
          url: `/v1/npcs/${NPC}/procedural`,
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ persona: `Mara. ${text}`, directives: [`Say ${text}`], core: { motto: text } }),
        });
        expect(put.statusCode).toBeLessThan(500);
        if (!isText(text)) expect(put.statusCode).toBe(400);
        if (put.statusCode === 201) {
          const got = await system.app.inject({ method: 'GET', url: `/v1/npcs/${NPC}/procedural`, headers: { authorization: `Bearer ${token}` } });
          expect(got.json<{ procedural: { persona: string; directives: string[]; core: Record<string, string> } }>().procedural).toMatchObject({ persona: `Mara. ${text}`, directives: [`Say ${text}`], core: { motto: text } });
          kept++;
        }
      }),
      { numRuns: 40, seed: 17 },
    );
    expect(kept).toBeGreaterThan(5);
  }, 120_000);
});
