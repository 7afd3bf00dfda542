import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSystem } from '../../src/system.js';
import { startSystemOn } from '../helpers/system.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The whole system stopped and started again on the same data (a data directory with PGlite, or
 * native databases for the memory service and the engine): nobody is signed out or forgotten.
 */
describe('a restart of the system', () => {
  let dir: string;
  const databases: TestDatabase[] = [];
  let urls: { databaseUrl?: string; engineDatabaseUrl?: string } = {};

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'npc-restart-'));
    if (process.env.DATABASE_URL) {
      const [memory, engine] = [await openTestDatabase({ migrate: false }), await openTestDatabase({ migrate: false })];
      databases.push(memory, engine);
      urls = { databaseUrl: memory.url, engineDatabaseUrl: engine.url };
    }
  });
  afterAll(async () => {
    for (const db of databases) await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const start = () => startSystemOn(dir, urls);
  const call = async (system: RunningSystem, method: string, url: string, body?: object, token?: string) => {
    const response = await fetch(`${system.urls.engine}${url}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, unknown> };
  };

  it('keeps accounts and sessions: the old token still plays, the password still signs in, the username stays taken, the account is the same', async () => {
    const first = await start();
    let token: string;
    let accountId: string | undefined;
    try {
      expect((await call(first, 'POST', '/v1/accounts', { username: 'ann_restarts', password: 'a long passphrase' })).status).toBe(201);
      const signedIn = await call(first, 'POST', '/v1/sessions', { username: 'ann_restarts', password: 'a long passphrase' });
      expect(signedIn.status).toBe(201);
      token = signedIn.body.token as string;
      accountId = first.engine.sessions.get(token).session.accountId;
    } finally {
      await first.close();
    }

    const second = await start();
    try {
      expect((await call(second, 'POST', '/v1/games', {}, token)).status).toBe(201);
      expect(second.engine.sessions.get(token).session.accountId).toBe(accountId);
      expect((await call(second, 'POST', '/v1/sessions', { username: 'ann_restarts', password: 'a long passphrase' })).status).toBe(201);
      const again = await call(second, 'POST', '/v1/accounts', { username: 'ann_restarts', password: 'someone else entirely' });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ error: { code: 'USERNAME_TAKEN' } });
    } finally {
      await second.close();
    }
  }, 60_000);

  it('lets a session that joined a game before the restart sign out after it, leaving the game', async () => {
    const first = await start();
    let token: string;
    let gameId: string;
    try {
      expect((await call(first, 'POST', '/v1/accounts', { username: 'bo_signs_out', password: 'a long passphrase' })).status).toBe(201);
      token = (await call(first, 'POST', '/v1/sessions', { username: 'bo_signs_out', password: 'a long passphrase' })).body.token as string;
      gameId = (await call(first, 'POST', '/v1/games', {}, token)).body.gameId as string;
      expect((await call(first, 'POST', `/v1/games/${gameId}/join`, {}, token)).status).toBe(200);
      expect((await call(first, 'POST', `/v1/games/${gameId}/say`, { text: 'said before the restart' }, token)).status).toBe(201);
    } finally {
      await first.close();
    }

    const second = await start();
    try {
      expect(second.engine.gamesOf(token)).toEqual([gameId]);
      expect((await call(second, 'DELETE', '/v1/sessions/current', undefined, token)).status).toBe(204);
      // Out of the game: a new session of the account joins it afresh, not back into the old
      // place with the old feed (which is what a session still in the game would get).
      const again = (await call(second, 'POST', '/v1/sessions', { username: 'bo_signs_out', password: 'a long passphrase' })).body.token as string;
      expect((await call(second, 'POST', `/v1/games/${gameId}/join`, {}, again)).status).toBe(200);
      expect(second.engine.feed(again, gameId).map((e) => ('text' in e ? e.text : ''))).not.toContain('said before the restart');
    } finally {
      await second.close();
    }
  }, 60_000);
});
