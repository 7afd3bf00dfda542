import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Database, Sql } from './db/types.js';
import type { Keyring } from './crypto/keyring.js';
import { inScope, readInScope } from './scope.js';
import { findApiKey, insertApiKey, insertTenant } from './store/credentials.js';
import { MemoryError } from './errors.js';
import { grantTenantOwner } from './admin/store.js';

/**
 * Who is calling, as proven by a credential:
 * - a tenant API key (`mk_<id>_<secret>`), role runtime or admin: the whole tenant, no game;
 * - a game token (a JWT the memory service signed for one tenant, one game and the
 *   participants present): game-bound tiers of that game and those participants' social facts.
 */
export type Principal =
  | { kind: 'key'; tenantId: string; role: 'runtime' | 'admin'; keyId: string }
  | { kind: 'game'; tenantId: string; gameId: string; participantIds: string[]; expiresAt: number };

const KEY_FORMAT = /^mk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** Operator action: a new tenant with one key of each role (the admin key as tenant owner). Returns the keys once; only hashes are stored. */
export async function createTenant(db: Database, name: string): Promise<{ tenantId: string; runtimeKey: string; adminKey: string }> {
  return db.transaction(async (tx) => {
    const tenantId = await insertTenant(tx, name);
    const runtimeKey = await mintApiKey(tx, tenantId, 'runtime');
    const adminKey = await mintApiKey(tx, tenantId, 'admin');
    // The first admin key is the tenant owner: every admin attribute (admin/principals.ts).
    await grantTenantOwner(tx, tenantId, adminKey);
    return { tenantId, runtimeKey, adminKey };
  });
}

export async function mintApiKey(sql: Sql, tenantId: string, role: 'runtime' | 'admin'): Promise<string> {
  const keyId = randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12);
  const secret = randomBytes(32).toString('base64url');
  await insertApiKey(sql, { keyId, tenantId, secretHash: sha256(secret).toString('hex'), role });
  return `mk_${keyId}_${secret}`;
}

export class Credentials {
  private signingKey?: Uint8Array;
  private readonly keyCache = new Map<string, { principal: Principal; until: number }>();
  /** Verified game tokens until they expire: a turn's calls reuse one token, and a signature check costs a trip through WebCrypto. */
  private readonly tokenCache = new Map<string, Extract<Principal, { kind: 'game' }>>();
  /** Games known to have ended ("tenant\0game"): an ended game never opens again. */
  private readonly endedGames = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
    /** How long a verified API key is trusted without a database look-up; (Default: 30 s) */
    private readonly keyCacheMs = 30_000,
  ) {}

  async verifyApiKey(presented: string): Promise<Principal | undefined> {
    const match = KEY_FORMAT.exec(presented);
    if (!match) return undefined;
    const cached = this.keyCache.get(presented);
    if (cached && cached.until > Date.now()) return cached.principal;
    const [, keyId, secret] = match as unknown as [string, string, string];
    const row = await inScope(this.db, { tenantId: '', keyId, role: 'runtime' }, (tx) => findApiKey(tx, keyId));
    if (!row || row.revoked_at) return undefined;
    const expected = Buffer.from(row.secret_hash, 'hex');
    const actual = sha256(secret);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    const principal: Principal = { kind: 'key', tenantId: row.tenant_id, role: row.role, keyId };
    if (this.keyCache.size > 10_000) this.keyCache.clear();
    this.keyCache.set(presented, { principal, until: Date.now() + this.keyCacheMs });
    return principal;
  }

  /** Signs a short-lived token for one game and the participants present. */
  async issueGameToken(
    tenantId: string,
    gameId: string,
    participantIds: readonly string[],
    ttlSeconds: number,
  ): Promise<{ token: string; expiresAt: number }> {
    const expiresAt = Math.floor(Date.now() / 1000) + ttlSeconds;
    const token = await new SignJWT({ gid: gameId, pids: [...participantIds] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(tenantId)
      .setIssuer('memory')
      .setAudience('memory')
      .setExpirationTime(expiresAt)
      .sign(await this.key());
    return { token, expiresAt };
  }

  async verifyGameToken(token: string): Promise<Principal | undefined> {
    const cached = this.tokenCache.get(token);
    if (cached) {
      if (cached.expiresAt * 1000 > Date.now()) return cached;
      this.tokenCache.delete(token);
    }
    try {
      const { payload } = await jwtVerify(token, await this.key(), {
        issuer: 'memory',
        audience: 'memory',
        algorithms: ['HS256'],
      });
      const { sub, gid, pids, exp } = payload as { sub?: unknown; gid?: unknown; pids?: unknown; exp?: number };
      if (typeof sub !== 'string' || typeof gid !== 'string' || !Array.isArray(pids)) return undefined;
      if (!pids.every((p): p is string => typeof p === 'string')) return undefined;
      const principal = { kind: 'game' as const, tenantId: sub, gameId: gid, participantIds: pids, expiresAt: exp ?? 0 };
      if (this.tokenCache.size >= 10_000) this.tokenCache.clear();
      this.tokenCache.set(token, principal);
      return principal;
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) return undefined;
      throw error;
    }
  }

  /**
   * Whether the game of a game token has ended: its tokens are refused from then on, whenever
   * they were minted (row-level security already hides the game's rows; this says so plainly).
   * Checked on every use until it has ended (replicas end games too), remembered after.
   */
  async gameEnded(principal: Extract<Principal, { kind: 'game' }>): Promise<boolean> {
    const key = `${principal.tenantId}\0${principal.gameId}`;
    if (this.endedGames.has(key)) return true;
    // (One round trip: the scope and the read as one script, as the hot read path does.)
    const [rows] = await readInScope(this.db, { tenantId: principal.tenantId, gameId: principal.gameId, role: 'runtime' }, [
      { text: 'SELECT ended_at IS NOT NULL AS ended FROM memory.games WHERE tenant_id = $1 AND game_id = $2', params: [principal.tenantId, principal.gameId] },
    ]);
    const ended = rows?.[0]?.ended === true;
    if (ended) {
      if (this.endedGames.size >= 100_000) this.endedGames.clear();
      this.endedGames.add(key);
    }
    return ended;
  }

  /** The token-signing key lives in the keyring, outside the database. */
  private async key(): Promise<Uint8Array> {
    this.signingKey ??= await this.keyring.getOrCreate('service.game-token-signing');
    return this.signingKey;
  }
}

export const unauthenticated = () =>
  new MemoryError(
    'UNAUTHENTICATED',
    'Send "Authorization: Bearer <tenant API key or game token>"; the one given is missing, malformed, expired or unknown.',
  );
