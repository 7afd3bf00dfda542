import { createHash } from 'node:crypto';
import type { Sql } from '../db/types.js';
import type { KeyScope } from '../types.js';
import type { Keyring } from './keyring.js';
import { newKey, open, seal } from './cipher.js';

export interface DataKey {
  keyId: string;
  key: Uint8Array;
}

/** The keyring name of the key-encryption key for one (tenant, kind, subject). */
export function kekRef(tenantId: string, kind: KeyScope, subject: string): string {
  const digest = createHash('sha256').update(`${tenantId}\0${kind}\0${subject}`).digest('hex').slice(0, 40);
  return `${kind}.${digest}`;
}

const CACHE_LIMIT = 10_000;

/**
 * Per-game, per-participant and per-npc data keys (envelope encryption). Unwrapped keys are
 * cached by key id; a key row is only ever looked up through a scoped transaction, so the cache
 * never hands out a key the caller's scope could not read.
 */
export class DataKeys {
  private readonly byId = new Map<string, Uint8Array>();
  private readonly bySubject = new Map<string, DataKey>();

  constructor(private readonly keyring: Keyring) {}

  /** The data key for a subject, created exactly once even when many first writes race. */
  async forWrite(tx: Sql, tenantId: string, kind: KeyScope, subject: string): Promise<DataKey> {
    const cacheKey = `${tenantId}\0${kind}\0${subject}`;
    const cached = this.bySubject.get(cacheKey);
    if (cached) return cached;
    const ref = kekRef(tenantId, kind, subject);
    let row = await this.find(tx, tenantId, kind, subject);
    if (!row) {
      const kek = await this.keyring.getOrCreate(ref);
      const wrapped = seal(kek, newKey(), `dek\0${ref}`);
      // A racing writer may insert first; then ours is discarded and theirs is read back.
      await tx.query(
        `INSERT INTO memory.data_keys (tenant_id, scope_kind, scope_ref, kek_ref, wrapped)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, scope_kind, scope_ref) DO NOTHING`,
        [tenantId, kind, subject, ref, wrapped],
      );
      row = await this.find(tx, tenantId, kind, subject);
      if (!row) throw new Error('data key was not created');
    }
    const key = await this.unwrap(row);
    if (!key) throw new KeyDestroyedError(kind);
    const dataKey = { keyId: row.key_id, key };
    // Remember only a committed key: one created by this (still open) transaction vanishes if it
    // rolls back, however many times the transaction asks for it.
    if (!row.mine) this.remember(this.bySubject, cacheKey, dataKey);
    return dataKey;
  }

  /** The key for rows sealed under `keyId`, or undefined if it was destroyed (shredded). */
  async forRead(tx: Sql, tenantId: string, keyId: string): Promise<Uint8Array | undefined> {
    return (await this.load(tx, tenantId, [keyId])).get(keyId);
  }

  /** The keys of these ids that still exist: from the cache, the cold ones in one query. */
  async load(sql: Sql, tenantId: string, keyIds: readonly string[]): Promise<Map<string, Uint8Array>> {
    const cold = [...new Set(keyIds)].filter((id) => !this.byId.has(id));
    const statement = cold.length > 0 ? this.recordsStatement(tenantId, cold) : undefined;
    const fresh = statement ? await this.absorb((await sql.query(statement.text, statement.params)).rows) : new Map<string, Uint8Array>();
    return this.pick(keyIds, fresh);
  }

  /**
   * The records of these keys as a statement (for `load`, or for `readInScope`, where a cold key
   * costs one round trip and no transaction). Hand the rows to `absorb`.
   */
  recordsStatement(tenantId: string, keyIds: readonly string[]): { text: string; params: unknown[] } {
    return {
      text: `SELECT key_id, kek_ref, wrapped, destroyed_at, ${MINE} FROM memory.data_keys WHERE tenant_id = $1 AND key_id = ANY ($2::uuid[])`,
      params: [tenantId, [...keyIds]],
    };
  }

  /** Unwraps the records `recordsStatement` returned (caching the committed ones). */
  async absorb(rows: readonly Record<string, unknown>[]): Promise<Map<string, Uint8Array>> {
    const keys = new Map<string, Uint8Array>();
    for (const row of rows as unknown as KeyRow[]) {
      const key = this.byId.get(row.key_id) ?? (await this.unwrap(row));
      if (key) keys.set(row.key_id, key);
    }
    return keys;
  }

  /** The cached or just-unwrapped key of each id (destroyed ones left out). */
  pick(keyIds: readonly string[], fresh: ReadonlyMap<string, Uint8Array> = new Map()): Map<string, Uint8Array> {
    const keys = new Map<string, Uint8Array>();
    for (const id of keyIds) {
      const key = this.byId.get(id) ?? fresh.get(id);
      if (key) keys.set(id, key);
    }
    return keys;
  }

  /** The cached key for `keyId`, if a scoped read has loaded it before. */
  cached(keyId: string): Uint8Array | undefined {
    return this.byId.get(keyId);
  }

  /** Forgets cached keys (after a key is destroyed). */
  forget(): void {
    this.byId.clear();
    this.bySubject.clear();
  }

  private async find(tx: Sql, tenantId: string, kind: KeyScope, subject: string): Promise<KeyRow | undefined> {
    const { rows } = await tx.query<KeyRow>(
      `SELECT key_id, kek_ref, wrapped, destroyed_at, ${MINE} FROM memory.data_keys
       WHERE tenant_id = $1 AND scope_kind = $2 AND scope_ref = $3`,
      [tenantId, kind, subject],
    );
    return rows[0];
  }

  private async unwrap(row: KeyRow): Promise<Uint8Array | undefined> {
    if (row.destroyed_at) return undefined;
    const kek = await this.keyring.get(row.kek_ref);
    if (!kek) return undefined;
    const key = open(kek, row.wrapped, `dek\0${row.kek_ref}`);
    if (!row.mine) this.remember(this.byId, row.key_id, key);
    return key;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value as string);
    map.set(key, value);
  }
}

interface KeyRow {
  key_id: string;
  kek_ref: string;
  wrapped: Uint8Array;
  destroyed_at: string | null;
  /** Written by the current, uncommitted transaction. */
  mine: boolean;
}

/** Whether the row was written by the current transaction (its xmin is our transaction id). */
const MINE = `coalesce(xmin::text = (pg_current_xact_id_if_assigned()::text::numeric % 4294967296)::text, false) AS mine`;

export class KeyDestroyedError extends Error {
  constructor(kind: KeyScope) {
    super(`the ${kind} key was destroyed; nothing more can be written under it`);
  }
}
