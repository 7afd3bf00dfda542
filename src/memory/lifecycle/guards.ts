/**
 * Checks the service makes before writing, so that a refused write answers with a clear error.
 * Row-level security enforces the same rules underneath (migration 0003): game end hides and
 * closes the game's episodic and clue rows; an erased subject cannot get a new episode, social
 * fact or participant key.
 */
import { createHash } from 'node:crypto';
import type { Sql } from '../db/types.js';
import { MemoryError } from '../errors.js';

/** The erased-subject record of a participant: sha256 of "tenant:participant" (as memory.subject_hash). */
export function subjectHash(tenantId: string, participantId: string): string {
  return createHash('sha256').update(`${tenantId}:${participantId}`, 'utf8').digest('hex');
}

export const gameEnded = (gameId: string) =>
  new MemoryError('GAME_ENDED', `game "${gameId}" has ended; its memory is closed. Start a new game id for a new game`);

export const subjectErased = () =>
  new MemoryError('SUBJECT_ERASED', 'a participant in this request was erased at their request; nothing more is stored for them');

async function isEnded(tx: Sql, tenantId: string, gameId: string): Promise<boolean> {
  const { rows } = await tx.query<{ ended: boolean }>(
    'SELECT ended_at IS NOT NULL AS ended FROM memory.games WHERE tenant_id = $1 AND game_id = $2',
    [tenantId, gameId],
  );
  return rows[0]?.ended ?? false;
}

async function anyErased(tx: Sql, tenantId: string, participantIds: readonly string[]): Promise<boolean> {
  const subjects = [...new Set(participantIds)].map((p) => subjectHash(tenantId, p));
  if (subjects.length === 0) return false;
  const { rows } = await tx.query(
    'SELECT 1 FROM memory.erased_subjects WHERE tenant_id = $1 AND subject = ANY ($2::text[]) LIMIT 1',
    [tenantId, subjects],
  );
  return rows.length > 0;
}

/** Inside the ingest transaction (runtime scope of the game). */
export async function assertIngestAllowed(tx: Sql, tenantId: string, gameId: string, participantIds: readonly string[]): Promise<void> {
  if (await isEnded(tx, tenantId, gameId)) throw gameEnded(gameId);
  if (await anyErased(tx, tenantId, participantIds)) throw subjectErased();
}

/** Inside a fact write: a clue needs an open game; a social fact a subject not erased. */
export async function assertFactWriteAllowed(tx: Sql, tenantId: string, gameId: string | undefined, participantId: string | undefined): Promise<void> {
  if (gameId && (await isEnded(tx, tenantId, gameId))) throw gameEnded(gameId);
  if (participantId && (await anyErased(tx, tenantId, [participantId]))) throw subjectErased();
}
