import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { memorySystemOn } from '../helpers/fixture.js';
import { createTenant } from '../../src/memory/credentials.js';
import { MemoryHttpClient } from '../../src/boundary/memory-client.js';
import type { MemorySystem } from '../../src/memory/system.js';

/** Seed 000, "Game-Clue Compartmentalization in Concurrent Execution", over a real port. */
describe('game-clue compartmentalization between concurrent games of one NPC', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let client: MemoryHttpClient;

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    const address = await system.app.listen({ port: 0, host: '127.0.0.1' });
    const { runtimeKey } = await createTenant(database.db, 'escape-games');
    client = new MemoryHttpClient(address, runtimeKey);
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('keeps the safe code "7492" told to Mara in game alpha invisible to Mara in game beta', async () => {
    await client.ingest('game-alpha', {
      idempotencyKey: 'alpha-batch-0001',
      events: [
        { gameId: 'game-alpha', roomId: 'vault', npcId: 'npc-mara', participantId: 'player-aaaaaaaa', ts: 1_764_500_000, targeted: true, text: 'Mara, the safe code is 7492.' },
      ],
    });
    await client.writeFact('game-alpha', 'npc-mara', {
      tier: 'clue', key: 'safe.code', value: '7492', summary: 'The safe code is 7492',
      source: 'player_statement', confidence: 0.9, importance: 0.9, retention: 'session_only',
    });
    await client.ingest('game-beta', {
      idempotencyKey: 'beta-batch-0001',
      events: [
        { gameId: 'game-beta', roomId: 'vault', npcId: 'npc-mara', participantId: 'player-bbbbbbbb', ts: 1_764_500_005, targeted: true, text: 'Mara, do you know the safe code?' },
      ],
    });

    const alpha = await client.search('game-alpha', 'npc-mara', { text: 'what is the safe code' });
    const beta = await client.search('game-beta', 'npc-mara', { text: 'what is the safe code' });

    const mentions7492 = (m: { text?: string; fact?: { value: string } }) => `${m.text ?? ''} ${m.fact?.value ?? ''}`.includes('7492');
    expect(alpha.memories.some(mentions7492)).toBe(true);
    expect(beta.memories.length).toBeGreaterThan(0); // beta sees its own question...
    expect(beta.memories.some(mentions7492)).toBe(false); // ...and nothing of alpha's code
  });

  it('answers a GET of alpha\'s clue id with beta\'s token exactly as it answers an id that never existed', async () => {
    const { memory } = await client.writeFact('game-alpha', 'npc-mara', {
      tier: 'clue', key: 'drawer.location', value: 'behind the clock', summary: 'The key is behind the clock',
      source: 'player_statement', confidence: 0.9, importance: 0.8, retention: 'session_only',
    });
    const get = async (game: string, id: string) => {
      const token = await client.gameToken(game);
      const response = await fetch(new URL(`/v1/npcs/npc-mara/memories/${id}`, system.app.listeningOrigin), {
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: response.status, body: await response.json() };
    };
    const own = await get('game-alpha', memory.id);
    const foreign = await get('game-beta', memory.id);
    const missing = await get('game-beta', '00000000-0000-4000-8000-000000000000');
    expect(own.status).toBe(200);
    expect(foreign).toEqual(missing);
    expect(foreign.status).toBe(404);
  });
});
