/**
 * The engine's public API over a real port: HTTP for what clients do, a real WebSocket per
 * session for the room's ordered stream. Web pages and bots use the same calls (`EngineClient`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EngineClient, EngineClientError, type StreamItem } from '../../src/engine/http/client.js';
import { MARA, TOBIAS } from './support/engine-fixture.js';
import { startEngineServer } from './support/engine-server.js';

let server: Awaited<ReturnType<typeof startEngineServer>>;
beforeAll(async () => {
  server = await startEngineServer({ helloTimeoutMs: 300 });
});
afterAll(async () => {
  await server?.close();
});

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'no error';
  } catch (e) {
    return e instanceof EngineClientError ? `${e.status} ${e.code}` : String(e);
  }
};

async function raw(method: string, path: string, options: { token?: string; body?: string | Uint8Array; contentType?: string } = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': options.contentType ?? 'application/json' } : {}),
    },
    ...(options.body !== undefined ? { body: options.body as BodyInit } : {}),
  });
  const json = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  return { status: response.status, code: json.error?.code, message: json.error?.message };
}

/** Opens a raw socket, sends `frames`, and resolves with what came back and how it closed. */
function socketExchange(path: string, frames: (string | Buffer)[]): Promise<{ messages: { type: string; code?: string }[]; close: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${server.wsUrl}${path}`);
    const messages: { type: string; code?: string }[] = [];
    socket.on('open', () => frames.forEach((f) => socket.send(f)));
    socket.on('message', (m) => messages.push(JSON.parse(m.toString())));
    socket.on('close', (close) => resolve({ messages, close }));
  });
}

const until = async (what: string, check: () => boolean, timeoutMs = 5000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the engine API over HTTP and WebSocket', () => {
  it('gives two clients, a person and a bot, the same ordered feed while both send concurrently', async () => {
    const ann = await EngineClient.anonymous(server.url, { displayName: 'Ann' });
    const bot = await EngineClient.bot(server.url, 'Gus');
    expect(server.engine.sessions.get(bot.token).session.controller).toBe('script');
    expect(server.engine.sessions.get(ann.token).session.controller).toBe('human');
    const gameId = await ann.createGame();
    await ann.join(gameId);
    await bot.join(gameId);

    const seen = { ann: [] as StreamItem[], bot: [] as StreamItem[] };
    const annStream = ann.stream(gameId, (i) => seen.ann.push(i));
    const botStream = bot.stream(gameId, (i) => seen.bot.push(i));
    await Promise.all([annStream.ready, botStream.ready]);

    const PER_SENDER = 40;
    await Promise.all([
      ...Array.from({ length: PER_SENDER }, (_, i) => ann.say(gameId, `ann ${i}`)),
      ...Array.from({ length: PER_SENDER }, (_, i) => bot.say(gameId, `gus ${i} @Tobias`)),
    ]);
    const says = (items: StreamItem[]) => items.filter((i) => i.entry.kind === 'say');
    await until('both feeds', () => says(seen.ann).length === 2 * PER_SENDER && says(seen.bot).length === 2 * PER_SENDER);

    const view = (items: StreamItem[]) => says(items).map((i) => `${i.entry.seq}:${i.entry.text}`);
    expect(view(seen.ann)).toEqual(view(seen.bot));
    const seqs = says(seen.ann).map((i) => i.entry.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // Each sender's lines appear in the order it sent them; targeting is emphasis only.
    expect(says(seen.ann).filter((i) => i.entry.text.startsWith('ann')).map((i) => i.entry.text)).toEqual(Array.from({ length: PER_SENDER }, (_, i) => `ann ${i}`));
    expect(says(seen.bot).filter((i) => i.entry.text.startsWith('gus')).every((i) => i.entry.targets.includes(TOBIAS))).toBe(true);
    // Cursors count the participant's own feed, without gaps.
    expect(seen.ann.map((i) => i.cursor)).toEqual(Array.from({ length: seen.ann.length }, (_, i) => seen.ann[0]!.cursor + i));

    // The HTTP feed agrees with the socket, and a reconnect resumes exactly after its cursor.
    const feed = await ann.feed(gameId);
    expect(feed.entries.slice(-seen.ann.length)).toEqual(seen.ann);
    expect(feed.more).toBe(false);
    // Paged: a page ends where the next begins.
    const page = (await fetch(`${server.url}/v1/games/${gameId}/feed?after=3&limit=2`, { headers: { authorization: `Bearer ${ann.token}` } }).then((r) => r.json())) as typeof feed;
    expect(page).toEqual({ entries: feed.entries.slice(3, 5), cursor: 5, more: true });
    annStream.close();
    await ann.say(gameId, 'while the socket was closed');
    const resumed: StreamItem[] = [];
    const again = ann.stream(gameId, (i) => resumed.push(i), { after: annStream.cursor });
    await again.ready;
    expect(resumed.map((i) => i.entry.text)).toEqual(['while the socket was closed']);
    expect(resumed[0]!.cursor).toBe(annStream.cursor + 1);

    // Leaving closes the leaver's socket with a reason; ending closes everyone's.
    await bot.leave(gameId);
    expect(await botStream.closed).toMatchObject({ code: 1000, reason: 'left' });
    await ann.endGame(gameId);
    expect(await again.closed).toEqual({ code: 1000, reason: 'ended', memory: 'closed' });
    expect(await codeOf(ann.say(gameId, 'anyone?'))).toBe('410 GAME_ENDED');
  });

  it('signs up, signs in, refuses wrong passwords, and serves an account session like any other', async () => {
    await EngineClient.signUp(server.url, 'quenby-fan', 'a long enough password');
    expect(await codeOf(EngineClient.signUp(server.url, 'quenby-fan', 'a long enough password'))).toBe('409 USERNAME_TAKEN');
    expect(await codeOf(EngineClient.signUp(server.url, 'x', 'a long enough password'))).toBe('400 INVALID_USERNAME');
    expect(await codeOf(EngineClient.signUp(server.url, 'shorty', 'short'))).toBe('400 WEAK_PASSWORD');
    expect(await codeOf(EngineClient.signIn(server.url, 'quenby-fan', 'the wrong password'))).toBe('401 INVALID_CREDENTIALS');
    const player = await EngineClient.signIn(server.url, 'quenby-fan', 'a long enough password');
    expect(player.displayName).toBe('quenby-fan');
    const gameId = await player.createGame();
    expect((await player.join(gameId)).roomId).toBe('foyer');
    expect(await player.act(gameId, { type: 'move', direction: 'west' })).toMatchObject({ ok: false, code: 'NO_EXIT' });
    expect(await player.act(gameId, { type: 'move', direction: 'north' })).toMatchObject({ ok: true });
    expect(await codeOf(player.say(gameId, 'hello', 'npc-nobody'))).toBe('409 NPC_NOT_IN_ROOM');
    expect((await player.say(gameId, 'Mara?', MARA)).targets).toEqual([MARA]);
    await player.signOut();
    expect(await codeOf(player.say(gameId, 'still here?'))).toBe('401 INVALID_SESSION');
  });

  it('resolves the front desk by exact full name only', async () => {
    const ann = await EngineClient.anonymous(server.url);
    const gameId = await ann.createGame();
    const answer = await ann.visit('Mara Ilse Quenby', gameId);
    expect(answer).toMatchObject({ ok: true, npc: { npcId: MARA }, whereabouts: [{ gameId, roomId: 'reading-room' }] });
    for (const name of ['Mara Quenby', 'mara ilse quenby', 'Marra Ilse Quenby', 'Mara', ' Mara Ilse Quenby']) {
      expect(await codeOf(ann.visit(name)), name).toBe('404 CHARACTER_NOT_RECOGNIZED');
    }
  });

  it('answers bad input with stable error codes and keeps serving', async () => {
    const ann = await EngineClient.anonymous(server.url);
    const token = ann.token;
    const gameId = await ann.createGame();
    await ann.join(gameId);
    const say = `/v1/games/${gameId}/say`;
    const cases: [string, Awaited<ReturnType<typeof raw>>, number, string][] = [
      ['extra field', await raw('POST', say, { token, body: JSON.stringify({ text: 'hi', userAgent: 'x' }) }), 400, 'UNKNOWN_FIELD'],
      ['empty text', await raw('POST', say, { token, body: JSON.stringify({ text: '' }) }), 400, 'INVALID_MESSAGE'],
      ['blank text', await raw('POST', say, { token, body: JSON.stringify({ text: '   ' }) }), 400, 'INVALID_MESSAGE'],
      ['control characters', await raw('POST', say, { token, body: JSON.stringify({ text: 'a\u0007b' }) }), 400, 'INVALID_MESSAGE'],
      ['a NUL character', await raw('POST', say, { token, body: JSON.stringify({ text: 'nul\u0000byte' }) }), 400, 'INVALID_TEXT'],
      ['a lone surrogate escape', await raw('POST', say, { token, body: '{"text":"bad \\ud800 half"}' }), 400, 'INVALID_TEXT'],
      ['bytes that are not UTF-8', await raw('POST', say, { token, body: Buffer.concat([Buffer.from('{"text":"bad '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]) }), 400, 'INVALID_UTF8'],
      ['text as a number', await raw('POST', say, { token, body: JSON.stringify({ text: 42 }) }), 400, 'INVALID_MESSAGE'],
      ['too long', await raw('POST', say, { token, body: JSON.stringify({ text: 'x'.repeat(4001) }) }), 400, 'INVALID_MESSAGE'],
      ['a JSON array', await raw('POST', say, { token, body: '[]' }), 400, 'INVALID_MESSAGE'],
      ['broken JSON', await raw('POST', say, { token, body: '{"text": ' }), 400, 'INVALID_JSON'],
      ['text/plain', await raw('POST', say, { token, body: 'hi', contentType: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['a huge body', await raw('POST', say, { token, body: JSON.stringify({ text: 'x'.repeat(300_000) }) }), 413, 'PAYLOAD_TOO_LARGE'],
      ['no token', await raw('POST', say, { body: JSON.stringify({ text: 'hi' }) }), 401, 'INVALID_SESSION'],
      ['unknown token', await raw('POST', say, { token: 'nope', body: JSON.stringify({ text: 'hi' }) }), 401, 'INVALID_SESSION'],
      ['unknown game', await raw('POST', '/v1/games/g-nope/say', { token, body: JSON.stringify({ text: 'hi' }) }), 404, 'UNKNOWN_GAME'],
      ['malformed game id', await raw('POST', '/v1/games/%20bad%20/join', { token, body: '{}' }), 400, 'INVALID_REQUEST'],
      ['an unknown action', await raw('POST', `/v1/games/${gameId}/act`, { token, body: JSON.stringify({ type: 'teleport', to: 'courtyard' }) }), 400, 'INVALID_ACTION'],
      ['a move with two targets', await raw('POST', `/v1/games/${gameId}/act`, { token, body: JSON.stringify({ type: 'move', direction: 'north', to: 'foyer' }) }), 400, 'INVALID_ACTION'],
      ['a bad cursor', await raw('GET', `/v1/games/${gameId}/feed?after=-1`, { token }), 400, 'INVALID_REQUEST'],
      ['an unknown query field', await raw('GET', `/v1/games/${gameId}/feed?page=3`, { token }), 400, 'UNKNOWN_FIELD'],
      ['a bad definition', await raw('POST', '/v1/games', { token, body: JSON.stringify({ definition: { rooms: [] } }) }), 400, 'INVALID_GAME_DEFINITION'],
      ['a controller that is not one', await raw('POST', '/v1/sessions/anonymous', { body: JSON.stringify({ controller: 'robot' }) }), 400, 'INVALID_REQUEST'],
      ['a front desk with a stray field', await raw('POST', '/v1/front-desk', { token, body: JSON.stringify({ fullName: 'Mara Ilse Quenby', fuzzy: true }) }), 400, 'INVALID_REQUEST'],
      ['joining twice', await raw('POST', `/v1/games/${gameId}/join`, { token, body: '{}' }), 409, 'ALREADY_IN_GAME'],
      ['ending a game one did not create', await raw('POST', `/v1/games/${gameId}/end`, { token: (await EngineClient.anonymous(server.url)).token, body: '{}' }), 403, 'NOT_GAME_CREATOR'],
      ['no such route', await raw('GET', '/v1/nothing-here'), 404, 'ROUTE_NOT_FOUND'],
      ['an overlong game id', await raw('POST', `/v1/games/g-${'x'.repeat(200)}/say`, { token, body: JSON.stringify({ text: 'hi' }) }), 414, 'PATH_TOO_LONG'],
      ['an undecodable URL', await raw('POST', '/v1/games/%E0%A4%A/say', { token, body: JSON.stringify({ text: 'hi' }) }), 400, 'BAD_URL'],
    ];
    for (const [what, got, status, code] of cases) expect({ what, status: got.status, code: got.code }).toEqual({ what, status, code });
    for (const [, got] of cases) expect(got.message?.length).toBeGreaterThan(10);
    for (const [, got] of cases) expect(got.message).not.toMatch(/xxxxxxxx|%E0/); // never echoes the input
    // Nothing of it reached the room, and the server is fine.
    expect((await ann.feed(gameId)).entries.filter((i) => i.entry.kind === 'say')).toEqual([]);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('closes stream sockets that misbehave, each with an error code', async () => {
    const ann = await EngineClient.anonymous(server.url);
    const gameId = await ann.createGame();
    const outsider = await EngineClient.anonymous(server.url);
    await ann.join(gameId);
    const path = `/v1/games/${gameId}/stream`;
    const hello = (token: string, extra: object = {}) => JSON.stringify({ type: 'hello', token, ...extra });

    const cases: [string, (string | Buffer)[], string, number, string?][] = [
      ['not JSON', ['{oops'], path, 4400, 'INVALID_REQUEST'],
      ['no hello first', [JSON.stringify({ type: 'ping' })], path, 4400, 'INVALID_REQUEST'],
      ['a hello with a stray field', [hello(ann.token, { userAgent: 'x' })], path, 4400, 'INVALID_REQUEST'],
      ['an unknown token', [hello('nope')], path, 4401, 'INVALID_SESSION'],
      ['a session not in the game', [hello(outsider.token)], path, 4409, 'NOT_IN_GAME'],
      ['an unknown game', [hello(ann.token)], '/v1/games/g-nope/stream', 4404, 'UNKNOWN_GAME'],
      ['a cursor from the future', [hello(ann.token, { after: 999 })], path, 4400, 'INVALID_MESSAGE'],
      ['silence', [], path, 4408, 'HELLO_TIMEOUT'],
      ['a frame after hello that is not a ping', [hello(ann.token), JSON.stringify({ type: 'say', text: 'hi' })], path, 4400, 'INVALID_REQUEST'],
    ];
    for (const [what, frames, p, close, code] of cases) {
      const got = await socketExchange(p, frames);
      expect({ what, close: got.close, code: got.messages.find((m) => m.type === 'error')?.code }).toEqual({ what, close, code });
    }
    const pong = await new Promise<string[]>((resolve) => {
      const socket = new WebSocket(`${server.wsUrl}${path}`);
      const types: string[] = [];
      socket.on('open', () => {
        socket.send(hello(ann.token));
        socket.send(JSON.stringify({ type: 'ping' }));
      });
      socket.on('message', (m) => {
        types.push((JSON.parse(m.toString()) as { type: string }).type);
        if (types.includes('pong')) socket.close();
      });
      socket.on('close', () => resolve(types));
    });
    expect(pong[0]).toBe('ready');
    expect(pong).toContain('pong');
    expect(server.streams.sockets).toBe(0);
  });
});
