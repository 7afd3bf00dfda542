import { describe, expect, it } from 'vitest';
import { AccountStore, hashPassword, verifyPassword } from '../../src/engine/accounts.js';
import { makeEngine } from './support/engine-fixture.js';

const cheap = { N: 1024, r: 8, p: 1 };
const withCode = (code: string) => expect.objectContaining({ code });

describe('password hashing', () => {
  it('stores scrypt with a random salt, so one password hashes differently twice', async () => {
    const a = await hashPassword('correct horse battery', cheap);
    const b = await hashPassword('correct horse battery', cheap);
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct');
  });

  it('verifies the right password and refuses a wrong one or a mangled hash', async () => {
    const stored = await hashPassword('correct horse battery', cheap);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('correct horse battery', 'md5$abc')).toBe(false);
  });
});

describe('accounts', () => {
  it('registers, then verifies the credentials', async () => {
    const accounts = new AccountStore({ cost: cheap });
    const created = await accounts.register('ann_b', 'a long passphrase');
    expect(await accounts.verify('ann_b', 'a long passphrase')).toEqual(created);
  });

  it('gives one error for a wrong password and for an unknown user', async () => {
    const accounts = new AccountStore({ cost: cheap });
    await accounts.register('ann_b', 'a long passphrase');
    await expect(accounts.verify('ann_b', 'wrong passphrase')).rejects.toThrowError(withCode('INVALID_CREDENTIALS'));
    await expect(accounts.verify('nobody', 'a long passphrase')).rejects.toThrowError(withCode('INVALID_CREDENTIALS'));
  });

  it('refuses a taken username, a bad username and a short password', async () => {
    const accounts = new AccountStore({ cost: cheap });
    await accounts.register('ann_b', 'a long passphrase');
    await expect(accounts.register('ann_b', 'another passphrase')).rejects.toThrowError(withCode('USERNAME_TAKEN'));
    await expect(accounts.register('a b', 'a long passphrase')).rejects.toThrowError(withCode('INVALID_USERNAME'));
    await expect(accounts.register('carol', 'short')).rejects.toThrowError(withCode('WEAK_PASSWORD'));
  });

  it('lets only one of two simultaneous registrations of a name succeed', async () => {
    const accounts = new AccountStore({ cost: cheap });
    const results = await Promise.allSettled([
      accounts.register('dup', 'a long passphrase'),
      accounts.register('dup', 'a long passphrase'),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });
});

describe('sessions', () => {
  it('issues random tokens and refuses unknown or closed ones', async () => {
    const { engine } = makeEngine();
    await engine.accounts.register('ann_b', 'a long passphrase');
    const a = await engine.sessions.login('ann_b', 'a long passphrase');
    const b = await engine.sessions.login('ann_b', 'a long passphrase');
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect(a.displayName).toBe('ann_b');
    await engine.sessions.close(a.token);
    expect(() => engine.sessions.get(a.token)).toThrowError(withCode('INVALID_SESSION'));
    expect(() => engine.sessions.get(undefined)).toThrowError(withCode('INVALID_SESSION'));
  });

  it('gives guests a display name unrelated to their participant id', () => {
    const { engine } = makeEngine();
    const { token, displayName } = engine.sessions.openAnonymous();
    const id = engine.sessions.get(token).session.anonymousParticipantId!;
    expect(displayName).toMatch(/^Guest [0-9a-f]{6}$/);
    expect(id).not.toContain(displayName.slice(6));
  });
});
