import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('the memory service\'s request log', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;
  const lines: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: pino({ level: 'debug' }, sink), embedder: new LocalHashEmbedder() });
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  it('logs each request with a keyed hash in place of a participant id, so an erased participant is named nowhere in it', async () => {
    const { adminKey } = await createTenant(database.db, `studio-${Math.random().toString(36).slice(2)}`);
    const P = 'part-secret0001';
    const erase = () => system.app.inject({ method: 'POST', url: `/v1/participants/${P}/erasure?why=${P}`, headers: { authorization: `Bearer ${adminKey}` } });
    expect((await erase()).statusCode).toBe(200);
    await erase();
    const logged = lines.map((l) => JSON.parse(l) as { url?: string; statusCode?: number });
    const requests = logged.filter((l) => l.url?.startsWith('/v1/participants/'));
    expect(requests).toHaveLength(2);
    expect(requests[0]!.url).toMatch(/^\/v1\/participants\/~[A-Za-z0-9_-]{12}\/erasure$/);
    expect(requests[1]!.url).toBe(requests[0]!.url); // the same participant, the same hash within a run
    expect(lines.join('\n')).not.toContain(P);
  });

  it('writes no line per request at the default level (info)', async () => {
    const quiet: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (quiet.push(String(chunk)), done()) });
    const keys = await tempDir('keyring');
    const other = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: pino({ level: 'info' }, sink), embedder: new LocalHashEmbedder() });
    try {
      await other.app.inject({ method: 'GET', url: '/health/live' });
      await other.app.inject({ method: 'POST', url: '/v1/participants/part-quiet0001/erasure' });
      expect(quiet.filter((l) => l.includes('"request"'))).toEqual([]);
    } finally {
      await other.app.close();
      await keys.remove();
    }
  });
});
