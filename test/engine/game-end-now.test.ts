/**
 * Ending a game closes its memory at once, even while lines of it still wait in the outbox:
 * a game token minted before the end is refused right after the end is answered (the game's
 * rows are hidden underneath as well: test/memory/lifecycle).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GameEngine } from '../../src/engine/engine.js';
import { HttpMemoryPort } from '../../src/engine/http-memory-port.js';
import type { IngestRequest, MemoryPort } from '../../src/engine/memory-port.js';
import { InProcessRegistryClient } from '../../src/registry/registry-client.js';
import { registry, sample, TOBIAS } from './support/engine-fixture.js';
import { startMemoryService, type RunningMemoryService } from './support/memory-service.js';

let service: RunningMemoryService;
beforeAll(async () => (service = await startMemoryService()));
afterAll(async () => service?.close());

describe('ending a game', () => {
  it('closes its memory before the lines still queued for it are delivered: a token of the game is refused right after the end', async () => {
    const http = new HttpMemoryPort(service.client(2000));
    let gate: Promise<void> = Promise.resolve();
    let open!: () => void;
    // A memory service that is slow to take lines (a backlog), and quick to take the end.
    const port: MemoryPort = {
      ingest: async (request: IngestRequest) => (await gate, http.ingest(request)),
      flushWorkingMemory: (request) => http.flushWorkingMemory(request),
      registerSecrets: (request) => http.registerSecrets(request),
      endGame: (request) => http.endGame(request),
    };
    const engine = new GameEngine({
      registry: new InProcessRegistryClient(registry),
      memory: port,
      proxySecret: randomBytes(32),
      scryptCost: { N: 1024, r: 8, p: 1 },
      outbox: { retry: { initialDelayMs: 20, maxDelayMs: 200 } },
      onOutboundError: () => {},
    });
    try {
      const gameId = await engine.createGame(sample);
      const ann = engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
      engine.join(ann, gameId);
      engine.say(ann, gameId, { text: 'the first line @Tobias' });
      await engine.idle();
      const client = service.client();
      const before = await client.listMemories(gameId, TOBIAS, { tier: 'episodic', limit: 100 });
      expect(before.memories.length).toBeGreaterThan(0);

      gate = new Promise((resolve) => (open = resolve));
      for (let i = 0; i < 5; i++) engine.say(ann, gameId, { text: `a queued line ${i} @Tobias` });
      expect(await engine.endGameNow(gameId, 2000)).toBe(true);
      // The same client (its game token was minted before the end), right after the end.
      await expect(client.listMemories(gameId, TOBIAS, { tier: 'episodic', limit: 100 })).rejects.toMatchObject({ status: 409, code: 'GAME_ENDED' });
      await expect(client.search(gameId, TOBIAS, { text: 'first line', k: 5 })).rejects.toMatchObject({ status: 409, code: 'GAME_ENDED' });

      open();
      await engine.idle(); // the queued lines meet an ended game; nothing crashes, nothing reappears
      await expect(client.listMemories(gameId, TOBIAS, { tier: 'episodic', limit: 100 })).rejects.toMatchObject({ code: 'GAME_ENDED' });
    } finally {
      open?.();
      engine.close();
    }
  });

  it('is the creating session\'s to do: another session is refused with NOT_GAME_CREATOR and the game goes on', async () => {
    const engine = new GameEngine({
      registry: new InProcessRegistryClient(registry),
      memory: new HttpMemoryPort(service.client(2000)),
      proxySecret: randomBytes(32),
      scryptCost: { N: 1024, r: 8, p: 1 },
      onOutboundError: () => {},
    });
    try {
      const idOf = (token: string) => engine.sessions.get(token).session.sessionId;
      const creator = engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
      const other = engine.sessions.openAnonymous({ displayName: 'Bo' }).token;
      const gameId = await engine.createGame(sample, { creator: idOf(creator) });
      await expect(engine.endGameNow(gameId, 2000, { by: idOf(other) })).rejects.toMatchObject({ code: 'NOT_GAME_CREATOR' });
      engine.join(other, gameId); // still running
      expect(await engine.endGameNow(gameId, 2000, { by: idOf(creator) })).toBe(true);
    } finally {
      engine.close();
    }
  });
});
