import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHttpClient } from '../../src/boundary/memory-client.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const TOBIAS = 'npc-tobias-fenn';

/**
 * The production layout (native PostgreSQL only: processes share it): two memory-service
 * replicas with a consolidation worker each on one database, the registry, and the engine, each
 * its own process started by `src/main.ts` with SERVICES. The engine talks to one replica; what it
 * stored is served by the other, and the workers of both drain one queue.
 */
describe.skipIf(!process.env.DATABASE_URL)('the parties as separate processes', () => {
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((resolve) => c.once('exit', resolve)) : undefined)));
    for (const c of cleanups) await c();
  });

  /** Starts `src/main.ts` with `env`; resolves with the URLs it prints once it listens. */
  const start = (env: Record<string, string>) =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, EMBEDDINGS: 'hash', LOG_LEVEL: 'warn', MEMORY_PORT: '0', REGISTRY_PORT: '0', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (chunk) => {
        out += String(chunk);
        if (!out.endsWith('\n\n')) return; // the banner is printed whole, ending with a blank line
        const urls = Object.fromEntries([...out.matchAll(/^\s+(play|memory service|name registry):\s+(http:\/\/\S+?)\/?(?:\s|$)/gm)].map((m) => [m[1]!, m[2]!]));
        if (Object.keys(urls).length > 0) resolve(urls);
      });
      child.once('exit', (code) => reject(new Error(`${env.SERVICES} exited with ${code}: ${out}`)));
    });

  it('serves from one replica what the engine wrote through the other, and the queue their workers share is drained', async () => {
    const [memoryDb, engineDb]: TestDatabase[] = [await openTestDatabase({ migrate: false }), await openTestDatabase({ migrate: false })];
    const memoryDir = await mkdtemp(path.join(tmpdir(), 'npc-memory-party-'));
    const engineDir = await mkdtemp(path.join(tmpdir(), 'npc-engine-party-'));
    cleanups.push(async () => {
      await memoryDb!.drop();
      await engineDb!.drop();
      await rm(memoryDir, { recursive: true, force: true });
      await rm(engineDir, { recursive: true, force: true });
    });
    const memoryEnv = { SERVICES: 'memory', DATABASE_URL: memoryDb!.url!, MEMORY_DATA_DIR: memoryDir, MEMORY_WORKERS: '1', MEMORY_CONSOLIDATION_WINDOW_MS: '0' };
    const a = (await start(memoryEnv))['memory service']!;
    const b = (await start(memoryEnv))['memory service']!; // the same keyring and tenant: a replica
    const registry = (await start({ SERVICES: 'registry' }))['name registry']!;
    const tenant = JSON.parse(await readFile(path.join(memoryDir, 'local-tenant.json'), 'utf8')) as { runtimeKey: string; adminKey: string };
    const engine = (
      await start({
        SERVICES: 'engine',
        ENGINE_DATABASE_URL: engineDb!.url!,
        MEMORY_DATA_DIR: engineDir,
        MEMORY_URL: a,
        REGISTRY_URL: registry,
        MEMORY_RUNTIME_KEY: tenant.runtimeKey,
        MEMORY_ADMIN_KEY: tenant.adminKey,
      })
    ).play!;

    const call = async (url: string, body: object, token?: string) => {
      const response = await fetch(`${engine}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    expect((await call('/v1/accounts', { username: 'pat_apart', password: 'a long passphrase' })).status).toBe(201);
    const { token } = (await call('/v1/sessions', { username: 'pat_apart', password: 'a long passphrase' })).body;
    const { gameId } = (await call('/v1/games', {}, token)).body;
    expect((await call(`/v1/games/${gameId}/join`, {}, token)).status).toBe(200);
    for (const text of ['@Tobias I keep bees on a rooftop in Lyon', '@Tobias my sister is called Ines']) {
      expect((await call(`/v1/games/${gameId}/say`, { text }, token)).status).toBe(201);
    }

    const fromB = new MemoryHttpClient(b, tenant.runtimeKey);
    const until = Date.now() + 30_000;
    let texts: string[] = [];
    while (Date.now() < until) {
      texts = (await fromB.listMemories(gameId!, TOBIAS, { tier: 'episodic', limit: 100 })).memories.map((m) => m.text ?? '');
      const due = /^memory_consolidation_due (\d+)$/m.exec(await (await fetch(`${b}/metrics`)).text())?.[1];
      if (texts.includes('@Tobias my sister is called Ines') && due === '0') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(texts).toContain('@Tobias I keep bees on a rooftop in Lyon');
    expect(texts).toContain('@Tobias my sister is called Ines');
    expect(await (await fetch(`${a}/metrics`)).text()).toMatch(/^memory_consolidation_due 0$/m);
    expect((await fetch(`${engine}/health/ready`)).status).toBe(200);
  }, 120_000);
});
