/**
 * Where the outbox keeps what it has not delivered yet. Two backends behind one interface:
 * - `MemoryOutboxStore`: nothing leaves the process; undelivered calls die with it.
 * - `DatabaseOutboxStore`: the engine's database, through its journal. A call is written in the
 *   same transaction as the command that caused it (the transactional outbox) and is sent only
 *   once that transaction committed; a batch's idempotency key is committed before the batch is
 *   first sent, so a restarted engine resends it under the same key and it is stored once.
 */
import type { EngineDatabase } from '../store/database.js';
import type { Journal } from '../store/journal.js';
import type { OutboxCall, OutboxEntry, OutboxRecord, OutboxSnapshot } from './types.js';

export type { OutboxCall, OutboxCallName, OutboxEntry, OutboxRecord, OutboxSnapshot, SealedBatch } from './types.js';

export interface OutboxStore {
  /**
   * Records a change; a promise means "not kept until it resolves": the outbox sends no call
   * before its `put`, and no batch before its `seal`, has resolved.
   */
  append(record: OutboxRecord): void | Promise<void>;
}

export class MemoryOutboxStore implements OutboxStore {
  append(): void {}
}

export class DatabaseOutboxStore implements OutboxStore {
  constructor(private readonly journal: Journal) {}

  append(record: OutboxRecord): Promise<void> {
    return this.journal.write(record);
  }

  /** What a previous process left undelivered, in id order, with the batches it had sealed. */
  static async load(db: EngineDatabase): Promise<OutboxSnapshot> {
    const { rows } = await db.query<{ id: string | number; game_id: string; room_id: string | null; call: OutboxCall | string; enqueued_at_ms: string | number; sealed_key: string | null }>(
      'SELECT id, game_id, room_id, call, enqueued_at_ms, sealed_key FROM engine.outbox ORDER BY id',
    );
    const pending: OutboxEntry[] = [];
    const sealed = new Map<string, number[]>();
    for (const row of rows) {
      const id = Number(row.id);
      pending.push({
        id,
        gameId: row.game_id,
        ...(row.room_id !== null ? { roomId: row.room_id } : {}),
        call: typeof row.call === 'string' ? (JSON.parse(row.call) as OutboxCall) : row.call,
        enqueuedAtMs: Number(row.enqueued_at_ms),
      });
      if (row.sealed_key !== null) sealed.set(row.sealed_key, [...(sealed.get(row.sealed_key) ?? []), id]);
    }
    return { pending, sealed: [...sealed].map(([idempotencyKey, ids]) => ({ idempotencyKey, ids })) };
  }
}
