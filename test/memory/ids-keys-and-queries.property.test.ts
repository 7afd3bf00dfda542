/**
 * The memory service's runtime routes under arbitrary strings in every string field the other
 * property test (text-fields.property.test.ts) leaves out: ids in paths and bodies, fact keys,
 * procedural core keys, state keys, query parameters, enums, the patch route, and the names of
 * fields the API does not have. See test/helpers/text.ts for what each field must do.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParticipantId, ScopeId } from '../../src/boundary/events.js';
import { FLUSH_REASONS } from '../../src/boundary/lifecycle.js';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { DURABLE_TIERS, RETENTION_CLASSES } from '../../src/memory/types.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { expectFieldAnswer, fieldText, isText, patternOf, receivedInQuery, urlPart, type Answer } from '../helpers/text.js';

const SCOPE_ID = patternOf(ScopeId);
const PARTICIPANT_ID = patternOf(ParticipantId);
const NPC = 'npc-mara';
const GAME = 'prop-ids';
const P = 'part-ids00001';
const oneOf = (values: readonly string[]) => `^(${values.join('|')})$`;
const chars = (s: string) => [...s].length;
const matches = (pattern: string) => (s: string) => new RegExp(pattern).test(s);
/** A path parameter the schema lets through: text of at most `max` characters, within the router's limit, not a dot segment. */
const pathText = (max: number) => (s: string) => isText(s) && chars(s) <= max && s.length <= 128 && s !== '' && s !== '.' && s !== '..';
/** A name an error message may show (src/boundary/field-names.ts): anything else it must not repeat. */
const SHOWN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;
/** Uuids as clients write them, and near misses. */
const uuidLike = fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase()), fc.uuid().map((u) => `urn:uuid:${u}`), fc.uuid().map((u) => `{${u}}`), fieldText());

describe('the ids, keys, enums and query parameters of the memory service, with arbitrary strings', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;
  let runtimeKey: string;
  let adminKey: string;
  let token: string;
  let n = 0;

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
    const tenant = await createTenant(database.db, `ids-prop-${Math.random().toString(36).slice(2)}`);
    ({ runtimeKey, adminKey } = tenant);
    ({ token } = await system.credentials.issueGameToken(tenant.tenantId, GAME, [P], 3600));
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, bearer = token): Promise<Answer> => {
    const r = await system.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${bearer}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
  };
  const fact = (extra: Record<string, unknown> = {}) => ({
    tier: 'clue',
    key: `clue.k${++n}`,
    value: 'the brass key is under the globe',
    summary: 'where the brass key is',
    source: 'player_statement',
    confidence: 0.5,
    importance: 0.5,
    retention: 'permanent',
    ...extra,
  });
  const event = (extra: Record<string, unknown> = {}) => ({ gameId: GAME, roomId: 'hall', npcId: NPC, participantId: P, ts: 1_700_000_000, text: 'hello there', targeted: true, ...extra });
  const memory = async (npcId: string, id: string) => ((await call('GET', `/v1/npcs/${urlPart(npcId)}/memories/${id}`)).body as { memory: Record<string, unknown> }).memory;

  it('changes a fact only through its own NPC and id, keeps the retention class sent, and refuses any other value without a 5xx', async () => {
    const created = await call('POST', `/v1/npcs/${NPC}/facts`, fact());
    const factId = (created.body as { memory: { id: string } }).memory.id;
    let patched = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fieldText(SCOPE_ID), fc.constant(NPC)),
        fc.oneof(fieldText('^[0-9a-f-]{1,64}$'), fc.constant(factId)),
        fc.oneof(fieldText(oneOf(RETENTION_CLASSES)), fc.constantFrom(...RETENTION_CLASSES)),
        async (npcId, id, retention) => {
          const byNpc = await call('PATCH', `/v1/npcs/${urlPart(npcId)}/memories/${factId}`, { importance: 0.7 });
          expectFieldAnswer(byNpc, npcId, { valid: matches(SCOPE_ID)(npcId), ok: npcId === NPC ? [200] : [404], refused: [400, 404, 414] });
          const byId = await call('PATCH', `/v1/npcs/${NPC}/memories/${urlPart(id)}`, { importance: 0.7 });
          expectFieldAnswer(byId, id, { valid: pathText(64)(id), ok: id === factId ? [200] : [404], refused: [400, 404, 414] });
          const byRetention = await call('PATCH', `/v1/npcs/${NPC}/memories/${factId}`, { retention });
          if (expectFieldAnswer(byRetention, retention, { valid: (RETENTION_CLASSES as readonly string[]).includes(retention), ok: [200] })) {
            expect(await memory(NPC, factId)).toMatchObject({ id: factId, retention });
            patched++;
          }
        },
      ),
      { numRuns: 30, seed: 1511 },
    );
    expect(patched).toBeGreaterThan(5);
  }, 60_000);

  it('reads and deletes by any id of the right length without a 5xx, finding nothing that is not there', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText('^[0-9a-f-]{1,64}$'), uuidLike), async (id) => {
        for (const method of ['GET', 'DELETE'] as const) {
          const answer = await call(method, `/v1/npcs/${NPC}/memories/${urlPart(id)}`);
          expectFieldAnswer(answer, id, { valid: pathText(64)(id), ok: [404], refused: [400, 404, 414] });
        }
        expectFieldAnswer(await call('GET', `/v1/contexts/${urlPart(id)}`), id, { valid: pathText(64)(id), ok: [404], refused: [400, 404, 414] });
      }),
      { numRuns: 30, seed: 1512 },
    );
  }, 60_000);

  it('lists and counts by exactly the tier, limit and history sent, and refuses any other query value with 400', async () => {
    const LIMIT = '^(?:[1-9][0-9]{0,2}|1000)$';
    await fc.assert(
      fc.asyncProperty(fieldText(oneOf(DURABLE_TIERS)), fieldText(LIMIT), fieldText('^(true|false)$'), async (tier, limit, history) => {
        const valid = (pattern: string, s: string) => matches(pattern)(receivedInQuery(s));
        const byTier = await call('GET', `/v1/npcs/${NPC}/memories?tier=${urlPart(tier)}`);
        if (expectFieldAnswer(byTier, tier, { valid: valid(oneOf(DURABLE_TIERS), tier), ok: [200] })) {
          for (const m of (byTier.body as { memories: { tier: string }[] }).memories) expect(m.tier).toBe(tier);
        }
        const count = await call('GET', `/v1/npcs/${NPC}/memories/count?tier=${urlPart(tier)}`);
        if (expectFieldAnswer(count, tier, { valid: valid(oneOf(DURABLE_TIERS), tier), ok: [200] })) expect(count.body).toEqual({ count: expect.any(Number) });
        const byLimit = await call('GET', `/v1/npcs/${NPC}/memories?tier=clue&limit=${urlPart(limit)}`);
        if (expectFieldAnswer(byLimit, limit, { valid: valid(LIMIT, limit), ok: [200] })) {
          expect((byLimit.body as { memories: unknown[] }).memories.length).toBeLessThanOrEqual(Number(limit));
        }
        const byHistory = await call('GET', `/v1/npcs/${NPC}/memories?tier=clue&history=${urlPart(history)}`);
        expectFieldAnswer(byHistory, history, { valid: valid('^(true|false)$', history), ok: [200] });
      }),
      { numRuns: 30, seed: 1513 },
    );
  }, 60_000);

  it('mints a token for exactly the game and participants sent, which then reads, and refuses any other id with 400', async () => {
    let minted = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fieldText(PARTICIPANT_ID), async (gameId, participantId) => {
        for (const [body, sent, valid] of [
          [{ gameId }, gameId, matches(SCOPE_ID)(gameId)],
          [{ gameId: GAME, participantIds: [participantId] }, participantId, matches(PARTICIPANT_ID)(participantId)],
        ] as const) {
          const answer = await call('POST', '/v1/tokens', body, runtimeKey);
          if (expectFieldAnswer(answer, sent, { valid, ok: [200] })) {
            const minted_ = (answer.body as { token: string }).token;
            expect(await call('GET', `/v1/npcs/${NPC}/memories/count?tier=clue`, undefined, minted_)).toMatchObject({ status: 200 });
            minted++;
          }
        }
      }),
      { numRuns: 30, seed: 1514 },
    );
    expect(minted).toBeGreaterThan(5);
  }, 60_000);

  it("stores an event under exactly the room, NPC, speaker and idempotency key sent, refuses another game's id with 403 and any other value with 400", async () => {
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(SCOPE_ID), fc.constant(NPC)), fieldText('^[A-Za-z0-9_.:-]{8,128}$'), fc.oneof(fieldText(PARTICIPANT_ID), fc.constant(P)), async (id, key, participantId) => {
        const post = (events: unknown[], idempotencyKey = `ids-prop-${++n}`) => call('POST', '/v1/events', { idempotencyKey, events });
        const byRoom = await post([event({ roomId: id })]);
        if (expectFieldAnswer(byRoom, id, { valid: matches(SCOPE_ID)(id), ok: [200] })) {
          expect(await memory(NPC, (byRoom.body as { ids: string[] }).ids[0]!)).toMatchObject({ roomId: id, npcId: NPC });
          stored++;
        }
        const byNpc = await post([event({ npcId: id })]);
        if (expectFieldAnswer(byNpc, id, { valid: matches(SCOPE_ID)(id), ok: [200] })) {
          expect(await memory(id, (byNpc.body as { ids: string[] }).ids[0]!)).toMatchObject({ npcId: id, text: 'hello there' });
        }
        const byGame = await post([event({ gameId: id })]);
        expectFieldAnswer(byGame, id, { valid: matches(SCOPE_ID)(id), ok: id === GAME ? [200] : [403] });
        // An episode is bound to its game, not to a participant: any speaker id of the right shape is stored as sent.
        const byParticipant = await post([event({ participantId })]);
        if (expectFieldAnswer(byParticipant, participantId, { valid: matches(PARTICIPANT_ID)(participantId), ok: [200] })) {
          expect(await memory(NPC, (byParticipant.body as { ids: string[] }).ids[0]!)).toMatchObject({ participantId });
        }
        // The same key again is the same batch: answered with the first answer, stored once.
        const byKey = await post([event()], key);
        if (expectFieldAnswer(byKey, key, { valid: matches('^[A-Za-z0-9_.:-]{8,128}$')(key), ok: [200] })) {
          const again = await post([event()], key);
          expect(again.body).toEqual({ ...(byKey.body as object), replayed: true });
        }
      }),
      { numRuns: 30, seed: 1515 },
    );
    expect(stored).toBeGreaterThan(5);
  }, 60_000);

  it('writes a fact under exactly the NPC, key, participant and provenance sent, and refuses any other value without a 5xx', async () => {
    const KEY = '^[a-z][a-z0-9_.]{0,63}$';
    const isUuid = (s: string) => /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(s);
    let written = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fieldText(KEY), fc.oneof(fieldText(PARTICIPANT_ID), fc.constant(P)), uuidLike, async (npcId, key, participantId, uuid) => {
        const byNpc = await call('POST', `/v1/npcs/${urlPart(npcId)}/facts`, fact());
        if (expectFieldAnswer(byNpc, npcId, { valid: matches(SCOPE_ID)(npcId), ok: [201], refused: [400, 404, 414] })) {
          expect(await memory(npcId, (byNpc.body as { memory: { id: string } }).memory.id)).toMatchObject({ npcId, tier: 'clue' });
          written++;
        }
        const byKey = await call('POST', `/v1/npcs/${NPC}/facts`, fact({ key }));
        if (expectFieldAnswer(byKey, key, { valid: matches(KEY)(key), ok: [201] })) {
          expect(await memory(NPC, (byKey.body as { memory: { id: string } }).memory.id)).toMatchObject({ fact: { key } });
        }
        const social = await call('POST', `/v1/npcs/${NPC}/facts`, fact({ tier: 'social', key: 'player.pet', participantId }));
        if (expectFieldAnswer(social, participantId, { valid: matches(PARTICIPANT_ID)(participantId), ok: participantId === P ? [201] : [403] })) {
          expect(await memory(NPC, (social.body as { memory: { id: string } }).memory.id)).toMatchObject({ tier: 'social', participantId });
        }
        // No fact of that id: 404 for "supersedes"; "derivedFrom" names rows it was derived from, kept as sent.
        expectFieldAnswer(await call('POST', `/v1/npcs/${NPC}/facts`, fact({ supersedes: uuid })), uuid, { valid: isUuid(uuid), ok: [404] });
        const derived = await call('POST', `/v1/npcs/${NPC}/facts`, fact({ derivedFrom: [uuid] }));
        if (expectFieldAnswer(derived, uuid, { valid: isUuid(uuid), ok: [201] })) {
          const kept = (await memory(NPC, (derived.body as { memory: { id: string } }).memory.id)).derivedFrom as string[];
          expect(kept).toHaveLength(1);
          // The same uuid; PostgreSQL writes it in lower case.
          expect(kept).toEqual([uuid.toLowerCase()]);
        }
      }),
      { numRuns: 30, seed: 1516 },
    );
    expect(written).toBeGreaterThan(3);
  }, 60_000);

  it('keeps procedural memory under exactly the NPC and core keys sent, refuses a key outside the pattern with 400, and searches only the tiers named', async () => {
    const CORE_KEY = '^[a-z][a-z0-9_]{0,63}$';
    let kept = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fieldText(CORE_KEY), fieldText(oneOf(DURABLE_TIERS)), async (npcId, key, tier) => {
        const byNpc = await call('PUT', `/v1/npcs/${urlPart(npcId)}/procedural`, { persona: 'a careful archivist', directives: [], core: {} }, adminKey);
        if (expectFieldAnswer(byNpc, npcId, { valid: matches(SCOPE_ID)(npcId), ok: [201], refused: [400, 404, 414] })) {
          expect(await call('GET', `/v1/npcs/${urlPart(npcId)}/procedural`)).toMatchObject({ status: 200, body: { procedural: { npcId, persona: 'a careful archivist' } } });
          kept++;
        }
        const byKey = await call('PUT', `/v1/npcs/${NPC}/procedural`, { persona: 'Mara', directives: [], core: { [key]: 'the library' } }, adminKey);
        if (expectFieldAnswer(byKey, key, { valid: matches(CORE_KEY)(key), ok: [201], named: SHOWN_NAME })) {
          expect(await call('GET', `/v1/npcs/${NPC}/procedural`)).toMatchObject({ body: { procedural: { core: { [key]: 'the library' } } } });
        } else if (isText(key) && SHOWN_NAME.test(key) && (byKey.body as { error: { code: string } }).error.code === 'UNKNOWN_FIELD') {
          // A refused key of an ordinary name is named, so that the client can find it.
          expect((byKey.body as { error: { message: string } }).error.message).toContain(`"${key}"`);
        }
        const search = await call('POST', `/v1/npcs/${NPC}/search`, { text: 'brass key', tiers: [tier] });
        if (expectFieldAnswer(search, tier, { valid: (DURABLE_TIERS as readonly string[]).includes(tier), ok: [200] })) {
          for (const m of (search.body as { memories: { tier: string }[] }).memories) expect(m.tier).toBe(tier);
        }
      }),
      { numRuns: 30, seed: 1517 },
    );
    expect(kept).toBeGreaterThan(5);
  }, 60_000);

  it('assembles a context for exactly the room, participants and state keys sent, flushes exactly the room sent, and refuses any other value', async () => {
    const STATE_KEY = '^[A-Za-z0-9_.:-]{1,128}$';
    let assembled = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fc.oneof(fieldText(PARTICIPANT_ID), fc.constant(P)), fieldText(STATE_KEY), fieldText(oneOf(FLUSH_REASONS)), async (roomId, participantId, key, reason) => {
        const context = (extra: Record<string, unknown>) =>
          call('POST', `/v1/npcs/${NPC}/context`, {
            roomId: 'hall',
            participants: [{ participantId: P, anonymous: false }],
            messages: [{ seq: ++n, speaker: { participantId: P }, text: 'is the north door open?', targeted: true, ts: 1_700_000_000 }],
            state: { version: 1, facts: {} },
            ...extra,
          });
        const byRoom = await context({ roomId });
        if (expectFieldAnswer(byRoom, roomId, { valid: matches(SCOPE_ID)(roomId), ok: [200] })) {
          expect(byRoom.body).toMatchObject({ roomId, npcId: NPC, gameId: GAME });
          assembled++;
        }
        const byParticipant = await context({ participants: [{ participantId, anonymous: false }] });
        expectFieldAnswer(byParticipant, participantId, { valid: matches(PARTICIPANT_ID)(participantId), ok: participantId === P ? [200] : [403] });
        const byState = await context({ state: { version: 1, facts: { [key]: 'open' } } });
        // "__proto__" is refused by the JSON parser (prototype poisoning), whatever the field.
        if (expectFieldAnswer(byState, key, { valid: matches(STATE_KEY)(key) && key !== '__proto__', ok: [200], named: SHOWN_NAME })) {
          expect((byState.body as { pinned: { state: unknown } }).pinned.state).toEqual({ version: 1, facts: { [key]: 'open' } });
        }
        const flush = await call('POST', `/v1/npcs/${NPC}/working-memory/flush`, { roomId, reason: 'npc_moved' });
        if (expectFieldAnswer(flush, roomId, { valid: matches(SCOPE_ID)(roomId), ok: [200] })) expect(flush.body).toMatchObject({ flushed: expect.any(Boolean) });
        const byReason = await call('POST', `/v1/npcs/${NPC}/working-memory/flush`, { roomId: 'hall', reason });
        expectFieldAnswer(byReason, reason, { valid: (FLUSH_REASONS as readonly string[]).includes(reason), ok: [200] });
      }),
      { numRuns: 25, seed: 1518 },
    );
    expect(assembled).toBeGreaterThan(5);
  }, 60_000);

  it('refuses a field it does not have with 400 UNKNOWN_FIELD, naming it when its name is an ordinary name and never repeating any other', async () => {
    const routes: [string, Record<string, unknown>][] = [
      ['/v1/events', { idempotencyKey: 'unknown-field-batch', events: [event()] }],
      [`/v1/npcs/${NPC}/search`, { text: 'brass key' }],
      [`/v1/npcs/${NPC}/facts`, fact()],
    ];
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(SHOWN_NAME.source), fc.constantFrom('userAgent', 'isBot', 'x"y', 'a b', '<script>', 'é', '\u202eevil')), fc.constantFrom(...routes), async (name, [url, body]) => {
        fc.pre(!(name in body) && name !== '__proto__');
        const answer = await call('POST', url, { ...body, [name]: 1 });
        expect(answer.status).toBe(400);
        const { error } = answer.body as { error: { code: string; message: string } };
        expect(error.code).toBe(isText(name) ? 'UNKNOWN_FIELD' : 'INVALID_TEXT');
        if (isText(name) && SHOWN_NAME.test(name)) expect(error.message).toContain(`"${name}"`);
        else expect(error.message.includes(name) && name.trim().length >= 2).toBe(false);
      }),
      { numRuns: 40, seed: 1519 },
    );
  }, 60_000);

  it('names an ordinary unknown field and where it is, and says a made-up one, or a NUL under it, is there without repeating its name', async () => {
    const named = await call('POST', `/v1/npcs/${NPC}/search`, { text: 'brass key', userAgent: 'x' });
    expect(named.body).toEqual({ error: { code: 'UNKNOWN_FIELD', message: expect.stringContaining('body has a field "userAgent"') } });
    const long = 'k'.repeat(5000);
    const made = await call('POST', '/v1/events', { idempotencyKey: 'unknown-field-2', events: [{ ...event(), [`x"\u202e<b>${long}`]: 1 }] });
    expect(made.status).toBe(400);
    const { message } = (made.body as { error: { message: string } }).error;
    expect(message).toMatch(/^body\/events\/0 has a field that this API does not accept/);
    expect(message).not.toMatch(/kkkkkk|<b>|\u202e/);
    expect(message.length).toBeLessThan(200);
    // A NUL under a made-up key: where it is, without the key.
    const nul = await call('POST', '/v1/events', { idempotencyKey: 'unknown-field-3', events: [{ ...event(), [`x"<b>${long}`]: 'a\u0000b' }] });
    expect(nul.body).toEqual({ error: { code: 'INVALID_TEXT', message: 'body/events/0/* holds a NUL character or a lone surrogate; send well-formed text.' } });
  });
});
