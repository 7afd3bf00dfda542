import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/engine/accounts.js';
import { systemClock } from '../../src/engine/clock.js';
import { SessionStore } from '../../src/engine/sessions.js';
import { openEngineDatabase } from '../../src/engine/store/database.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

describe('the engine\'s database after kill -9', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('keeps an account and a session that were acknowledged before the process was killed', async () => {
    let target: string;
    if (process.env.DATABASE_URL) {
      const test: TestDatabase = await openTestDatabase({ migrate: false });
      cleanups.push(() => test.drop());
      target = test.url!;
    } else {
      const dir = await tempDir('engine-kill');
      cleanups.push(dir.remove);
      target = path.join(dir.dir, 'engine');
    }
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/engine/support/register-and-wait.ts', target], { stdio: ['ignore', 'pipe', 'inherit'] });
    const token = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += String(chunk);
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`child exited with ${code} before acknowledging`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const db = await openEngineDatabase(target.startsWith('postgres') ? { url: target } : { dir: target });
    cleanups.unshift(() => db.close());
    const accounts = new AccountStore({ cost: { N: 1024, r: 8, p: 1 }, db });
    const sessions = new SessionStore(accounts, systemClock, { db });
    await sessions.load();
    expect(sessions.get(token).session.kind).toBe('account');
    expect((await accounts.verify('kim_killed', 'a long passphrase')).username).toBe('kim_killed');
  }, 60_000);
});
