import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHttpClient } from '../../src/boundary/memory-client.js';
import { startSystemOn } from '../helpers/system.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const TOBIAS = 'npc-tobias-fenn';

/**
 * The whole system (engine, memory service, registry, in one process) killed with SIGKILL while
 * six players talk as fast as it answers, and started again on the same data: every line the
 * engine acknowledged reaches the NPC's memory exactly once, the account signs in and takes its
 * place back, and the game goes on.
 */
describe('kill -9 during play', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('loses no acknowledged line and stores none twice; the account signs in and plays on', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'npc-kill-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let urls: { databaseUrl?: string; engineDatabaseUrl?: string } = {};
    if (process.env.DATABASE_URL) {
      const dbs: TestDatabase[] = [await openTestDatabase({ migrate: false }), await openTestDatabase({ migrate: false })];
      cleanups.push(async () => {
        for (const db of dbs) await db.drop();
      });
      urls = { databaseUrl: dbs[0]!.url, engineDatabaseUrl: dbs[1]!.url };
    }

    const child = spawn(process.execPath, ['--import', 'tsx', 'test/system/support/play-until-killed.ts', dir, JSON.stringify(urls)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked = new Set<number>();
    let gameId = '';
    await new Promise<void>((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (chunk) => {
        buffer += String(chunk);
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) {
          const [kind, a] = line.split(' ');
          if (kind === 'GAME') gameId = a!;
          if (kind === 'ACK') acked.add(Number(a));
        }
        if (acked.size >= 150) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) after ${acked.size} acknowledged lines`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const ackedAtKill = new Set(acked); // lines on their way out of the pipe when it died still count

    const system = await startSystemOn(dir, urls);
    cleanups.unshift(() => system.close());
    const call = async (url: string, body: object, token?: string) => {
      const response = await fetch(`${system.urls.engine}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const signedIn = await call('/v1/sessions', { username: 'kim_plays_on', password: 'a long passphrase' });
    expect(signedIn.status).toBe(201);
    const token = signedIn.body.token as string;
    expect((await call(`/v1/games/${gameId}/join`, {}, token)).body).toMatchObject({ roomId: 'foyer' });
    expect((await call(`/v1/games/${gameId}/say`, { text: 'after the crash' }, token)).status).toBe(201);
    await system.engine.idle();

    const memory = new MemoryHttpClient(system.urls.memory, system.tenant.runtimeKey);
    const { memories } = await memory.listMemories(gameId, TOBIAS, { tier: 'episodic', limit: 1000 });
    const texts = memories.map((m) => m.text ?? '').filter((t) => t.startsWith('backlog line ') || t === 'after the crash');
    const numbers = texts.filter((t) => t.startsWith('backlog line ')).map((t) => Number(t.slice('backlog line '.length)));
    expect(new Set(numbers).size).toBe(numbers.length); // none twice
    const missing = [...ackedAtKill].filter((n) => !numbers.includes(n));
    expect(missing).toEqual([]);
    expect(texts).toContain('after the crash');
  }, 120_000);
});
