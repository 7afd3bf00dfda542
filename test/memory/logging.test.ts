import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { createTenant } from '../../src/memory/credentials.js';

describe('the memory service logs', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let keys: Awaited<ReturnType<typeof tempDir>>;
  const lines: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase();
    keys = await tempDir('keyring');
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: pino({ level: 'trace' }, sink) });
  });
  afterAll(async () => {
    await system?.app.close();
    await keys?.remove();
    await database?.drop();
  });

  it('never contain memory text, whatever the request does', async () => {
    const { runtimeKey, tenantId } = await createTenant(database.db, 'log-studio');
    const { token } = await system.credentials.issueGameToken(tenantId, 'game-log', ['player-secretive'], 60);
    const auth = { authorization: `Bearer ${token}` };
    const secret = 'CONFIDENTIAL-ZEBRA-4471';
    const event = { gameId: 'game-log', roomId: 'r1', npcId: 'npc-a', participantId: 'player-secretive', ts: 5, targeted: true, text: `my password is ${secret}` };
    const inject = (method: 'POST' | 'GET', url: string, payload?: object, headers = auth) => system.app.inject({ method, url, payload, headers });
    expect((await inject('POST', '/v1/events', { idempotencyKey: 'log-batch-1', events: [event] })).statusCode).toBe(200);
    expect((await inject('POST', '/v1/npcs/npc-a/search', { text: secret })).statusCode).toBe(200);
    expect((await inject('POST', '/v1/npcs/npc-a/facts', {
      tier: 'social', participantId: 'player-secretive', key: 'password', value: secret, summary: `password ${secret}`,
      source: 'player_statement', confidence: 1, importance: 1, retention: 'permanent',
    })).statusCode).toBe(201);
    // Failing requests too: an unknown field next to the secret, and a wrong key.
    expect((await inject('POST', '/v1/events', { idempotencyKey: 'log-batch-2', events: [{ ...event, device: secret }] })).statusCode).toBe(400);
    expect((await inject('GET', '/v1/npcs/npc-a/memories?tier=episodic', undefined, { authorization: `Bearer ${runtimeKey}x` })).statusCode).toBe(401);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.filter((l) => l.includes(secret) || l.includes('ZEBRA'))).toEqual([]);
    expect(lines.filter((l) => l.includes(runtimeKey))).toEqual([]);
  });
});
