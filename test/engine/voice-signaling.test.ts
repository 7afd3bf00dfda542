/**
 * Voice signaling over real WebSockets: offers, answers and ICE candidates go between people in
 * the same room, nowhere else, and nothing of them reaches the memory port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EngineClient } from '../../src/engine/http/client.js';
import { startEngineServer } from './support/engine-server.js';

let server: Awaited<ReturnType<typeof startEngineServer>>;
beforeAll(async () => {
  server = await startEngineServer();
});
afterAll(async () => {
  await server?.close();
});

interface Msg {
  type: string;
  peerId?: string;
  peers?: string[];
  from?: string;
  code?: string;
  signal?: unknown;
}

/** A voice socket that collects what it receives. */
async function voice(token: string, gameId: string) {
  const socket = new WebSocket(`${server.wsUrl}/v1/voice`);
  const inbox: Msg[] = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('message', (m) => inbox.push(JSON.parse(m.toString()) as Msg));
  await new Promise((resolve) => socket.on('open', resolve));
  socket.send(JSON.stringify({ type: 'hello', token, gameId }));
  const next = async (type: string, after = 0): Promise<Msg> => {
    const end = Date.now() + 3000;
    for (;;) {
      const found = inbox.slice(after).find((m) => m.type === type);
      if (found) return found;
      if (Date.now() > end) throw new Error(`no ${type} in ${JSON.stringify(inbox)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const answers = [next('welcome'), next('error')];
  for (const a of answers) a.catch(() => {}); // the one that does not come times out quietly
  await Promise.any(answers);
  const welcome = inbox.find((m) => m.type === 'welcome');
  return { socket, inbox, closed, next, peerId: welcome?.peerId, peers: welcome?.peers, send: (m: unknown) => socket.send(JSON.stringify(m)) };
}

const offer = { description: { type: 'offer', sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n' } };
const candidate = { candidate: { candidate: 'candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host', sdpMid: '0', sdpMLineIndex: 0 } };

describe('voice signaling between humans', () => {
  it('relays offers and candidates within a room, refuses other rooms, and follows people as they move', async () => {
    const [ann, bo, cy] = await Promise.all(['Ann', 'Bo', 'Cy'].map((displayName) => EngineClient.anonymous(server.url, { displayName })));
    const gameId = await ann!.createGame();
    for (const c of [ann!, bo!, cy!]) await c.join(gameId);
    await cy!.act(gameId, { type: 'move', direction: 'north' }); // Cy goes to the reading room
    const callsBefore = server.memory.calls.length;

    const a = await voice(ann!.token, gameId);
    const b = await voice(bo!.token, gameId);
    const c = await voice(cy!.token, gameId);
    expect(b.peers).toEqual([a.peerId]);
    expect(c.peers).toEqual([]);
    expect((await a.next('peer-joined')).peerId).toBe(b.peerId);
    // Peer ids are fresh random ids, not tokens or participant ids.
    expect(a.peerId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect([ann!.token, bo!.token]).not.toContain(a.peerId);

    b.send({ type: 'signal', to: a.peerId, signal: offer });
    b.send({ type: 'signal', to: a.peerId, signal: candidate });
    expect(await a.next('signal')).toEqual({ type: 'signal', from: b.peerId, signal: offer });
    await new Promise((r) => setTimeout(r, 20));
    expect(a.inbox.filter((m) => m.type === 'signal')).toHaveLength(2);

    // Another room is out of reach.
    const mark = c.inbox.length;
    a.send({ type: 'signal', to: c.peerId, signal: offer });
    expect((await a.next('error')).code).toBe('PEER_NOT_IN_ROOM');
    expect(c.inbox.slice(mark).filter((m) => m.type === 'signal')).toEqual([]);

    // Bo walks into the reading room: Ann sees Bo leave, Cy sees Bo arrive, and Bo can reach Cy.
    const aMark = a.inbox.length;
    await bo!.act(gameId, { type: 'move', direction: 'north' });
    expect((await a.next('peer-left', aMark)).peerId).toBe(b.peerId);
    expect((await c.next('peer-joined')).peerId).toBe(b.peerId);
    b.send({ type: 'signal', to: c.peerId, signal: candidate });
    expect(await c.next('signal')).toEqual({ type: 'signal', from: b.peerId, signal: candidate });

    // Leaving the game closes the voice socket.
    await cy!.leave(gameId);
    expect(await c.closed).toBe(4409);
    expect((await b.next('peer-left', 0)).type).toBe('peer-left');

    // Signaling went nowhere near the memory service: only the moves' room flushes, no voice content.
    const after = JSON.stringify(server.memory.calls.slice(callsBefore));
    expect(after).not.toContain('candidate');
    expect(after).not.toContain('v=0');
    for (const s of [a, b]) s.socket.close();
  });

  it('refuses bad frames with error codes', async () => {
    const ann = await EngineClient.anonymous(server.url);
    const gameId = await ann.createGame();
    const outsider = await EngineClient.anonymous(server.url);
    await ann.join(gameId);

    const notInGame = await voice(outsider.token, gameId);
    expect(await notInGame.closed).toBe(4409);
    expect(notInGame.inbox[0]).toMatchObject({ type: 'error', code: 'NOT_IN_GAME' });

    const a = await voice(ann.token, gameId);
    a.send({ type: 'signal', to: 'x'.repeat(22), signal: offer, transcript: 'extra' });
    expect((await a.next('error')).code).toBe('INVALID_REQUEST');
    a.socket.send('{not json');
    a.send({ type: 'signal', to: a.peerId, signal: { description: { type: 'offer', sdp: 'x'.repeat(40_000) } } });
    a.send({ type: 'ping' });
    await a.next('pong');
    expect(a.inbox.filter((m) => m.type === 'error').map((m) => m.code)).toEqual(['INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST']);
    a.socket.send('x'.repeat(70_000));
    expect(await a.closed).toBe(1009);
  });
});
