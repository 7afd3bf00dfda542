/**
 * The anonymization proxy: the single place where an engine event becomes a `BoundaryEvent`.
 *
 * What crosses: an opaque participant id, a coarse integer timestamp, the raw text, the routing
 * keys (game, room, npc), the `targeted` flag, and `anonymous` (the id is per session, so the
 * memory service keeps such chatter only as generalized fragments). What does not: the account, the session,
 * the controller type (human or script), headers, addresses, device, keystroke timing, the
 * engine's millisecond clock, the sequence number. Output is built field by field from an
 * allow-list, never by copying and deleting, so a field added to engine events later cannot leak.
 *
 * Participant ids all have one shape: 32 bytes as base64url (43 characters, `[A-Za-z0-9_-]`).
 * - account session: HMAC-SHA256(engine secret, "account:" + account id): stable across games
 *   and sessions, so an NPC can recognise a returning player, unlinkable without the secret.
 * - anonymous session: 32 random bytes minted when the session opens; a new session is a new id.
 * - a script uses an account or an anonymous session like anyone else and gets the same shapes.
 *
 * Timestamps: seconds since the epoch, rounded down to a multiple of `granularitySeconds`
 * (Default: 5). Sub-granularity timing (reaction latency, typing speed) therefore never crosses.
 * Residual, by design not hidden here: which window a message falls in, and what it says.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { BoundaryEvent } from '../boundary/events.js';
import type { EngineMessageEvent, NpcId, Session } from './types.js';

/** Byte length behind every participant id; base64url of 32 bytes is 43 characters. */
const PARTICIPANT_ID_BYTES = 32;

export const DEFAULT_TIMESTAMP_GRANULARITY_SECONDS = 5;

/** A fresh random participant id for an anonymous session, in the shape of an account's id. */
export function mintAnonymousParticipantId(): string {
  return randomBytes(PARTICIPANT_ID_BYTES).toString('base64url');
}

export interface AnonymizationProxyOptions {
  /** Engine secret keying the account hash; at least 32 bytes. Rotating it re-keys every player. */
  secret: Uint8Array;
  /** (Default: 5) */
  granularitySeconds?: number;
}

export class AnonymizationProxy {
  readonly #secret: Uint8Array;
  readonly granularitySeconds: number;

  constructor(options: AnonymizationProxyOptions) {
    if (options.secret.byteLength < 32) throw new RangeError('The proxy secret must be at least 32 bytes.');
    const g = options.granularitySeconds ?? DEFAULT_TIMESTAMP_GRANULARITY_SECONDS;
    if (!Number.isInteger(g) || g < 1) throw new RangeError('granularitySeconds must be a positive integer.');
    this.#secret = Uint8Array.from(options.secret);
    this.granularitySeconds = g;
  }

  participantIdOf(session: Session): string {
    if (session.kind === 'account') {
      if (session.accountId === undefined) throw new Error('An account session without an account id.');
      return createHmac('sha256', this.#secret).update(`account:${session.accountId}`).digest('base64url');
    }
    if (session.anonymousParticipantId === undefined) throw new Error('An anonymous session without an id.');
    return session.anonymousParticipantId;
  }

  coarseTimestamp(ms: number): number {
    const seconds = Math.floor(ms / 1000);
    return seconds - (seconds % this.granularitySeconds);
  }

  /** One boundary event per listening NPC, each flagged if the message addressed that NPC. */
  toBoundaryEvents(event: EngineMessageEvent, npcIds: readonly NpcId[]): BoundaryEvent[] {
    const participantId = this.participantIdOf(event.session);
    const ts = this.coarseTimestamp(event.receivedAtMs);
    return npcIds.map((npcId) => ({
      gameId: event.gameId,
      roomId: event.roomId,
      npcId,
      participantId,
      ts,
      text: event.text,
      targeted: event.targets.includes(npcId),
      // Always present, so the key set is the same for everyone. Account vs anonymous session
      // is not controller type: bots use both kinds, like people.
      anonymous: event.session.kind === 'anonymous',
    }));
  }
}
