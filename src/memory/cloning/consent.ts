import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Database, Sql } from '../db/types.js';
import type { Keyring } from '../crypto/keyring.js';
import { inScope, type Scope } from '../scope.js';
import { MemoryError } from '../errors.js';
import { appendAudit } from '../audit/ledger.js';

/**
 * Consent tokens: a participant's permission for their player-specific social facts held by
 * one NPC to be copied into one other NPC by a clone.
 *
 * Format: `mc1.<claims, base64url JSON>.<HMAC-SHA256, base64url>`. The HMAC key lives in the
 * keyring, outside the database, so a row written straight into memory.consents proves
 * nothing. A token counts only when its signature verifies, it names this tenant, the clone's
 * source and target NPCs and the purpose "clone", it has not expired, and its id is not in
 * memory.consent_revocations. Anything else counts as no consent.
 */
export interface ConsentClaims {
  v: 1;
  /** consent id (uuid): what a revocation names. */
  cid: string;
  tid: string;
  pid: string;
  src: string;
  dst: string;
  pur: string;
  iat: number;
  exp: number;
}

export const CLONE_PURPOSE = 'clone';
export const CONSENT_KEY_REF = 'service.consent-signing';

export type ConsentStatus =
  | 'valid'
  | 'malformed'
  | 'forged'
  | 'expired'
  | 'revoked'
  | 'wrong_tenant'
  | 'wrong_source'
  | 'wrong_target'
  | 'wrong_purpose';

export interface ConsentCheck {
  status: ConsentStatus;
  /** The claims as written in the token; trustworthy only when status is 'valid'. */
  claims?: ConsentClaims;
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class ConsentTokens {
  private key?: Uint8Array;

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
  ) {}

  private async hmac(text: string): Promise<Buffer> {
    this.key ??= await this.keyring.getOrCreate(CONSENT_KEY_REF);
    return createHmac('sha256', this.key).update(text).digest();
  }

  /** Signs claims (no storage): for `record` and for tests that need an otherwise valid token. */
  async sign(claims: ConsentClaims): Promise<string> {
    const body = `mc1.${b64(JSON.stringify(claims))}`;
    return `${body}.${b64(await this.hmac(body))}`;
  }

  /**
   * Records a participant's consent, relayed by the engine with a game token that covers the
   * participant, and returns the signed token (also stored, so a clone finds it).
   */
  async record(
    scope: Scope,
    input: { participantId: string; sourceNpc: string; targetNpc: string; purpose?: string; ttlSeconds: number },
  ): Promise<{ consentId: string; token: string; expiresAt: number }> {
    if (!scope.participantIds?.includes(input.participantId)) {
      throw new MemoryError('SCOPE_MISMATCH', 'consent is recorded with a game token that covers the participant');
    }
    const now = Math.floor(Date.now() / 1000);
    const claims: ConsentClaims = {
      v: 1,
      cid: randomUUID(),
      tid: scope.tenantId,
      pid: input.participantId,
      src: input.sourceNpc,
      dst: input.targetNpc,
      pur: input.purpose ?? CLONE_PURPOSE,
      iat: now,
      exp: now + input.ttlSeconds,
    };
    const token = await this.sign(claims);
    await inScope(this.db, scope, (tx) =>
      tx.query(
        `INSERT INTO memory.consents (tenant_id, consent_id, participant_id, source_npc, target_npc, purpose, token, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8))`,
        [claims.tid, claims.cid, claims.pid, claims.src, claims.dst, claims.pur, token, claims.exp],
      ),
    );
    return { consentId: claims.cid, token, expiresAt: claims.exp };
  }

  /** Revokes a consent for good (recorded in the ledger). Idempotent. */
  async revoke(scope: Scope, input: { consentId: string; participantId: string; actor: string }): Promise<void> {
    if (!scope.participantIds?.includes(input.participantId)) {
      throw new MemoryError('SCOPE_MISMATCH', 'consent is revoked with a game token that covers the participant');
    }
    await inScope(this.db, scope, async (tx) => {
      const { rowCount } = await tx.query(
        `INSERT INTO memory.consent_revocations (tenant_id, consent_id, participant_id) VALUES ($1, $2, $3)
         ON CONFLICT (tenant_id, consent_id) DO NOTHING`,
        [scope.tenantId, input.consentId, input.participantId],
      );
      if (rowCount > 0) {
        await appendAudit(tx, {
          tenantId: scope.tenantId,
          action: 'consent_revoked',
          actor: input.actor,
          subject: `consent:${input.consentId}`,
          details: { consentId: input.consentId },
        });
      }
    });
  }

  /** Checks one token against the clone it is offered for. Never throws on bad input. */
  async check(
    token: string,
    expected: { tenantId: string; sourceNpc: string; targetNpc: string; revoked: ReadonlySet<string>; now?: number },
  ): Promise<ConsentCheck> {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== 'mc1') return { status: 'malformed' };
    let claims: ConsentClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as ConsentClaims;
    } catch {
      return { status: 'malformed' };
    }
    if (!isClaims(claims)) return { status: 'malformed' };
    const expectedMac = await this.hmac(`mc1.${parts[1]}`);
    const mac = Buffer.from(parts[2]!, 'base64url');
    if (mac.length !== expectedMac.length || !timingSafeEqual(mac, expectedMac)) return { status: 'forged', claims };
    const now = expected.now ?? Math.floor(Date.now() / 1000);
    if (claims.tid !== expected.tenantId) return { status: 'wrong_tenant', claims };
    if (claims.src !== expected.sourceNpc) return { status: 'wrong_source', claims };
    if (claims.dst !== expected.targetNpc) return { status: 'wrong_target', claims };
    if (claims.pur !== CLONE_PURPOSE) return { status: 'wrong_purpose', claims };
    if (claims.exp <= now) return { status: 'expired', claims };
    if (expected.revoked.has(claims.cid)) return { status: 'revoked', claims };
    return { status: 'valid', claims };
  }
}

function isClaims(c: unknown): c is ConsentClaims {
  const x = c as Partial<ConsentClaims> | null;
  return (
    !!x &&
    x.v === 1 &&
    typeof x.cid === 'string' &&
    typeof x.tid === 'string' &&
    typeof x.pid === 'string' &&
    typeof x.src === 'string' &&
    typeof x.dst === 'string' &&
    typeof x.pur === 'string' &&
    Number.isInteger(x.iat) &&
    Number.isInteger(x.exp)
  );
}

/** The stored tokens for clones out of `sourceNpc`, and every revoked consent id (admin scope on the source). */
export async function consentInputs(tx: Sql, tenantId: string, sourceNpc: string): Promise<{ tokens: string[]; revoked: Set<string> }> {
  const tokens = await tx.query<{ token: string }>(
    'SELECT token FROM memory.consents WHERE tenant_id = $1 AND source_npc = $2 ORDER BY created_at, consent_id',
    [tenantId, sourceNpc],
  );
  const revoked = await tx.query<{ consent_id: string }>('SELECT consent_id FROM memory.consent_revocations WHERE tenant_id = $1', [tenantId]);
  return { tokens: tokens.rows.map((r) => r.token), revoked: new Set(revoked.rows.map((r) => r.consent_id)) };
}
