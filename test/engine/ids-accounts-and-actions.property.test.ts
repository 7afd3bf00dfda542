/**
 * The engine's API under arbitrary strings in every string field the other property test
 * (text-fields.property.test.ts: say text, display name) leaves out: accounts, game ids in
 * paths, the feed's query, actions, say targets, the front desk, game definitions, the stream's
 * hello, and the names of fields the API does not have. Over a real port, with the engine's
 * database on the backend under test. See test/helpers/text.ts for what each field must do.
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScopeId } from '../../src/boundary/events.js';
import { EngineClient } from '../../src/engine/http/client.js';
import { LocalId } from '../../src/engine/game-definition/schema.js';
import { closeEngineDatabases, engineDatabase } from '../helpers/engine-database.js';
import { expectFieldAnswer, fieldText, isText, patternOf, receivedInQuery, urlPart, type Answer } from '../helpers/text.js';
import { registry, sampleCopy } from './support/engine-fixture.js';
import { startEngineServer } from './support/engine-server.js';

const SCOPE_ID = patternOf(ScopeId);
const LOCAL_ID = patternOf(LocalId);
const USERNAME = '^[A-Za-z0-9_.-]{3,32}$';
const DIRECTION = '^[a-z][a-z-]{0,31}$';
const chars = (s: string) => [...s].length;
const matches = (pattern: string) => (s: string) => new RegExp(pattern).test(s);
/** Text of 1 to `max` characters (code points, as the schemas count). */
const text = (max: number) => (s: string) => isText(s) && chars(s) >= 1 && chars(s) <= max;
const SHOWN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;
const CANONICAL = ['Mara Ilse Quenby', 'Osric Bellamy Thorne', 'Wren Adaeze Callow'];

describe('the ids, accounts, actions and names of the engine, with arbitrary strings', () => {
  let server: Awaited<ReturnType<typeof startEngineServer>>;
  let ann: EngineClient;
  let gameId: string;
  let n = 0;

  beforeAll(async () => {
    server = await startEngineServer({ rateLimit: { max: 100_000, timeWindowMs: 1000 }, store: await engineDatabase() });
    ann = await EngineClient.anonymous(server.url);
    gameId = await ann.createGame();
    await ann.join(gameId);
  });
  afterAll(async () => {
    await server.close();
    await closeEngineDatabases();
  });

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, token: string | undefined = ann.token): Promise<Answer> => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const raw = await response.text();
    return { status: response.status, body: raw ? JSON.parse(raw) : undefined };
  };

  it('signs up and in with exactly the username and password sent, and refuses any other with 400 without repeating it', async () => {
    let signedIn = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(USERNAME), fc.oneof(fieldText(), fc.string({ minLength: 10, maxLength: 60, unit: 'grapheme' })), fieldText('^(human|script)$'), async (username, password, controller) => {
        // A name of the right shape may already be taken by an earlier run: 409.
        const byName = await call('POST', '/v1/accounts', { username, password: 'a long passphrase' }, undefined);
        if (expectFieldAnswer(byName, username, { valid: matches(USERNAME)(username), ok: [201, 409] })) {
          expect(byName.body).toEqual({ username });
          expect(await call('POST', '/v1/sessions', { username, password: 'a long passphrase' }, undefined)).toMatchObject({ status: 201, body: { displayName: username } });
          signedIn++;
        }
        const fresh = `user.${++n}.${Math.random().toString(36).slice(2, 8)}`;
        const byPassword = await call('POST', '/v1/accounts', { username: fresh, password }, undefined);
        if (expectFieldAnswer(byPassword, password, { valid: isText(password) && password.length >= 10 && password.length <= 1024, ok: [201] })) {
          expect(await call('POST', '/v1/sessions', { username: fresh, password }, undefined)).toMatchObject({ status: 201 });
          expect(await call('POST', '/v1/sessions', { username: fresh, password: `${password}x` }, undefined)).toMatchObject({ status: 401 });
          signedIn++;
        }
        const byController = await call('POST', '/v1/sessions/anonymous', { displayName: 'Guest', controller }, undefined);
        expectFieldAnswer(byController, controller, { valid: controller === 'human' || controller === 'script', ok: [201] });
      }),
      { numRuns: 30, seed: 1520 },
    );
    expect(signedIn).toBeGreaterThan(5);
  }, 60_000);

  it('answers any game id in a path, and any feed cursor and page size, without a 5xx: 404 for a game that is not running, 400 or 414 for what is not an id', async () => {
    const AFTER = '^(0|[1-9][0-9]{0,8})$';
    const LIMIT = '^([1-9][0-9]{0,2}|500)$';
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(SCOPE_ID), fc.constant('')), fieldText(AFTER), fieldText(LIMIT), async (id, after, limit) => {
        // "", "." and ".." are not ids, and a URL resolves dot segments away: another route, or none.
        for (const [method, route, body] of [
          ['POST', 'join', undefined],
          ['POST', 'leave', undefined],
          ['POST', 'say', { text: 'hello' }],
          ['POST', 'act', { type: 'look' }],
          ['GET', 'feed', undefined],
          ['POST', 'end', undefined],
        ] as const) {
          const answer = await call(method, `/v1/games/${urlPart(id)}/${route}`, body);
          // A URL past Node's header limit (16 KiB) is refused before routing: 431.
          expectFieldAnswer(answer, id, { valid: matches(SCOPE_ID)(id) && id !== gameId, ok: [404], refused: [400, 404, 414, 431] });
        }
        const byAfter = await call('GET', `/v1/games/${gameId}/feed?after=${urlPart(after)}`);
        if (expectFieldAnswer(byAfter, after, { valid: matches(AFTER)(receivedInQuery(after)), ok: [200], refused: [400, 431] })) {
          expect(byAfter.body).toMatchObject({ cursor: expect.any(Number), entries: expect.any(Array) });
        }
        const byLimit = await call('GET', `/v1/games/${gameId}/feed?limit=${urlPart(limit)}`);
        if (expectFieldAnswer(byLimit, limit, { valid: matches(LIMIT)(receivedInQuery(limit)), ok: [200], refused: [400, 431] })) {
          expect((byLimit.body as { entries: unknown[] }).entries.length).toBeLessThanOrEqual(Number(limit));
        }
      }),
      { numRuns: 30, seed: 1521 },
    );
  }, 60_000);

  it('takes an action with exactly the direction, item, puzzle and answer sent, and refuses any other with 400 INVALID_ACTION', async () => {
    const actor = await EngineClient.anonymous(server.url);
    const game = await actor.createGame();
    await actor.join(game);
    const act = (action: unknown) => call('POST', `/v1/games/${game}/act`, action, actor.token);
    await fc.assert(
      fc.asyncProperty(fieldText(DIRECTION), fieldText(LOCAL_ID), fieldText(), async (direction, id, answer) => {
        // Moving would take the player elsewhere; unlocking stays put. Any of them may fail physically (200, ok: false).
        for (const [action, sent, valid] of [
          [{ type: 'unlock', direction }, direction, matches(DIRECTION)(direction)],
          [{ type: 'take', item: id }, id, matches(LOCAL_ID)(id)],
          [{ type: 'drop', item: id }, id, matches(LOCAL_ID)(id)],
          [{ type: 'solve', puzzle: id, answer: 'x' }, id, matches(LOCAL_ID)(id)],
          [{ type: 'solve', puzzle: 'study-safe', answer }, answer, text(200)(answer)],
        ] as const) {
          const result = await act(action);
          if (expectFieldAnswer(result, sent, { valid, ok: [200] })) expect(result.body).toMatchObject({ ok: expect.any(Boolean) });
          else expect((result.body as { error: { code: string } }).error.code).toMatch(/^(INVALID_ACTION|INVALID_TEXT|PAYLOAD_TOO_LARGE)$/);
        }
      }),
      { numRuns: 30, seed: 1522 },
    );
  }, 60_000);

  it('addresses exactly the NPC id given as a say target, and refuses any other with 400', async () => {
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), async (target) => {
        // The player's room holds no NPC of a made-up id: 409 NPC_NOT_IN_ROOM.
        const answer = await call('POST', `/v1/games/${gameId}/say`, { text: 'hello', target });
        expectFieldAnswer(answer, target, { valid: matches(SCOPE_ID)(target), ok: [201, 409] });
      }),
      { numRuns: 30, seed: 1523 },
    );
  }, 60_000);

  it('finds at the front desk exactly a canonical name sent, "Character not recognized" for any other text, and refuses what is not text with 400', async () => {
    let found = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(), fc.constantFrom(...CANONICAL)), fieldText(SCOPE_ID), async (name, id) => {
        const byFullName = await call('POST', '/v1/front-desk', { fullName: name });
        if (expectFieldAnswer(byFullName, name, { valid: text(300)(name), ok: CANONICAL.includes(name) ? [200] : [404] })) {
          expect(byFullName.body).toMatchObject({ ok: true, npc: { fullName: name } });
          found++;
        } else if (text(300)(name)) {
          expect(byFullName.body).toEqual({ error: { code: 'CHARACTER_NOT_RECOGNIZED', message: 'Character not recognized' } });
        }
        const [first, middle, last] = CANONICAL[0]!.split(' ') as [string, string, string];
        for (const parts of [{ first: name, middle, last }, { first, middle: name, last }, { first, middle, last: name }]) {
          const byParts = await call('POST', '/v1/front-desk', parts);
          const canonical = registry.resolve(parts).ok;
          expectFieldAnswer(byParts, name, { valid: text(100)(name), ok: canonical ? [200] : [404] });
        }
        const inGame = await call('POST', '/v1/front-desk', { fullName: CANONICAL[0], gameId: id });
        if (expectFieldAnswer(inGame, id, { valid: matches(SCOPE_ID)(id), ok: [200] })) expect(inGame.body).toMatchObject({ ok: true, whereabouts: expect.any(Array) });
      }),
      { numRuns: 30, seed: 1524 },
    );
    expect(found).toBeGreaterThan(3);
  }, 60_000);

  it("creates a game whose title, room, item and puzzle texts are exactly those sent, and refuses a definition whose text is not text with 400", async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(), async (s) => {
        const definition = sampleCopy();
        const start = definition.rooms.find((r) => r.id === definition.startRoom)!;
        definition.title = s;
        start.description = s;
        const answer = await call('POST', '/v1/games', { definition });
        if (expectFieldAnswer(answer, s, { valid: text(120)(s), ok: [201] })) {
          const { gameId: id } = answer.body as { gameId: string };
          const joined = await call('POST', `/v1/games/${id}/join`);
          expect(joined.status).toBe(200);
          expect((joined.body as { description: string }).description).toContain(`. ${s}`);
          created++;
        }
      }),
      { numRuns: 30, seed: 1525 },
    );
    expect(created).toBeGreaterThan(5);
  }, 60_000);

  it('refuses a field it does not have with 400 UNKNOWN_FIELD, naming it when its name is an ordinary name and never repeating any other', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(SHOWN_NAME.source), fc.constantFrom('userAgent', 'x"y', '<script>', '\u202eevil')), async (name) => {
        fc.pre(name !== 'text' && name !== 'target' && name !== '__proto__');
        const answer = await call('POST', `/v1/games/${gameId}/say`, { text: 'hi', [name]: 1 });
        expect(answer.status).toBe(400);
        const { error } = answer.body as { error: { code: string; message: string } };
        expect(error.code).toBe(isText(name) ? 'UNKNOWN_FIELD' : 'INVALID_TEXT');
        if (isText(name) && SHOWN_NAME.test(name)) expect(error.message).toContain(`"${name}"`);
        else expect(error.message.includes(name) && name.trim().length >= 2).toBe(false);
      }),
      { numRuns: 40, seed: 1526 },
    );
  }, 60_000);

  it("closes a stream whose hello holds any token that is not a session's with an error that does not repeat it", async () => {
    const hello = (token: string) =>
      new Promise<{ messages: { type: string; code?: string; message?: string }[]; close: number }>((resolve) => {
        const socket = new WebSocket(`${server.url.replace('http:', 'ws:')}/v1/games/${gameId}/stream`);
        const messages: { type: string; code?: string; message?: string }[] = [];
        socket.on('open', () => socket.send(JSON.stringify({ type: 'hello', token })));
        socket.on('message', (m) => messages.push(JSON.parse(m.toString()) as { type: string }));
        socket.on('close', (close) => resolve({ messages, close }));
      });
    await fc.assert(
      fc.asyncProperty(fieldText('^[A-Za-z0-9_-]{1,200}$'), async (token) => {
        const { messages, close } = await hello(token);
        expect(close).toBeGreaterThanOrEqual(4400);
        expect(close).toBeLessThan(4500);
        const error = messages.find((m) => m.type === 'error');
        expect(error).toMatchObject({ code: expect.stringMatching(/^(INVALID_SESSION|INVALID_REQUEST|NOT_IN_GAME)$/), message: expect.any(String) });
        expect(error!.message!.includes(token) && token.length >= 6).toBe(false);
      }),
      { numRuns: 20, seed: 1527 },
    );
  }, 60_000);
});
