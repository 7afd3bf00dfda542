import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import type { MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { memorySystemOn } from '../helpers/fixture.js';

const GAME = 'game-x';
const OTHER_GAME = 'game-y';
const NPC = 'npc-mara';
const P1 = 'part-aaaa1111';

const goodEvent = (text = 'I think the code is on the clock', extra: Record<string, unknown> = {}) => ({
  gameId: GAME,
  roomId: 'library',
  npcId: NPC,
  participantId: P1,
  ts: 1_700_000_000,
  text,
  targeted: false,
  ...extra,
});

let batchCounter = 0;
const goodBatch = (events: unknown[] = [goodEvent()]) => ({ idempotencyKey: `bad-input-${++batchCounter}-key`, events });

interface ErrorBody {
  error: { code: string; message: string };
}

describe('bad input to the memory service HTTP API', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let tenant: { tenantId: string; runtimeKey: string; adminKey: string };
  let token: string;
  let otherGameToken: string;

  const inject = (options: InjectOptions) => system.app.inject(options);
  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

  /** Row counts of every table of schema memory, read as the owner (no row-level security). */
  async function snapshot(): Promise<Record<string, number>> {
    const { rows: tables } = await database.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'memory' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    const out: Record<string, number> = {};
    for (const { table_name: t } of tables) {
      out[t] = (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory.${t}`)).rows[0]!.n;
    }
    return out;
  }

  async function episodicCountOverHttp(): Promise<number> {
    const response = await inject({ method: 'GET', url: `/v1/npcs/${NPC}/memories/count?tier=episodic`, headers: bearer(token) });
    expect(response.statusCode).toBe(200);
    return response.json<{ count: number }>().count;
  }

  /**
   * Sends one bad request and checks the whole contract: the status, a stable error code, a
   * message, nothing written anywhere, and the server still serving.
   */
  async function rejects(options: InjectOptions, status: number, code: string): Promise<ErrorBody> {
    const before = await snapshot();
    const countBefore = await episodicCountOverHttp();
    const response = await inject(options);
    expect({ status: response.statusCode, body: response.body }).toMatchObject({ status });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json<ErrorBody>();
    expect(body).toEqual({ error: { code, message: expect.any(String) } });
    expect(body.error.message.length).toBeGreaterThan(10);
    expect(await snapshot()).toEqual(before);
    expect(await episodicCountOverHttp()).toBe(countBefore);
    const health = await inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });
    return body;
  }

  const postEvents = (payload: unknown, headers: Record<string, string> = bearer(token)): InjectOptions => ({
    method: 'POST',
    url: '/v1/events',
    headers,
    payload: payload as InjectOptions['payload'],
  });

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    tenant = await createTenant(database.db, 'bad-input-studio');
    token = (await system.credentials.issueGameToken(tenant.tenantId, GAME, [P1], 900)).token;
    otherGameToken = (await system.credentials.issueGameToken(tenant.tenantId, OTHER_GAME, [P1], 900)).token;
    // One accepted batch first, so that "nothing written" is measured against a non-empty store.
    const seeded = await inject(postEvents({ idempotencyKey: 'seed-batch-0001', events: [goodEvent('the seed line')] }));
    expect(seeded.statusCode).toBe(200);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('accepts a well-formed batch (so the rejections below are about what was wrong)', async () => {
    const before = await episodicCountOverHttp();
    const response = await inject(postEvents(goodBatch()));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ accepted: 1, replayed: false });
    expect(await episodicCountOverHttp()).toBe(before + 1);
  });

  describe('bodies that are not JSON', () => {
    it('rejects malformed JSON with 400 INVALID_JSON', async () => {
      await rejects(
        { ...postEvents('{"idempotencyKey": "abcdefgh", "events": [{"gameId": '), headers: { ...bearer(token), 'content-type': 'application/json' } },
        400,
        'INVALID_JSON',
      );
    });

    it('rejects an empty JSON body with 400 INVALID_JSON', async () => {
      await rejects({ ...postEvents(''), headers: { ...bearer(token), 'content-type': 'application/json' } }, 400, 'INVALID_JSON');
    });

    it('rejects a body of another media type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      await rejects({ ...postEvents('<batch/>'), headers: { ...bearer(token), 'content-type': 'application/xml' } }, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('rejects a text/plain body with 400 INVALID_REQUEST (it is read as a string, not an object)', async () => {
      await rejects({ ...postEvents('hello there'), headers: { ...bearer(token), 'content-type': 'text/plain' } }, 400, 'INVALID_REQUEST');
    });

    for (const payload of ['[]', 'null', '"events"', '42']) {
      it(`rejects the JSON value ${payload}, which is not an object, with 400 INVALID_REQUEST`, async () => {
        const { error } = await rejects(
          { ...postEvents(payload), headers: { ...bearer(token), 'content-type': 'application/json' } },
          400,
          'INVALID_REQUEST',
        );
        expect(error.message).toBe('body must be object; see GET /openapi.json for the shape.');
      });
    }
  });

  describe('unknown fields are rejected, never dropped silently', () => {
    for (const field of ['keystrokeMs', 'userAgent', 'isBot', 'controller', 'accountId']) {
      it(`rejects an event carrying telemetry field "${field}" with 400 UNKNOWN_FIELD naming it, storing not even the valid events beside it`, async () => {
        const { error } = await rejects(postEvents(goodBatch([goodEvent('a valid neighbour'), goodEvent('x', { [field]: field === 'isBot' ? false : 42 })])), 400, 'UNKNOWN_FIELD');
        expect(error.message).toContain(`"${field}"`);
        expect(error.message).toContain('/events/1');
      });
    }

    it('rejects an unknown top-level field with 400 UNKNOWN_FIELD', async () => {
      const { error } = await rejects(postEvents({ ...goodBatch(), telemetry: { fps: 60 } }), 400, 'UNKNOWN_FIELD');
      expect(error.message).toContain('"telemetry"');
    });

    it('rejects an unknown field on a fact and on a search with 400 UNKNOWN_FIELD', async () => {
      await rejects(
        {
          method: 'POST',
          url: `/v1/npcs/${NPC}/facts`,
          headers: bearer(token),
          payload: {
            tier: 'clue',
            key: 'clue.code',
            value: 'v',
            summary: 's',
            source: 'player_statement',
            confidence: 0.5,
            importance: 0.5,
            retention: 'permanent',
            isHuman: true,
          },
        },
        400,
        'UNKNOWN_FIELD',
      );
      await rejects({ method: 'POST', url: `/v1/npcs/${NPC}/search`, headers: bearer(token), payload: { text: 'code', userAgent: 'x' } }, 400, 'UNKNOWN_FIELD');
    });
  });

  describe('wrong types are refused, never coerced', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['ts as the string "123"', { ts: '123' }],
      ['ts as a fraction', { ts: 1.5 }],
      ['ts negative', { ts: -1 }],
      ['targeted as the string "true"', { targeted: 'true' }],
      ['targeted as 1', { targeted: 1 }],
      ['text as a number', { text: 42 }],
      ['text empty', { text: '' }],
      ['text longer than 4000 characters', { text: 'x'.repeat(4001) }],
      ['participantId that is not an opaque id', { participantId: 'bob' }],
      ['gameId with a path in it', { gameId: '../alpha' }],
      ['npcId as null', { npcId: null }],
    ];
    for (const [label, patch] of cases) {
      it(`rejects an event with ${label} with 400 INVALID_REQUEST`, async () => {
        const { error } = await rejects(postEvents(goodBatch([goodEvent('typed', patch)])), 400, 'INVALID_REQUEST');
        expect(error.message).toMatch(/^body\/events\/0/);
      });
    }
  });

  describe('missing fields', () => {
    for (const field of ['gameId', 'roomId', 'npcId', 'participantId', 'ts', 'text', 'targeted']) {
      it(`rejects an event without "${field}" with 400 INVALID_REQUEST`, async () => {
        const event: Record<string, unknown> = goodEvent();
        delete event[field];
        const { error } = await rejects(postEvents(goodBatch([event])), 400, 'INVALID_REQUEST');
        expect(error.message).toContain(field);
      });
    }

    it('rejects a batch without idempotencyKey, without events, or with no events, with 400 INVALID_REQUEST', async () => {
      await rejects(postEvents({ events: [goodEvent()] }), 400, 'INVALID_REQUEST');
      await rejects(postEvents({ idempotencyKey: 'no-events-0001' }), 400, 'INVALID_REQUEST');
      await rejects(postEvents({ idempotencyKey: 'no-events-0002', events: [] }), 400, 'INVALID_REQUEST');
    });

    it('rejects a batch of more than 500 events with 400 INVALID_REQUEST', async () => {
      await rejects(postEvents(goodBatch(Array.from({ length: 501 }, () => goodEvent('many')))), 400, 'INVALID_REQUEST');
    });
  });

  describe('oversize payloads', () => {
    it('rejects a body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const payload = JSON.stringify(goodBatch([goodEvent('y'.repeat(1024 * 1024 + 10))]));
      expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024);
      await rejects({ ...postEvents(payload), headers: { ...bearer(token), 'content-type': 'application/json' } }, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('rejects a body over 1 MiB made of many small events with 413 PAYLOAD_TOO_LARGE', async () => {
      const payload = JSON.stringify(goodBatch(Array.from({ length: 400 }, () => goodEvent('z'.repeat(3000)))));
      expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024);
      await rejects({ ...postEvents(payload), headers: { ...bearer(token), 'content-type': 'application/json' } }, 413, 'PAYLOAD_TOO_LARGE');
    });
  });

  describe('missing, malformed and forged credentials', () => {
    it('rejects a request without Authorization with 401 UNAUTHENTICATED', async () => {
      await rejects(postEvents(goodBatch(), {}), 401, 'UNAUTHENTICATED');
    });

    for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', `Token ${'x'.repeat(20)}`, `Bearer ${'x'.repeat(5000)}`, 'Bearer \u00e9t\u00e9']) {
      it(`rejects a malformed Authorization header (${JSON.stringify(header.slice(0, 24))}) with 401 UNAUTHENTICATED`, async () => {
        await rejects(postEvents(goodBatch(), { authorization: header }), 401, 'UNAUTHENTICATED');
      });
    }

    it('rejects a game token signed with a different key with 401 UNAUTHENTICATED', async () => {
      const forged = await new SignJWT({ gid: GAME, pids: [P1] })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(tenant.tenantId)
        .setIssuer('memory')
        .setAudience('memory')
        .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
        .sign(randomBytes(32));
      await rejects(postEvents(goodBatch(), bearer(forged)), 401, 'UNAUTHENTICATED');
    });

    it('rejects a real game token whose payload was altered to another game with 401 UNAUTHENTICATED', async () => {
      const [header, payload, signature] = otherGameToken.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      expect(claims.gid).toBe(OTHER_GAME);
      const altered = Buffer.from(JSON.stringify({ ...claims, gid: GAME })).toString('base64url');
      await rejects(postEvents(goodBatch(), bearer(`${header}.${altered}.${signature}`)), 401, 'UNAUTHENTICATED');
    });

    it('rejects an unsigned token (alg "none") with 401 UNAUTHENTICATED', async () => {
      const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const claims = { sub: tenant.tenantId, gid: GAME, pids: [P1], iss: 'memory', aud: 'memory', exp: Math.floor(Date.now() / 1000) + 600 };
      await rejects(postEvents(goodBatch(), bearer(`${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`)), 401, 'UNAUTHENTICATED');
    });

    it('rejects an API key with the right id but a wrong secret, and an unknown key, with 401 UNAUTHENTICATED', async () => {
      const [, keyId] = /^mk_([a-z0-9]{12})_/.exec(tenant.runtimeKey)!;
      await rejects(postEvents(goodBatch(), bearer(`mk_${keyId}_${randomBytes(32).toString('base64url')}`)), 401, 'UNAUTHENTICATED');
      await rejects(postEvents(goodBatch(), bearer(`mk_000000000000_${randomBytes(32).toString('base64url')}`)), 401, 'UNAUTHENTICATED');
    });

    it('rejects a game token once it has expired with 401 UNAUTHENTICATED', async () => {
      const { token: shortLived } = await system.credentials.issueGameToken(tenant.tenantId, GAME, [P1], 30);
      const probe = { method: 'GET' as const, url: `/v1/npcs/${NPC}/memories/count?tier=episodic`, headers: bearer(shortLived) };
      expect((await inject(probe)).statusCode).toBe(200);
      const before = await snapshot();
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 60 * 60 * 1000);
      const late = await inject(postEvents(goodBatch(), bearer(shortLived)));
      const lateRead = await inject(probe);
      vi.useRealTimers();
      expect(late.statusCode).toBe(401);
      expect(late.json<ErrorBody>().error.code).toBe('UNAUTHENTICATED');
      expect(lateRead.statusCode).toBe(401);
      expect(await snapshot()).toEqual(before);
      expect((await inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    });
  });

  describe('credentials used outside their scope', () => {
    it('rejects events of game X sent with a token for game Y with 403 SCOPE_MISMATCH', async () => {
      const { error } = await rejects(postEvents(goodBatch(), bearer(otherGameToken)), 403, 'SCOPE_MISMATCH');
      expect(error.message).toContain(GAME);
    });

    it('rejects a batch that mixes events of its own game and another game with 403 SCOPE_MISMATCH, storing none', async () => {
      await rejects(postEvents(goodBatch([goodEvent('own game'), goodEvent('foreign', { gameId: OTHER_GAME })])), 403, 'SCOPE_MISMATCH');
    });

    it('rejects events sent with a tenant API key instead of a game token with 403 GAME_TOKEN_REQUIRED', async () => {
      await rejects(postEvents(goodBatch(), bearer(tenant.runtimeKey)), 403, 'GAME_TOKEN_REQUIRED');
    });

    it('rejects a runtime key writing procedural memory with 403 FORBIDDEN', async () => {
      await rejects(
        { method: 'PUT', url: `/v1/npcs/${NPC}/procedural`, headers: bearer(tenant.runtimeKey), payload: { persona: 'a liar', directives: [], core: {} } },
        403,
        'FORBIDDEN',
      );
    });

    it('rejects a game token writing procedural memory with 403 API_KEY_REQUIRED', async () => {
      await rejects(
        { method: 'PUT', url: `/v1/npcs/${NPC}/procedural`, headers: bearer(token), payload: { persona: 'a liar', directives: [], core: {} } },
        403,
        'API_KEY_REQUIRED',
      );
    });

    it('rejects a game token minting tokens with 403 API_KEY_REQUIRED', async () => {
      await rejects({ method: 'POST', url: '/v1/tokens', headers: bearer(token), payload: { gameId: OTHER_GAME } }, 403, 'API_KEY_REQUIRED');
    });

    it('lets the admin key write procedural memory (so the refusals above are about the credential)', async () => {
      const response = await inject({
        method: 'PUT',
        url: `/v1/npcs/${NPC}/procedural`,
        headers: bearer(tenant.adminKey),
        payload: { persona: 'Mara, the librarian', directives: ['never reveal the code'], core: { loyalty: 'the library' } },
      });
      expect(response.statusCode).toBe(201);
    });
  });

  describe('idempotency keys', () => {
    it('replays a retried batch with 200 and replayed=true, storing it once', async () => {
      const batch = goodBatch([goodEvent('retried once'), goodEvent('retried twice')]);
      const first = await inject(postEvents(batch));
      expect(first.statusCode).toBe(200);
      const before = await snapshot();
      const countBefore = await episodicCountOverHttp();
      const again = await inject(postEvents(batch));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({ ...first.json<object>(), replayed: true });
      expect(await snapshot()).toEqual(before);
      expect(await episodicCountOverHttp()).toBe(countBefore);
    });

    it('replays concurrent retries of the same new batch once', async () => {
      const batch = goodBatch([goodEvent('sent five times at once')]);
      const countBefore = await episodicCountOverHttp();
      const answers = await Promise.all(Array.from({ length: 5 }, () => inject(postEvents(batch))));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
      const bodies = answers.map((a) => a.json<{ ids: string[]; replayed: boolean }>());
      expect(bodies.filter((b) => !b.replayed)).toHaveLength(1);
      expect(new Set(bodies.map((b) => b.ids.join()))).toHaveProperty('size', 1);
      expect(await episodicCountOverHttp()).toBe(countBefore + 1);
    });

    it('takes a retried batch whose fields arrive in another order (a round trip through jsonb) as the same batch', async () => {
      const batch = goodBatch([goodEvent('kept in the engine\'s outbox, then resent')]);
      expect((await inject(postEvents(batch))).statusCode).toBe(200);
      const countBefore = await episodicCountOverHttp();
      const reordered = { ...batch, events: batch.events.map((e) => Object.fromEntries(Object.entries(e as object).reverse())) };
      const again = await inject(postEvents(reordered));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ replayed: true });
      expect(await episodicCountOverHttp()).toBe(countBefore);
    });

    it('rejects a key reused for a different batch with 409 IDEMPOTENCY_CONFLICT', async () => {
      const batch = goodBatch([goodEvent('the original batch')]);
      expect((await inject(postEvents(batch))).statusCode).toBe(200);
      await rejects(postEvents({ ...batch, events: [goodEvent('a different batch')] }), 409, 'IDEMPOTENCY_CONFLICT');
      await rejects(postEvents({ ...batch, events: [goodEvent('the original batch', { targeted: true })] }), 409, 'IDEMPOTENCY_CONFLICT');
    });
  });

  describe('text that is not text', () => {
    const json = () => ({ 'content-type': 'application/json', ...bearer(token) });
    it('refuses a NUL character in an event, a fact, a search and a context with 400 INVALID_TEXT', async () => {
      await rejects({ method: 'POST', url: '/v1/events', headers: bearer(token), payload: goodBatch([goodEvent('nul\u0000byte')]) }, 400, 'INVALID_TEXT');
      const fact = { tier: 'clue', key: 'clue.code', value: 'a\u0000b', summary: 's', source: 'player_statement', confidence: 0.5, importance: 0.5, retention: 'permanent' };
      await rejects({ method: 'POST', url: `/v1/npcs/${NPC}/facts`, headers: bearer(token), payload: fact }, 400, 'INVALID_TEXT');
      await rejects({ method: 'POST', url: `/v1/npcs/${NPC}/search`, headers: bearer(token), payload: { text: 'co\u0000de' } }, 400, 'INVALID_TEXT');
      const context = { roomId: 'library', participants: [{ participantId: P1, anonymous: false }], messages: [{ seq: 1, speaker: { participantId: P1 }, text: 'hi\u0000', targeted: true, ts: 1 }], state: { version: 1, facts: { 'door.x': 'lo\u0000cked' } } };
      await rejects({ method: 'POST', url: `/v1/npcs/${NPC}/context`, headers: bearer(token), payload: context }, 400, 'INVALID_TEXT');
    });

    it('refuses a lone surrogate escape with 400 INVALID_TEXT, and keeps a real emoji', async () => {
      const raw = (text: string) => `{"idempotencyKey":"surrogate-${++batchCounter}-key","events":[{"gameId":"${GAME}","roomId":"library","npcId":"${NPC}","participantId":"${P1}","ts":1700000000,"text":"${text}","targeted":false}]}`;
      await rejects({ method: 'POST', url: '/v1/events', headers: json(), payload: raw('bad \\ud800 half') }, 400, 'INVALID_TEXT');
      const ok = await inject({ method: 'POST', url: '/v1/events', headers: json(), payload: raw('a whole one \\ud83d\\ude00') });
      expect(ok.statusCode).toBe(200);
    });

    it('refuses a body that is not valid UTF-8 with 400 INVALID_UTF8 before reading it as JSON', async () => {
      const prefix = Buffer.from(`{"idempotencyKey":"utf8-${++batchCounter}-key","events":[{"gameId":"${GAME}","roomId":"library","npcId":"${NPC}","participantId":"${P1}","ts":1700000000,"text":"bad `);
      const body = Buffer.concat([prefix, Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('","targeted":false}]}')]);
      await rejects({ method: 'POST', url: '/v1/events', headers: json(), payload: body }, 400, 'INVALID_UTF8');
    });
  });

  describe('other paths', () => {
    it('answers an overlong path parameter and an undecodable URL in the one error envelope, without echoing them', async () => {
      const long = await rejects({ method: 'POST', url: `/v1/npcs/${'n'.repeat(200)}/search`, headers: bearer(token), payload: { text: 'x' } }, 414, 'PATH_TOO_LONG');
      expect(long.error.message).not.toContain('nnnn');
      const bad = await rejects({ method: 'POST', url: '/v1/npcs/%E0%A4%A/search', headers: bearer(token), payload: { text: 'x' } }, 400, 'BAD_URL');
      expect(bad.error.message).not.toContain('%E0');
    });

    it('answers an unknown route with 404 ROUTE_NOT_FOUND', async () => {
      const response = await inject({ method: 'POST', url: '/v1/telemetry', headers: bearer(token), payload: {} });
      expect(response.statusCode).toBe(404);
      expect(response.json<ErrorBody>().error.code).toBe('ROUTE_NOT_FOUND');
    });

    it('rejects an unknown query parameter and a bad tier with 400', async () => {
      await rejects({ method: 'GET', url: `/v1/npcs/${NPC}/memories?tier=episodic&debug=1`, headers: bearer(token) }, 400, 'UNKNOWN_FIELD');
      await rejects({ method: 'GET', url: `/v1/npcs/${NPC}/memories?tier=working`, headers: bearer(token) }, 400, 'INVALID_REQUEST');
      await rejects({ method: 'GET', url: `/v1/npcs/${NPC}/memories?tier=episodic&limit=0`, headers: bearer(token) }, 400, 'INVALID_REQUEST');
    });
  });
});
