/**
 * Sessions: what a client (a browser, or a scripted participant) holds after logging in or
 * starting anonymously. The token is random and never leaves the engine towards the memory
 * service; the controller (human or script) is recorded here and nowhere else.
 *
 * With the engine's database, sessions are written through to it (by the hash of their token,
 * never the token) and loaded at start, so a restart signs nobody out; each expires after its
 * time to live. Lookups stay in memory: play never waits for the database.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AccountStore } from './accounts.js';
import { mintAnonymousParticipantId } from './anonymization-proxy.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import type { EngineDatabase } from './store/database.js';
import type { Controller, Session, SessionToken } from './types.js';

/** How long a session lasts from when it was opened. (Default: 7 days) */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');
type Entry = { session: Session; displayName: string; expiresAtMs: number };

export interface OpenSessionOptions {
  /** Who drives this session (Default: "human"). Set to "script" by the bot runner only. */
  controller?: Controller;
}

export interface OpenedSession {
  readonly token: SessionToken;
  /** A name other players see; the username for accounts. */
  readonly displayName: string;
}

export class SessionStore {
  /** By the hash of the token. */
  readonly #byHash = new Map<string, Entry>();
  /** Writes not yet confirmed, by token hash: `saved` waits for them. */
  readonly #writes = new Map<string, Promise<void>>();
  readonly #db: EngineDatabase | undefined;
  readonly #ttlMs: number;

  constructor(
    private readonly accounts: AccountStore,
    private readonly clock: Clock,
    options: { db?: EngineDatabase; ttlMs?: number } = {},
  ) {
    this.#db = options.db;
    this.#ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  }

  /** Loads the sessions that have not expired (at start), and deletes the ones that have. */
  async load(): Promise<number> {
    if (!this.#db) return 0;
    const now = this.clock.now();
    await this.#db.query('DELETE FROM engine.sessions WHERE expires_at_ms <= $1', [now]);
    const { rows } = await this.#db.query<{ token_hash: string; session: Session | string; display_name: string; expires_at_ms: number | string }>(
      'SELECT token_hash, session, display_name, expires_at_ms FROM engine.sessions',
    );
    for (const row of rows) {
      const session = typeof row.session === 'string' ? (JSON.parse(row.session) as Session) : row.session;
      this.#byHash.set(row.token_hash, { session, displayName: row.display_name, expiresAtMs: Number(row.expires_at_ms) });
    }
    return rows.length;
  }

  async login(username: string, password: string, options: OpenSessionOptions = {}): Promise<OpenedSession> {
    const account = await this.accounts.verify(username, password);
    const opened = this.#open(
      { kind: 'account', accountId: account.accountId, controller: options.controller ?? 'human' },
      account.username,
    );
    await this.saved(opened.token);
    return opened;
  }

  /** Opens at once; `saved(token)` resolves when it is stored (an HTTP answer waits for it). */
  openAnonymous(options: OpenSessionOptions & { displayName?: string } = {}): OpenedSession {
    const anonymousParticipantId = mintAnonymousParticipantId();
    return this.#open(
      { kind: 'anonymous', anonymousParticipantId, controller: options.controller ?? 'human' },
      // Not derived from the participant id: players must not learn what the memory service sees.
      options.displayName ?? `Guest ${randomBytes(3).toString('hex')}`,
    );
  }

  /** Resolves once the session behind `token` is durable (at once without a database). */
  async saved(token: SessionToken): Promise<void> {
    await this.#writes.get(tokenHash(token));
  }

  /** The session behind a token; throws INVALID_SESSION for an unknown, closed or expired token. */
  get(token: unknown): { session: Session; displayName: string } {
    const hash = typeof token === 'string' ? tokenHash(token) : undefined;
    const found = hash ? this.#byHash.get(hash) : undefined;
    if (!found || found.expiresAtMs <= this.clock.now()) {
      if (found && hash) void this.#forget(hash);
      throw new EngineError('INVALID_SESSION', 'This session is unknown or has ended; log in or start a new session.');
    }
    return found;
  }

  /** Ends a session; resolves when it is gone from the database too. */
  async close(token: SessionToken): Promise<void> {
    await this.#forget(tokenHash(token));
  }

  async #forget(hash: string): Promise<void> {
    this.#byHash.delete(hash);
    await this.#writes.get(hash)?.catch(() => {});
    await this.#db?.query('DELETE FROM engine.sessions WHERE token_hash = $1', [hash]);
  }

  #open(fields: Omit<Session, 'sessionId' | 'openedAtMs'>, displayName: string): OpenedSession {
    const token = randomBytes(32).toString('base64url');
    const hash = tokenHash(token);
    const session: Session = { ...fields, sessionId: randomUUID(), openedAtMs: this.clock.now() };
    const entry = { session, displayName, expiresAtMs: session.openedAtMs + this.#ttlMs };
    this.#byHash.set(hash, entry);
    if (this.#db) {
      const write = this.#db
        .query('INSERT INTO engine.sessions (token_hash, session, display_name, expires_at_ms) VALUES ($1, $2, $3, $4)', [hash, JSON.stringify(session), displayName, entry.expiresAtMs])
        .then(
          () => void this.#writes.delete(hash),
          (error: unknown) => {
            // Not stored: the session never existed (`saved` keeps telling the caller so).
            this.#byHash.delete(hash);
            throw error;
          },
        );
      write.catch(() => {}); // observed by `saved`; never an unhandled rejection
      this.#writes.set(hash, write);
    }
    return { token, displayName };
  }
}
