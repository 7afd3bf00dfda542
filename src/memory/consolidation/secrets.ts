/**
 * Game secrets (the clue firewall's reference list): registered by the engine when a game
 * starts, sealed under the game's key, bound to the game by row-level security exactly like
 * clues, and shredded with the game.
 */
import { randomUUID } from 'node:crypto';
import type { GameSecret } from './firewall.js';
import { seal } from '../crypto/cipher.js';
import type { Sql } from '../db/types.js';
import { inScope } from '../scope.js';
import type { MemoryService } from '../service.js';

/** What a game's registered secrets need of the memory service. */
type SecretsDeps = Pick<MemoryService, 'db' | 'keys' | 'keysFor' | 'unseal'>;
import { ensureGame } from '../store/ingest-requests.js';
import { Values } from '../store/values.js';
import { gameEnded } from '../lifecycle/guards.js';

const aad = (tenantId: string, gameId: string, id: string) => ['secret', tenantId, gameId, id].join('\0');

/** Replaces the game's secrets with `secrets` (a PUT). */
export async function registerSecrets(
  service: SecretsDeps,
  tenantId: string,
  gameId: string,
  secrets: readonly GameSecret[],
): Promise<{ gameId: string; registered: number }> {
  return inScope(service.db, { tenantId, gameId, role: 'runtime' }, async (tx) => {
    await ensureGame(tx, tenantId, gameId);
    const { rows } = await tx.query<{ ended: boolean }>(
      'SELECT ended_at IS NOT NULL AS ended FROM memory.games WHERE tenant_id = $1 AND game_id = $2',
      [tenantId, gameId],
    );
    if (rows[0]?.ended) throw gameEnded(gameId);
    const { keyId, key } = await service.keys.forWrite(tx, tenantId, 'game', gameId);
    await tx.query('DELETE FROM memory.game_secrets WHERE tenant_id = $1 AND game_id = $2', [tenantId, gameId]);
    const unique = [...new Map(secrets.map((s) => [`${s.kind}\0${s.text}`, s])).values()];
    if (unique.length > 0) {
      const ids = unique.map(() => randomUUID());
      const values = new Values([tenantId, gameId, keyId]);
      for (const [i, s] of unique.entries()) {
        values.row(['$1', '$2', values.bind(ids[i]), values.bind(s.kind), '$3', values.bind(seal(key, Buffer.from(s.text, 'utf8'), aad(tenantId, gameId, ids[i]!)))]);
      }
      await tx.query(`INSERT INTO memory.game_secrets (tenant_id, game_id, id, kind, key_id, ciphertext) ${values.sql}`, values.params);
    }
    return { gameId, registered: unique.length };
  });
}

/** The game's secrets, decrypted, inside a transaction scoped to the game (runtime). */
export async function loadSecrets(tx: Sql, service: SecretsDeps, tenantId: string, gameId: string): Promise<GameSecret[]> {
  const { rows } = await tx.query<{ id: string; kind: GameSecret['kind']; key_id: string; ciphertext: Uint8Array }>(
    'SELECT id, kind, key_id, ciphertext FROM memory.game_secrets WHERE tenant_id = $1 AND game_id = $2 ORDER BY created_at, id',
    [tenantId, gameId],
  );
  if (rows.length === 0) return [];
  const keys = await service.keysFor(tx, tenantId, rows);
  const out: GameSecret[] = [];
  for (const row of rows) {
    const key = keys.get(row.key_id);
    const plain = key && service.unseal(key, row.ciphertext, aad(tenantId, gameId, row.id), row.id);
    if (plain) out.push({ kind: row.kind, text: plain.toString('utf8') });
  }
  return out;
}
