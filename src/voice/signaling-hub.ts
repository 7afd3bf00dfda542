/**
 * Voice signaling between humans: a relay of WebRTC offers, answers and ICE candidates between
 * sessions that are in the same room of the same game. It keeps no record of what it relays and
 * has no code path to NPCs, the memory service or the outbox (test/engine/voice-isolation.test.ts
 * walks the imports to prove it).
 *
 * Peers are known to each other by a random peer id per connection, never by session, account or
 * participant id. A peer may signal only a peer that is in its room at that moment.
 */
import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { Compile } from 'typebox/compile';
import type { VoicePresence } from './presence.js';
import { VoiceClientMessage, VoiceHello, type VoiceErrorCode, type VoiceServerMessage } from './protocol.js';

const helloValidator = Compile(VoiceHello);
const messageValidator = Compile(VoiceClientMessage);

export interface VoiceSignalingOptions {
  presence: VoicePresence;
  /** Largest accepted frame in bytes (Default: 64 KiB). */
  maxFrameBytes?: number;
  /** Frames a peer may send per second, on average (Default: 50; bursts of twice that). */
  ratePerSecond?: number;
  /** Time allowed for the hello frame (Default: 5000 ms). */
  helloTimeoutMs?: number;
}

interface Peer {
  readonly peerId: string;
  readonly token: string;
  readonly gameId: string;
  readonly socket: WebSocket;
  /** The room key last announced to the other peers. */
  roomKey: string | undefined;
  tokens: number;
  refilledAt: number;
}

const CLOSE: Record<VoiceErrorCode, number> = {
  INVALID_REQUEST: 4400,
  NOT_IN_GAME: 4409,
  HELLO_TIMEOUT: 4408,
  PEER_NOT_IN_ROOM: 4409,
  RATE_LIMITED: 4429,
  MESSAGE_TOO_LARGE: 1009,
};

export class VoiceSignalingHub {
  readonly #peers = new Map<string, Peer>();
  readonly #presence: VoicePresence;
  readonly #maxFrame: number;
  readonly #rate: number;
  readonly #helloTimeoutMs: number;

  constructor(options: VoiceSignalingOptions) {
    this.#presence = options.presence;
    this.#maxFrame = options.maxFrameBytes ?? 64 * 1024;
    this.#rate = options.ratePerSecond ?? 50;
    this.#helloTimeoutMs = options.helloTimeoutMs ?? 5000;
  }

  get peers(): number {
    return this.#peers.size;
  }

  accept(socket: WebSocket): void {
    let peer: Peer | undefined;
    const timer = setTimeout(() => fail(socket, 'HELLO_TIMEOUT', 'Send { "type": "hello", "token", "gameId" } first.'), this.#helloTimeoutMs);
    socket.on('message', (raw, isBinary) => {
      const size = Array.isArray(raw) ? raw.reduce((n, b) => n + b.length, 0) : (raw as Buffer | ArrayBuffer).byteLength;
      if (isBinary || size > this.#maxFrame) {
        fail(socket, 'MESSAGE_TOO_LARGE', `Frames are JSON text of at most ${this.#maxFrame} bytes.`);
        return;
      }
      const message = parse(raw.toString());
      if (!peer) {
        clearTimeout(timer);
        peer = this.#hello(socket, message);
        return;
      }
      if (!this.#take(peer)) {
        fail(socket, 'RATE_LIMITED', 'Too many frames; slow down.');
        return;
      }
      this.#handle(peer, message);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (peer) this.#leave(peer);
    });
    socket.on('error', () => socket.terminate());
  }

  /** Rooms may have changed (a move, a join, a leave): re-group the game's peers. */
  refresh(gameId?: string): void {
    for (const peer of [...this.#peers.values()]) {
      if (gameId !== undefined && peer.gameId !== gameId) continue;
      const now = this.#presence.roomOf(peer.token, peer.gameId);
      if (now === peer.roomKey) continue;
      if (now === undefined) {
        fail(peer.socket, 'NOT_IN_GAME', 'This session is no longer in the game.');
        this.#leave(peer);
        continue;
      }
      this.#announce(peer, 'peer-left');
      peer.roomKey = now;
      send(peer.socket, { type: 'welcome', peerId: peer.peerId, peers: this.#roomMates(peer).map((p) => p.peerId) });
      this.#announce(peer, 'peer-joined');
    }
  }

  #hello(socket: WebSocket, message: unknown): Peer | undefined {
    if (!helloValidator.Check(message)) {
      fail(socket, 'INVALID_REQUEST', 'The first frame is { "type": "hello", "token": "<session token>", "gameId": "<game id>" }.');
      return undefined;
    }
    const roomKey = this.#presence.roomOf(message.token, message.gameId);
    if (roomKey === undefined) {
      fail(socket, 'NOT_IN_GAME', 'Join the game over the engine API first; voice is for people in the same room.');
      return undefined;
    }
    const peer: Peer = {
      peerId: randomBytes(16).toString('base64url'),
      token: message.token,
      gameId: message.gameId,
      socket,
      roomKey,
      tokens: this.#rate * 2,
      refilledAt: Date.now(),
    };
    this.#peers.set(peer.peerId, peer);
    send(socket, { type: 'welcome', peerId: peer.peerId, peers: this.#roomMates(peer).map((p) => p.peerId) });
    this.#announce(peer, 'peer-joined');
    return peer;
  }

  #handle(peer: Peer, message: unknown): void {
    if (!messageValidator.Check(message)) {
      send(peer.socket, { type: 'error', code: 'INVALID_REQUEST', message: 'Send { "type": "signal", "to", "signal": { description } | { candidate } } or { "type": "ping" }.' });
      return;
    }
    if (message.type === 'ping') {
      send(peer.socket, { type: 'pong' });
      return;
    }
    const to = this.#peers.get(message.to);
    // Checked at the moment of relaying: whoever walked out of the room is no longer reachable.
    const here = this.#presence.roomOf(peer.token, peer.gameId);
    const there = to ? this.#presence.roomOf(to.token, to.gameId) : undefined;
    if (!to || to === peer || here === undefined || to.gameId !== peer.gameId || here !== there) {
      send(peer.socket, { type: 'error', code: 'PEER_NOT_IN_ROOM', message: 'That peer is not in your room.' });
      return;
    }
    send(to.socket, { type: 'signal', from: peer.peerId, signal: message.signal });
  }

  #leave(peer: Peer): void {
    if (!this.#peers.delete(peer.peerId)) return;
    this.#announce(peer, 'peer-left');
  }

  #announce(peer: Peer, type: 'peer-joined' | 'peer-left'): void {
    for (const other of this.#roomMates(peer)) send(other.socket, { type, peerId: peer.peerId });
  }

  #roomMates(peer: Peer): Peer[] {
    const mates: Peer[] = [];
    for (const other of this.#peers.values()) {
      if (other !== peer && other.gameId === peer.gameId && other.roomKey !== undefined && other.roomKey === peer.roomKey) mates.push(other);
    }
    return mates;
  }

  /** Token bucket: `rate` per second, bursts up to twice that. */
  #take(peer: Peer): boolean {
    const now = Date.now();
    peer.tokens = Math.min(this.#rate * 2, peer.tokens + ((now - peer.refilledAt) / 1000) * this.#rate);
    peer.refilledAt = now;
    if (peer.tokens < 1) return false;
    peer.tokens -= 1;
    return true;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(socket: WebSocket, message: VoiceServerMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

function fail(socket: WebSocket, code: VoiceErrorCode, message: string): void {
  send(socket, { type: 'error', code, message });
  socket.close(CLOSE[code], code);
}
