import type { FastifyRequest } from 'fastify';
import { Credentials, unauthenticated, type Principal } from '../credentials.js';
import { MemoryError } from '../errors.js';
import { gameEnded } from '../lifecycle/guards.js';
import type { Scope } from '../scope.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /**
     * The route refuses an ended game itself, inside its own transaction (the ingest's gate, which
     * also answers a retried batch as it was answered before the game ended): the token's game is
     * not looked up again first.
     */
    refusesEndedGame?: boolean;
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function authenticate(credentials: Credentials, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  const match = header ? /^Bearer ([\x21-\x7e]{1,4096})$/.exec(header) : null;
  if (!match) throw unauthenticated();
  const presented = match[1]!;
  const principal = presented.startsWith('mk_')
    ? await credentials.verifyApiKey(presented)
    : await credentials.verifyGameToken(presented);
  if (!principal) throw unauthenticated();
  // A token of an ended game is refused, for reads as for writes, however recently it was minted.
  if (principal.kind === 'game' && !request.routeOptions.config?.refusesEndedGame && (await credentials.gameEnded(principal))) throw gameEnded(principal.gameId);
  return principal;
}

/** The request's scope: tenant (and game, participants) from the credential, npc from the path. */
export function scopeOf(request: FastifyRequest, npcId?: string): Scope {
  const p = request.principal;
  if (!p) throw unauthenticated();
  if (p.kind === 'key') return { tenantId: p.tenantId, npcId, role: 'runtime' };
  return { tenantId: p.tenantId, gameId: p.gameId, participantIds: p.participantIds, npcId, role: 'runtime' };
}

export function requireKey(request: FastifyRequest): Extract<Principal, { kind: 'key' }> {
  const p = request.principal;
  if (!p) throw unauthenticated();
  if (p.kind !== 'key') throw new MemoryError('API_KEY_REQUIRED', 'this endpoint needs a tenant API key, not a game token');
  return p;
}

export const notVisible = () => new MemoryError('NOT_FOUND', 'No memory with this id is visible in your scope.');

