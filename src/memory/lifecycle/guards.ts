/**
 * Checks the service makes before writing, so that a refused write answers with a clear error.
 * Row-level security enforces the same rules underneath (migration 0003): game end hides and
 * closes the game's episodic and clue rows; an erased subject cannot get a new episode, social
 * fact or participant key.
 */
import { createHash } from 'node:crypto';
import type { Sql } from '../db/types.js';
import type { IngestResult } from '../../boundary/events.js';
import { MemoryError } from '../errors.js';
import { ensureGame } from '../store/ingest-requests.js';

/** The erased-subject record of a participant: sha256 of "tenant:participant" (as memory.subject_hash). */
export function subjectHash(tenantId: string, participantId: string): string {
  return createHash('sha256').update(`${tenantId}:${participantId}`, 'utf8').digest('hex');
}

export const gameEnded = (gameId: string) =>
  new MemoryError('GAME_ENDED', `game "${gameId}" has ended; its memory is closed. Start a new game id for a new game`);

export const subjectErased = () =>
  new MemoryError('SUBJECT_ERASED', 'a participant in this request was erased at their request; nothing more is stored for them');

/**
 * What a write needs to know before it starts, read in one statement (one round trip): whether
 * its game is known and ended, whether any of its participants was erased and, for an ingest
 * batch, what its idempotency key was first answered with.
 */
interface Gate {
  /** Undefined when the game has no row yet (its first write registers it). */
  ended?: boolean;
  erased: boolean;
  previous?: { request_hash: string; response: IngestResult };
}

async function readGate(tx: Sql, tenantId: string, gameId: string | undefined, participantIds: readonly string[], idempotencyKey?: string): Promise<Gate> {
  const subjects = [...new Set(participantIds)].map((p) => subjectHash(tenantId, p));
  const { rows } = await tx.query<{ ended: boolean | null; erased: boolean; request_hash: string | null; response: IngestResult | null }>(
    `SELECT (SELECT ended_at IS NOT NULL FROM memory.games WHERE tenant_id = $1 AND game_id = $2) AS ended,
            EXISTS (SELECT 1 FROM memory.erased_subjects WHERE tenant_id = $1 AND subject = ANY ($3::text[])) AS erased,
            (SELECT request_hash FROM memory.ingest_requests WHERE tenant_id = $1 AND game_id = $2 AND idempotency_key = $4) AS request_hash,
            (SELECT response FROM memory.ingest_requests WHERE tenant_id = $1 AND game_id = $2 AND idempotency_key = $4) AS response`,
    [tenantId, gameId ?? null, subjects, idempotencyKey ?? null],
  );
  const row = rows[0]!;
  return { ended: row.ended ?? undefined, erased: row.erased, previous: row.request_hash === null ? undefined : { request_hash: row.request_hash, response: row.response! } };
}

/** Refuses a write to an ended game or for an erased subject; registers a game on its first write. */
async function pass(tx: Sql, tenantId: string, gameId: string | undefined, gate: Gate): Promise<void> {
  if (gate.ended) throw gameEnded(gameId!);
  if (gate.erased) throw subjectErased();
  if (gameId && gate.ended === undefined) await ensureGame(tx, tenantId, gameId);
}

/**
 * Inside the ingest transaction (runtime scope of the game): the answer already given to this
 * idempotency key, if any (a retried batch is answered as it was, even after the game ended);
 * else refuses an ended game or an erased participant, and registers a new game.
 */
export async function admitIngest(
  tx: Sql,
  tenantId: string,
  gameId: string,
  participantIds: readonly string[],
  idempotencyKey: string,
): Promise<{ request_hash: string; response: IngestResult } | undefined> {
  const gate = await readGate(tx, tenantId, gameId, participantIds, idempotencyKey);
  if (gate.previous) return gate.previous;
  await pass(tx, tenantId, gameId, gate);
  return undefined;
}

/**
 * What each open transaction has already been let write: a consolidation run writes many facts of
 * one game and one participant in one transaction, and asks once. (Row-level security checks
 * every row underneath whatever this remembers; the check here is for a clear error.)
 */
const admitted = new WeakMap<Sql, Set<string>>();

/** Inside a fact write: a clue needs an open game (registered on its first write); a social fact a subject not erased. */
export async function assertFactWriteAllowed(tx: Sql, tenantId: string, gameId: string | undefined, participantId: string | undefined): Promise<void> {
  if (!gameId && !participantId) return;
  const asked = `${gameId ?? ''}\u0000${participantId ?? ''}`;
  let seen = admitted.get(tx);
  if (seen?.has(asked)) return;
  await pass(tx, tenantId, gameId, await readGate(tx, tenantId, gameId, participantId ? [participantId] : []));
  if (!seen) admitted.set(tx, (seen = new Set()));
  seen.add(asked);
}
