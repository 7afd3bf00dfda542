/**
 * The memory lifecycle: game end, shredding after the audit window, erasure (GDPR), and the
 * review of poisoning anomalies. Every statement runs as memory_lifecycle for one tenant (or as
 * the runtime/admin roles where it reads memory), never as the owner.
 *
 * Game end (DESIGN.md section 5):
 * 1. a final consolidation of the game's pending episodes (while they are still readable);
 * 2. in one transaction: games.ended_at is set, which the episodic, clue and secret policies
 *    test, so from the commit on the database returns none of those rows to the runtime; their
 *    embeddings are set to NULL; a shred job is queued for ended_at + audit window;
 * 3. the shred job (or `sweep` / the CLI) destroys the game's key-encryption key in the keyring,
 *    marks the data key destroyed, and deletes every game-bound row.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { appendAudit, canonicalJson } from '../audit/ledger.js';
import { open } from '../crypto/cipher.js';
import { kekRef } from '../crypto/data-keys.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Database, Tx } from '../db/types.js';
import { inScope } from '../scope.js';
import type { MemoryService } from '../service.js';

/** What the lifecycle needs of the memory service: its keys, to open what it audits. */
export type LifecycleDeps = Pick<MemoryService, 'keys' | 'keysFor' | 'unseal'>;
import { rowAad } from '../crypto/sealed-rows.js';
import { anomalyAad } from '../consolidation/consolidator.js';
import { enqueue } from '../jobs/queue.js';
import { iso } from '../store/rows.js';
import { subjectHash } from './guards.js';
import { asLifecycle, asWorker, systemClock, type Clock } from '../roles.js';
import { TIER_TABLES } from '../types.js';

/** Every table holding a game's rows: its tiers (TIER_TABLES' game-bound ones) and its bookkeeping. */
const GAME_TABLES = [
  ...Object.values(TIER_TABLES).filter((t) => t.gameBound).map((t) => t.table.replace(/^memory\./, '')),
  ...['game_secrets', 'consolidated_episodes', 'anomalies', 'working', 'context_log', 'ingest_requests'],
];

export const DEFAULT_AUDIT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

export interface LifecycleOptions {
  /** How long an ended game's rows are kept, encrypted and unreadable, before shredding. (Default: 30 days) */
  auditWindowMs?: number;
  clock?: Clock;
  /** Runs the consolidation of one npc's pending episodes (the final one at game end). */
  consolidate?: (target: { tenantId: string; gameId: string; npcId: string }) => Promise<unknown>;
  logger?: Logger;
}

export interface EndGameResult {
  gameId: string;
  endedAt: string;
  shredAfter: string;
}

export interface ShredReport {
  gameId: string;
  status: 'shredded' | 'already_shredded' | 'not_due' | 'not_ended';
  shredAfter?: string;
  keysDestroyed: number;
  rowsPurged: Record<string, number>;
}

export interface ErasureReceipt {
  /** sha256 of "tenant:participant": the record kept so that nothing is stored for them again. */
  subject: string;
  erasedAt: string;
  removed: { episodic: number; social: number; clue: number; lore: number; fragment: number; anomalies: number; working: number };
  keysDestroyed: number;
  /** sha256 of the canonical JSON of the fields above: quote it to prove what was done. */
  receiptHash: string;
}

export interface Anomaly {
  id: string;
  npcId: string;
  gameId: string;
  kind: string;
  coreKey: string | null;
  claim: string | null;
  textHash: string;
  createdAt: string;
}

export class Lifecycle {
  readonly auditWindowMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly db: Database,
    private readonly service: LifecycleDeps,
    private readonly keyring: Keyring,
    private readonly options: LifecycleOptions = {},
  ) {
    this.auditWindowMs = options.auditWindowMs ?? DEFAULT_AUDIT_WINDOW_MS;
    this.clock = options.clock ?? systemClock;
  }

  async endGame(tenantId: string, gameId: string, actor: string): Promise<EndGameResult> {
    const already = await asLifecycle(this.db, { tenantId, gameId }, (tx) => endedAt(tx, tenantId, gameId));
    if (!already) await this.finalConsolidation(tenantId, gameId);
    const now = this.clock();
    return asLifecycle(this.db, { tenantId, gameId }, async (tx) => {
      await tx.query('INSERT INTO memory.games (tenant_id, game_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, gameId]);
      const { rows } = await tx.query<{ ended_at: Date | string; first: boolean }>(
        `UPDATE memory.games SET ended_at = coalesce(ended_at, $3) WHERE tenant_id = $1 AND game_id = $2
         RETURNING ended_at, ended_at = $3::timestamptz AS first`,
        [tenantId, gameId, now],
      );
      const ended = new Date(rows[0]!.ended_at);
      const shredAfter = new Date(ended.getTime() + this.auditWindowMs);
      // Embeddings are a plaintext-equivalent copy: gone at once, not after the window.
      const episodic = await tx.query('UPDATE memory.episodic SET embedding = NULL WHERE tenant_id = $1 AND game_id = $2 AND embedding IS NOT NULL', [tenantId, gameId]);
      const clues = await tx.query('UPDATE memory.clues SET embedding = NULL WHERE tenant_id = $1 AND game_id = $2 AND embedding IS NOT NULL', [tenantId, gameId]);
      await enqueue(tx, { tenantId, kind: 'shred', gameId, reason: 'audit_window' }, { runAt: shredAfter, maxAttempts: 10 });
      if (rows[0]!.first) {
        await appendAudit(tx, { tenantId, action: 'game_end', actor, subject: `game:${gameId}`, details: { shredAfter: shredAfter.toISOString(), embeddingsCleared: episodic.rowCount + clues.rowCount } });
      }
      return { gameId, endedAt: ended.toISOString(), shredAfter: shredAfter.toISOString() };
    });
  }

  /** Consolidates what is still pending for the game, so that nothing is read after it ends. */
  private async finalConsolidation(tenantId: string, gameId: string): Promise<void> {
    if (!this.options.consolidate) return;
    const npcs = await asLifecycle(this.db, { tenantId, gameId }, async (tx) => {
      const { rows } = await tx.query<{ npc_id: string }>(
        `SELECT DISTINCT e.npc_id FROM memory.episodic e WHERE e.tenant_id = $1 AND e.game_id = $2
           AND e.id NOT IN (SELECT c.episode_id FROM memory.consolidated_episodes c WHERE c.tenant_id = $1 AND c.game_id = $2)`,
        [tenantId, gameId],
      );
      return rows.map((r) => r.npc_id);
    });
    for (const npcId of npcs) {
      try {
        await this.options.consolidate({ tenantId, gameId, npcId });
      } catch (error) {
        // The game ends regardless: an extractor outage must not keep its memory readable.
        this.options.logger?.warn({ gameId, npcId, err: { name: (error as Error).name } }, 'final consolidation failed; the game ends without it');
      }
    }
  }

  /** Destroys the game's key and purges its rows, once the audit window has passed. */
  async shredGame(tenantId: string, gameId: string): Promise<ShredReport> {
    const now = this.clock();
    const state = await asLifecycle(this.db, { tenantId, gameId }, async (tx) => {
      const { rows } = await tx.query<{ ended_at: Date | string | null; shredded_at: Date | string | null }>(
        'SELECT ended_at, shredded_at FROM memory.games WHERE tenant_id = $1 AND game_id = $2',
        [tenantId, gameId],
      );
      const keys = await tx.query<{ kek_ref: string }>(
        "SELECT kek_ref FROM memory.data_keys WHERE tenant_id = $1 AND scope_kind = 'game' AND scope_ref = $2",
        [tenantId, gameId],
      );
      return { game: rows[0], kekRefs: keys.rows.map((r) => r.kek_ref) };
    });
    const report: ShredReport = { gameId, status: 'shredded', keysDestroyed: 0, rowsPurged: {} };
    if (!state.game?.ended_at) return { ...report, status: 'not_ended' };
    const shredAfter = new Date(new Date(state.game.ended_at).getTime() + this.auditWindowMs);
    report.shredAfter = shredAfter.toISOString();
    if (state.game.shredded_at) return { ...report, status: 'already_shredded' };
    if (now < shredAfter) return { ...report, status: 'not_due' };
    // Crypto-shredding first: once the wrapping key is gone, no copy of a row (WAL, backups,
    // dead tuples) can be decrypted, whatever happens to the purge below.
    for (const ref of new Set(state.kekRefs)) if (await this.keyring.destroy(ref)) report.keysDestroyed++;
    await asLifecycle(this.db, { tenantId, gameId }, async (tx) => {
      await tx.query(
        "UPDATE memory.data_keys SET destroyed_at = coalesce(destroyed_at, $3) WHERE tenant_id = $1 AND scope_kind = 'game' AND scope_ref = $2",
        [tenantId, gameId, now],
      );
      for (const table of GAME_TABLES) {
        const { rowCount } = await tx.query(`DELETE FROM memory.${table} WHERE tenant_id = $1 AND game_id = $2`, [tenantId, gameId]);
        report.rowsPurged[table] = rowCount;
      }
      await tx.query('UPDATE memory.games SET shredded_at = $3 WHERE tenant_id = $1 AND game_id = $2', [tenantId, gameId, now]);
    });
    this.service.keys.forget();
    return report;
  }

  /** Queues a shred job for every ended game whose window has passed and that has none (a safety net). */
  async sweep(): Promise<number> {
    const now = this.clock();
    return asWorker(this.db, async (tx) => {
      const { rowCount } = await tx.query(
        `INSERT INTO memory.jobs (tenant_id, kind, game_id, reason, run_at, max_attempts)
         SELECT g.tenant_id, 'shred', g.game_id, 'audit_window', $1, 10 FROM memory.games g
          WHERE g.ended_at IS NOT NULL AND g.shredded_at IS NULL
            AND g.ended_at + make_interval(secs => $2::double precision / 1000) <= $1
         ON CONFLICT (tenant_id, kind, game_id, npc_id) WHERE state = 'queued' DO NOTHING`,
        [now, this.auditWindowMs],
      );
      return rowCount;
    });
  }

  /**
   * Erases a participant across every npc and game of the tenant: episodes they spoke, their
   * social facts, every fact derived from their episodes, anomalies and working memory quoting
   * them; destroys their key; records the subject so that nothing is stored for them again.
   */
  async eraseParticipant(tenantId: string, participantId: string, actor: string): Promise<ErasureReceipt> {
    const subject = subjectHash(tenantId, participantId);
    const erasedAt = this.clock();
    // 1. The record first: from its commit on, every write for the subject is refused.
    await asLifecycle(this.db, { tenantId }, (tx) =>
      tx.query('INSERT INTO memory.erased_subjects (tenant_id, subject, erased_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [tenantId, subject, erasedAt]),
    );
    // 2. The participant's key-encryption key: their social facts become undecryptable everywhere.
    let keysDestroyed = 0;
    if (await this.keyring.destroy(kekRef(tenantId, 'participant', participantId))) keysDestroyed++;
    // 3. The rows; run twice, so a write that was in flight during the first pass is caught too.
    const removed = { episodic: 0, social: 0, clue: 0, lore: 0, fragment: 0, anomalies: 0, working: 0 };
    for (let pass = 0; pass < 2; pass++) {
      const counts = await asLifecycle(this.db, { tenantId }, (tx) => this.eraseRows(tx, tenantId, participantId, erasedAt));
      for (const k of Object.keys(removed) as (keyof typeof removed)[]) removed[k] += counts[k];
    }
    this.service.keys.forget();
    const body = { subject, erasedAt: erasedAt.toISOString(), removed, keysDestroyed };
    const receiptHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    await asLifecycle(this.db, { tenantId }, async (tx) => {
      await tx.query('UPDATE memory.erased_subjects SET receipt_hash = $3 WHERE tenant_id = $1 AND subject = $2', [tenantId, subject, receiptHash]);
      await appendAudit(tx, { tenantId, action: 'erasure', actor, subject: `subject:${subject}`, details: { removed, keysDestroyed, receiptHash } });
    });
    return { ...body, receiptHash };
  }

  private async eraseRows(tx: Tx, tenantId: string, participantId: string, now: Date): Promise<ErasureReceipt['removed']> {
    const { rows } = await tx.query<{ id: string; game_id: string }>(
      'SELECT id, game_id FROM memory.episodic WHERE tenant_id = $1 AND participant_id = $2',
      [tenantId, participantId],
    );
    const ids = rows.map((r) => r.id);
    const games = [...new Set(rows.map((r) => r.game_id))];
    const count = async (sql: string, params: unknown[]) => (await tx.query(sql, params)).rowCount;
    const derived = (table: string) =>
      count(`DELETE FROM memory.${table} WHERE tenant_id = $1 AND derived_from && $2::uuid[]`, [tenantId, ids]);
    const social =
      (await count('DELETE FROM memory.social WHERE tenant_id = $1 AND participant_id = $2', [tenantId, participantId])) + (await derived('social'));
    const clue = await derived('clues');
    const lore = await derived('lore');
    const fragment = await derived('fragments');
    const anomalies = await count('DELETE FROM memory.anomalies WHERE tenant_id = $1 AND (participant_id = $2 OR episode_id = ANY ($3::uuid[]))', [tenantId, participantId, ids]);
    await tx.query('DELETE FROM memory.consolidated_episodes WHERE tenant_id = $1 AND episode_id = ANY ($2::uuid[])', [tenantId, ids]);
    let episodic = await count('DELETE FROM memory.episodic WHERE tenant_id = $1 AND participant_id = $2', [tenantId, participantId]);
    // Serialized working memory has no single speaker but quotes speakers by id: drop the
    // summaries and live working memory of those games that mention the participant.
    let working = 0;
    for (const gameId of games) {
      const quoted = await this.rowsQuoting(tx, tenantId, gameId, participantId);
      if (quoted.episodes.length > 0) {
        episodic += await count('DELETE FROM memory.episodic WHERE tenant_id = $1 AND id = ANY ($2::uuid[])', [tenantId, quoted.episodes]);
      }
      for (const w of quoted.working) {
        working += await count('DELETE FROM memory.working WHERE tenant_id = $1 AND game_id = $2 AND room_id = $3 AND npc_id = $4', [tenantId, gameId, w.room_id, w.npc_id]);
      }
    }
    await tx.query(
      "UPDATE memory.data_keys SET destroyed_at = coalesce(destroyed_at, $3) WHERE tenant_id = $1 AND scope_kind = 'participant' AND scope_ref = $2",
      [tenantId, participantId, now],
    );
    // The key record names the participant: once no row is sealed under it, it goes too (the
    // erased-subject record, a hash, is what refuses a new key).
    await tx.query(
      `DELETE FROM memory.data_keys k WHERE k.tenant_id = $1 AND k.scope_kind = 'participant' AND k.scope_ref = $2
         AND NOT EXISTS (SELECT 1 FROM memory.social s WHERE s.tenant_id = $1 AND s.key_id = k.key_id)`,
      [tenantId, participantId],
    );
    return { episodic, social, clue, lore, fragment, anomalies, working };
  }

  /** Working-memory rows and working summaries of a game whose plaintext names the participant id. */
  private async rowsQuoting(
    tx: Tx,
    tenantId: string,
    gameId: string,
    participantId: string,
  ): Promise<{ episodes: string[]; working: { room_id: string; npc_id: string }[] }> {
    const summaries = await tx.query<{ id: string; npc_id: string; key_id: string; ciphertext: Uint8Array }>(
      "SELECT id, npc_id, key_id, ciphertext FROM memory.episodic WHERE tenant_id = $1 AND game_id = $2 AND kind = 'working_summary'",
      [tenantId, gameId],
    );
    const working = await tx.query<{ room_id: string; npc_id: string; key_id: string; ciphertext: Uint8Array }>(
      'SELECT room_id, npc_id, key_id, ciphertext FROM memory.working WHERE tenant_id = $1 AND game_id = $2',
      [tenantId, gameId],
    );
    const keyIds = [...new Set([...summaries.rows, ...working.rows].map((r) => r.key_id))];
    const keys = new Map<string, Uint8Array>();
    for (const keyId of keyIds) {
      const key = await this.service.keys.forRead(tx, tenantId, keyId);
      if (key) keys.set(keyId, key);
    }
    const mentions = (keyId: string, sealed: Uint8Array, aad: string) => {
      const key = keys.get(keyId);
      if (!key) return false;
      try {
        return open(key, sealed, aad).toString('utf8').includes(participantId);
      } catch {
        return false;
      }
    };
    return {
      episodes: summaries.rows
        .filter((r) => mentions(r.key_id, r.ciphertext, rowAad('episodic', tenantId, gameId, r.npc_id, undefined, r.id)))
        .map((r) => r.id),
      // The AAD of working memory as src/memory/context/working-memory.ts seals it.
      working: working.rows.filter((r) => mentions(r.key_id, r.ciphertext, ['working', tenantId, gameId, r.room_id, r.npc_id].join('\0'))),
    };
  }

  /** Poisoning anomalies of one npc, newest first (admin key). */
  async listAnomalies(tenantId: string, npcId: string, limit = 100): Promise<Anomaly[]> {
    return inScope(this.db, { tenantId, npcId, role: 'admin' }, async (tx) => {
      const { rows } = await tx.query<{
        id: string;
        npc_id: string;
        game_id: string;
        kind: string;
        core_key: string | null;
        text_hash: string;
        key_id: string;
        ciphertext: Uint8Array;
        created_at: Date | string;
      }>(
        `SELECT id, npc_id, game_id, kind, core_key, text_hash, key_id, ciphertext, created_at FROM memory.anomalies
          WHERE tenant_id = $1 AND npc_id = $2 ORDER BY created_at DESC, id LIMIT $3`,
        [tenantId, npcId, limit],
      );
      const keys = await this.service.keysFor(tx, tenantId, rows);
      return rows.map((r) => {
        const key = keys.get(r.key_id);
        const plain = key && this.service.unseal(key, r.ciphertext, anomalyAad(tenantId, npcId, r.id), r.id);
        const claim = plain ? (JSON.parse(plain.toString('utf8')) as { claim: string }).claim : null;
        return { id: r.id, npcId: r.npc_id, gameId: r.game_id, kind: r.kind, coreKey: r.core_key, claim, textHash: r.text_hash, createdAt: iso(r.created_at) };
      });
    });
  }
}

async function endedAt(tx: Tx, tenantId: string, gameId: string): Promise<Date | undefined> {
  const { rows } = await tx.query<{ ended_at: Date | string | null }>('SELECT ended_at FROM memory.games WHERE tenant_id = $1 AND game_id = $2', [tenantId, gameId]);
  return rows[0]?.ended_at ? new Date(rows[0].ended_at) : undefined;
}

