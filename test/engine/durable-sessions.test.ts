import { afterEach, describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/engine/accounts.js';
import { ManualClock } from '../../src/engine/clock.js';
import { SessionStore } from '../../src/engine/sessions.js';
import { closeEngineDatabases, engineDatabase } from '../helpers/engine-database.js';

const cost = { N: 1024, r: 8, p: 1 };

afterEach(closeEngineDatabases);

describe('accounts and sessions in the engine\'s database', () => {
  it('keeps an account and its sessions for the next process: the same account id, the same token, and the username still taken', async () => {
    const db = await engineDatabase();
    const clock = new ManualClock();
    const first = new AccountStore({ cost, db });
    const account = await first.register('ann_durable', 'a long passphrase');
    const sessions = new SessionStore(first, clock, { db });
    const { token } = await sessions.login('ann_durable', 'a long passphrase');
    const guest = sessions.openAnonymous({ displayName: 'Guest' });
    await sessions.saved(guest.token);

    // A new process on the same database.
    const accounts = new AccountStore({ cost, db });
    const restarted = new SessionStore(accounts, clock, { db });
    expect(await restarted.load()).toBe(2);
    expect(restarted.get(token).session).toMatchObject({ kind: 'account', accountId: account.accountId, controller: 'human' });
    expect(restarted.get(guest.token).session.anonymousParticipantId).toBe(sessions.get(guest.token).session.anonymousParticipantId);
    expect((await accounts.verify('ann_durable', 'a long passphrase')).accountId).toBe(account.accountId);
    await expect(accounts.register('ann_durable', 'another passphrase')).rejects.toMatchObject({ code: 'USERNAME_TAKEN' });
    // The database holds no usable token: only hashes.
    const { rows } = await db.query<{ token_hash: string }>('SELECT token_hash FROM engine.sessions');
    expect(rows.map((r) => r.token_hash)).not.toContain(token);
  });

  it('lets two registrations of one username race and stores exactly one', async () => {
    const db = await engineDatabase();
    const [a, b] = [new AccountStore({ cost, db }), new AccountStore({ cost, db })];
    const results = await Promise.allSettled([a.register('bo_race', 'a long passphrase'), b.register('bo_race', 'a long passphrase')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'USERNAME_TAKEN' } });
    expect((await db.query('SELECT 1 FROM engine.accounts WHERE username = $1', ['bo_race'])).rows).toHaveLength(1);
  });

  it('ends a session after its time to live and when signed out, in memory and in the database', async () => {
    const db = await engineDatabase();
    const clock = new ManualClock();
    const accounts = new AccountStore({ cost, db });
    const sessions = new SessionStore(accounts, clock, { db, ttlMs: 60_000 });
    const short = sessions.openAnonymous();
    const closed = sessions.openAnonymous();
    await Promise.all([sessions.saved(short.token), sessions.saved(closed.token)]);
    await sessions.close(closed.token);
    expect(() => sessions.get(closed.token)).toThrowError(expect.objectContaining({ code: 'INVALID_SESSION' }));
    clock.advance(60_000);
    expect(() => sessions.get(short.token)).toThrowError(expect.objectContaining({ code: 'INVALID_SESSION' }));
    expect(await new SessionStore(accounts, clock, { db }).load()).toBe(0);
    expect((await db.query('SELECT 1 FROM engine.sessions')).rows).toHaveLength(0);
  });
});
