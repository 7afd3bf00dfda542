/**
 * Player accounts: usernames and scrypt password hashes, in the engine's database (or in memory,
 * for an engine without one).
 * Stored form: `scrypt$N$r$p$salt$hash` (base64url), so cost can rise without breaking old hashes.
 */
import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { EngineError } from './errors.js';
import type { EngineDatabase } from './store/database.js';

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

/** Where accounts live: the engine's database, or a map (an engine without a database). */
interface AccountRecords {
  /** Adds the account; false when the username is taken. */
  insert(accountId: string, username: string, passwordHash: string): Promise<boolean>;
  find(username: string): Promise<{ accountId: string; passwordHash: string } | undefined>;
}

function inMemory(): AccountRecords {
  const byUsername = new Map<string, { accountId: string; passwordHash: string }>();
  return {
    async insert(accountId, username, passwordHash) {
      if (byUsername.has(username)) return false;
      byUsername.set(username, { accountId, passwordHash });
      return true;
    },
    async find(username) {
      return byUsername.get(username);
    },
  };
}

function inDatabase(db: EngineDatabase): AccountRecords {
  return {
    async insert(accountId, username, passwordHash) {
      const { rows } = await db.query(
        'INSERT INTO engine.accounts (account_id, username, password_hash) VALUES ($1, $2, $3) ON CONFLICT (username) DO NOTHING RETURNING account_id',
        [accountId, username, passwordHash],
      );
      return rows.length === 1;
    },
    async find(username) {
      const { rows } = await db.query<{ account_id: string; password_hash: string }>('SELECT account_id, password_hash FROM engine.accounts WHERE username = $1', [username]);
      return rows[0] ? { accountId: rows[0].account_id, passwordHash: rows[0].password_hash } : undefined;
    },
  };
}

export class AccountStore {
  readonly #records: AccountRecords;
  readonly #cost: ScryptCost;
  /** Verified against when the username is unknown, so both failures take the same time. */
  #decoyHash: Promise<string> | undefined;

  constructor(options: { cost?: ScryptCost; db?: EngineDatabase } = {}) {
    this.#cost = options.cost ?? DEFAULT_COST;
    this.#records = options.db ? inDatabase(options.db) : inMemory();
  }

  /** Registers an account; it is stored (durably, with a database) before this resolves. */
  async register(username: string, password: string): Promise<Account> {
    if (typeof username !== 'string' || !USERNAME.test(username)) {
      throw new EngineError('INVALID_USERNAME', 'Choose a username of 3-32 letters, digits, dots, dashes or underscores.');
    }
    if (typeof password !== 'string' || password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
      throw new EngineError('WEAK_PASSWORD', `Choose a password of at least ${MIN_PASSWORD} characters.`);
    }
    if (await this.#records.find(username)) throw taken();
    const accountId = randomUUID();
    // Two registrations of one name at once: the store's uniqueness decides, after the hash.
    if (!(await this.#records.insert(accountId, username, await hashPassword(password, this.#cost)))) throw taken();
    return { accountId, username };
  }

  /** The account for these credentials; one error for unknown user and wrong password alike. */
  async verify(username: string, password: string): Promise<Account> {
    const record = typeof username === 'string' ? await this.#records.find(username) : undefined;
    const pw = typeof password === 'string' ? password : '';
    if (!record) {
      this.#decoyHash ??= hashPassword('decoy password', this.#cost);
      await verifyPassword(pw, await this.#decoyHash);
      throw invalidCredentials();
    }
    if (!(await verifyPassword(pw, record.passwordHash))) throw invalidCredentials();
    return { accountId: record.accountId, username };
  }
}

const taken = () => new EngineError('USERNAME_TAKEN', 'That username is taken; choose another.');
const invalidCredentials = () =>
  new EngineError('INVALID_CREDENTIALS', 'Username or password is wrong; check both and try again.');
