/**
 * Sessions: what a client (a browser, or a scripted participant) holds after logging in or
 * starting anonymously. The token is random and never leaves the engine towards the memory
 * service; the controller (human or script) is recorded here and nowhere else.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AccountStore } from './accounts.js';
import { mintAnonymousParticipantId } from './anonymization-proxy.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import type { Controller, Session, SessionToken } from './types.js';

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
  readonly #byToken = new Map<SessionToken, { session: Session; displayName: string }>();

  constructor(
    private readonly accounts: AccountStore,
    private readonly clock: Clock,
  ) {}

  async login(username: string, password: string, options: OpenSessionOptions = {}): Promise<OpenedSession> {
    const account = await this.accounts.verify(username, password);
    return this.#open(
      { kind: 'account', accountId: account.accountId, controller: options.controller ?? 'human' },
      account.username,
    );
  }

  openAnonymous(options: OpenSessionOptions & { displayName?: string } = {}): OpenedSession {
    const anonymousParticipantId = mintAnonymousParticipantId();
    return this.#open(
      { kind: 'anonymous', anonymousParticipantId, controller: options.controller ?? 'human' },
      // Not derived from the participant id: players must not learn what the memory service sees.
      options.displayName ?? `Guest ${randomBytes(3).toString('hex')}`,
    );
  }

  /** The session behind a token; throws INVALID_SESSION for an unknown or closed token. */
  get(token: unknown): { session: Session; displayName: string } {
    const found = typeof token === 'string' ? this.#byToken.get(token) : undefined;
    if (!found) throw new EngineError('INVALID_SESSION', 'This session is unknown or has ended; log in or start a new session.');
    return found;
  }

  close(token: SessionToken): void {
    this.#byToken.delete(token);
  }

  #open(fields: Omit<Session, 'sessionId' | 'openedAtMs'>, displayName: string): OpenedSession {
    const token = randomBytes(32).toString('base64url');
    const session: Session = { ...fields, sessionId: randomUUID(), openedAtMs: this.clock.now() };
    this.#byToken.set(token, { session, displayName });
    return { token, displayName };
  }
}
