/**
 * Player accounts: usernames and scrypt password hashes, in memory.
 * Stored form: `scrypt$N$r$p$salt$hash` (base64url), so cost can rise without breaking old hashes.
 */
import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { EngineError } from './errors.js';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

export interface ScryptCost {
  /** (Default: 16384) */
  N: number;
  /** (Default: 8) */
  r: number;
  /** (Default: 1) */
  p: number;
}

const DEFAULT_COST: ScryptCost = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
const USERNAME = /^[A-Za-z0-9_.-]{3,32}$/;
const MIN_PASSWORD = 10;
const MAX_PASSWORD = 1024;

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, KEY_LENGTH, { ...cost, maxmem: 256 * cost.N * cost.r });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    ...cost,
    maxmem: 256 * cost.N * cost.r,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export interface Account {
  readonly accountId: string;
  readonly username: string;
}

export class AccountStore {
  readonly #byUsername = new Map<string, { accountId: string; passwordHash: string }>();
  readonly #cost: ScryptCost;
  /** Verified against when the username is unknown, so both failures take the same time. */
  #decoyHash: Promise<string> | undefined;

  constructor(options: { cost?: ScryptCost } = {}) {
    this.#cost = options.cost ?? DEFAULT_COST;
  }

  async register(username: string, password: string): Promise<Account> {
    if (typeof username !== 'string' || !USERNAME.test(username)) {
      throw new EngineError('INVALID_USERNAME', 'Choose a username of 3-32 letters, digits, dots, dashes or underscores.');
    }
    if (typeof password !== 'string' || password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
      throw new EngineError('WEAK_PASSWORD', `Choose a password of at least ${MIN_PASSWORD} characters.`);
    }
    if (this.#byUsername.has(username)) throw new EngineError('USERNAME_TAKEN', 'That username is taken; choose another.');
    // Reserve the name before the slow hash so two concurrent registrations cannot both win.
    const record = { accountId: randomUUID(), passwordHash: '' };
    this.#byUsername.set(username, record);
    try {
      record.passwordHash = await hashPassword(password, this.#cost);
    } catch (cause) {
      this.#byUsername.delete(username);
      throw cause;
    }
    return { accountId: record.accountId, username };
  }

  /** The account for these credentials; one error for unknown user and wrong password alike. */
  async verify(username: string, password: string): Promise<Account> {
    const record = typeof username === 'string' ? this.#byUsername.get(username) : undefined;
    const pw = typeof password === 'string' ? password : '';
    if (!record || record.passwordHash === '') {
      this.#decoyHash ??= hashPassword('decoy password', this.#cost);
      await verifyPassword(pw, await this.#decoyHash);
      throw invalidCredentials();
    }
    if (!(await verifyPassword(pw, record.passwordHash))) throw invalidCredentials();
    return { accountId: record.accountId, username };
  }
}

const invalidCredentials = () =>
  new EngineError('INVALID_CREDENTIALS', 'Username or password is wrong; check both and try again.');
