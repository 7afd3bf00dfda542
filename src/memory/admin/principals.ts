import type { FastifyRequest } from 'fastify';
import type { Database, Sql } from '../db/types.js';
import { mintApiKey, unauthenticated, type Principal } from '../credentials.js';
import { inScope } from '../scope.js';
import { MemoryError } from '../errors.js';
import { findPrincipal, insertPrincipal } from './store.js';
import { ADMIN_ACTIONS, ALL_NPCS, type AdminAction } from './actions.js';

/**
 * Admin principals and attribute-based access control.
 *
 * An admin principal is an admin API key plus attributes: its tenant (always the key's own;
 * a foreign key makes any other impossible), the NPCs it may act on (a list, or '*' for every
 * NPC of the tenant) and the actions it may take. Every admin action checks its attribute
 * before it touches anything; a missing attribute is a 403 with a stable code.
 */
export { ADMIN_ACTIONS, ALL_NPCS, OWNER_ATTRIBUTES, type AdminAction } from './actions.js';

export interface AdminPrincipal {
  tenantId: string;
  keyId: string;
  name: string;
  npcs: readonly string[];
  actions: readonly AdminAction[];
  /** How this principal is named in lineage and the audit ledger. */
  actor: string;
}

export function allows(principal: AdminPrincipal, action: AdminAction, npcIds: readonly string[] = []): boolean {
  if (!principal.actions.includes(action)) return false;
  if (principal.npcs.includes(ALL_NPCS)) return true;
  return npcIds.every((npc) => principal.npcs.includes(npc));
}

export const adminKeyRequired = () =>
  new MemoryError('ADMIN_KEY_REQUIRED', 'this action needs an admin API key with the matching attribute; runtime keys and game tokens cannot do it');

const attributeMissing = (action: AdminAction, npcIds: readonly string[]) =>
  new MemoryError(
    'ATTRIBUTE_REQUIRED',
    `this admin key lacks the "${action}" attribute${npcIds.length ? ` for ${npcIds.map((n) => `"${n}"`).join(', ')}` : ''}; nothing was done. Ask the tenant owner for a principal that has it (npm run memory -- principal-create).`,
  );

/** The attributes of an admin key, or undefined when it has none (or they were revoked). */
export async function loadPrincipal(db: Database, tenantId: string, keyId: string): Promise<AdminPrincipal | undefined> {
  const row = await inScope(db, { tenantId, keyId, role: 'admin' }, (tx) => findPrincipal(tx, tenantId, keyId));
  if (!row || row.revoked_at || row.tenant_id !== tenantId) return undefined;
  return {
    tenantId: row.tenant_id,
    keyId: row.key_id,
    name: row.name,
    npcs: row.npcs,
    actions: row.actions.filter((a): a is AdminAction => (ADMIN_ACTIONS as readonly string[]).includes(a)),
    actor: `key:${row.key_id}`,
  };
}

/**
 * Checks that a verified credential is an admin key whose principal may take `action` on every
 * one of `npcIds`. Throws 403 ADMIN_KEY_REQUIRED or ATTRIBUTE_REQUIRED otherwise.
 */
export async function authorize(
  db: Database,
  principal: Principal | undefined,
  action: AdminAction,
  npcIds: readonly string[] = [],
): Promise<AdminPrincipal> {
  if (!principal) throw unauthenticated();
  if (principal.kind !== 'key' || principal.role !== 'admin') throw adminKeyRequired();
  const admin = await loadPrincipal(db, principal.tenantId, principal.keyId);
  if (!admin || !allows(admin, action, npcIds)) throw attributeMissing(action, npcIds);
  return admin;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by the admin route module (routes/admin.ts); used by `requireAttribute`. */
    memoryAdminDb?: Database;
  }
}

/**
 * For route handlers of any feature: the request's admin principal, checked for `action`
 * (on `npcId` when given). Throws a 403 with a stable code before anything happens.
 *
 *   const admin = await requireAttribute(request, 'end_game');
 *   ... appendAudit(tx, { tenantId: admin.tenantId, actor: admin.actor, ... })
 */
export async function requireAttribute(request: FastifyRequest, action: AdminAction, npcId?: string | readonly string[]): Promise<AdminPrincipal> {
  const db = request.server.memoryAdminDb;
  if (!db) throw new Error('requireAttribute needs the admin route module registered (http/app.ts ROUTES)');
  const npcIds = npcId === undefined ? [] : typeof npcId === 'string' ? [npcId] : npcId;
  return authorize(db, request.principal, action, npcIds);
}

/** Operator-only (schema owner): mints an admin key with these attributes; returns the key once. */
export async function createAdminPrincipal(
  sql: Sql,
  tenantId: string,
  attributes: { name: string; npcs: readonly string[]; actions: readonly AdminAction[] },
): Promise<{ key: string; keyId: string }> {
  if (attributes.npcs.length === 0) throw new Error('a principal needs at least one npc (or "*")');
  const bad = attributes.actions.filter((a) => !(ADMIN_ACTIONS as readonly string[]).includes(a));
  if (bad.length) throw new Error(`unknown action(s) ${bad.join(', ')}; known: ${ADMIN_ACTIONS.join(', ')}`);
  const key = await mintApiKey(sql, tenantId, 'admin');
  const keyId = keyIdOf(key);
  await insertPrincipal(sql, { tenantId, keyId, ...attributes });
  return { key, keyId };
}

/** The key id inside an API key `mk_<id>_<secret>`. */
export const keyIdOf = (key: string): string => key.split('_')[1]!;
