/**
 * Where the outbox keeps what it has not delivered yet. Two backends behind one interface:
 * - `MemoryOutboxStore`: nothing leaves the process; undelivered calls die with it.
 * - `JsonLinesOutboxStore`: an append-only JSON-lines file, so a restarted engine sends what the
 *   previous process had accepted but not delivered, with the same idempotency keys.
 *
 * Durability of the file ("durable enough" for an engine whose games live in memory anyway):
 * every record is written with a synchronous `write(2)` before the call it describes is
 * attempted, so it survives a crash of the process; it survives a crash of the machine only with
 * `fsync: true` (one `fsync(2)` per record, much slower). A torn last line is ignored on load.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync, existsSync } from 'node:fs';
import type { BoundaryEvent } from '../../boundary/events.js';
import type { EndGameRequest, FlushWorkingMemoryRequest, RegisterSecretsRequest } from '../memory-port.js';
import type { GameId, RoomId } from '../types.js';

export type OutboxCall =
  | { readonly name: 'ingest'; readonly events: readonly BoundaryEvent[] }
  | { readonly name: 'flushWorkingMemory'; readonly request: FlushWorkingMemoryRequest }
  | { readonly name: 'registerSecrets'; readonly request: RegisterSecretsRequest }
  | { readonly name: 'endGame'; readonly request: EndGameRequest };

export type OutboxCallName = OutboxCall['name'];

export interface OutboxEntry {
  /** Increases with every accepted call, across games; the outbox's total order. */
  readonly id: number;
  readonly gameId: GameId;
  /** The room whose order this call keeps; absent for game-wide calls (secrets, end). */
  readonly roomId?: RoomId;
  readonly call: OutboxCall;
  readonly enqueuedAtMs: number;
}

/** Ingest entries sent together under one idempotency key; fixed before the first attempt. */
export interface SealedBatch {
  readonly ids: readonly number[];
  readonly idempotencyKey: string;
}

export type OutboxRecord =
  | { readonly t: 'put'; readonly entry: OutboxEntry }
  | { readonly t: 'seal'; readonly batch: SealedBatch }
  /** Delivered, or set aside as a dead letter: either way never sent again. */
  | { readonly t: 'done'; readonly ids: readonly number[] };

export interface OutboxSnapshot {
  readonly pending: OutboxEntry[];
  readonly sealed: SealedBatch[];
}

export interface OutboxStore {
  /** What the previous process left undelivered, in id order. */
  load(): OutboxSnapshot;
  append(record: OutboxRecord): void;
  /** Called after calls settle; may rewrite storage to what `snapshot()` returns (everything pending). */
  compact(pendingCount: number, snapshot: () => OutboxSnapshot): void;
  close(): void;
}

export class MemoryOutboxStore implements OutboxStore {
  load(): OutboxSnapshot {
    return { pending: [], sealed: [] };
  }
  append(): void {}
  compact(): void {}
  close(): void {}
}

export interface JsonLinesOutboxStoreOptions {
  /** fsync after every record (Default: false: survives a process crash, not a power cut). */
  fsync?: boolean;
  /** Rewrite the file once it holds this many records and most are settled (Default: 10000). */
  compactAfterRecords?: number;
}

export class JsonLinesOutboxStore implements OutboxStore {
  #fd: number | undefined;
  #records = 0;
  readonly #fsync: boolean;
  readonly #compactAfter: number;

  constructor(
    readonly path: string,
    options: JsonLinesOutboxStoreOptions = {},
  ) {
    this.#fsync = options.fsync ?? false;
    this.#compactAfter = options.compactAfterRecords ?? 10_000;
  }

  load(): OutboxSnapshot {
    const pending = new Map<number, OutboxEntry>();
    const sealed = new Map<string, SealedBatch>();
    if (existsSync(this.path)) {
      const lines = readFileSync(this.path, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.trim() === '') return;
        let record: OutboxRecord;
        try {
          record = JSON.parse(line) as OutboxRecord;
        } catch (cause) {
          // Only the last line can be torn (a crash mid-write); anything else is damage worth stopping for.
          if (i >= lines.length - 2) return;
          throw new Error(`Outbox file ${this.path} line ${i + 1} is not JSON; repair or move the file aside.`, { cause });
        }
        this.#records += 1;
        if (record.t === 'put') pending.set(record.entry.id, record.entry);
        else if (record.t === 'seal') sealed.set(record.batch.idempotencyKey, record.batch);
        else for (const id of record.ids) pending.delete(id);
      });
    }
    const live = [...sealed.values()].filter((b) => b.ids.every((id) => pending.has(id)));
    const snapshot = { pending: [...pending.values()].sort((a, b) => a.id - b.id), sealed: live };
    // Start from a file holding only what is still pending.
    this.#rewrite(snapshot);
    return snapshot;
  }

  append(record: OutboxRecord): void {
    this.#write(`${JSON.stringify(record)}\n`);
    this.#records += 1;
  }

  compact(pendingCount: number, snapshot: () => OutboxSnapshot): void {
    if (this.#records < this.#compactAfter || pendingCount * 4 > this.#records) return;
    this.#rewrite(snapshot());
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #rewrite(snapshot: OutboxSnapshot): void {
    this.close();
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w');
    const lines = [
      ...snapshot.pending.map((entry) => JSON.stringify({ t: 'put', entry } satisfies OutboxRecord)),
      ...snapshot.sealed.map((batch) => JSON.stringify({ t: 'seal', batch } satisfies OutboxRecord)),
    ];
    if (lines.length > 0) writeSync(fd, `${lines.join('\n')}\n`);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.path);
    this.#records = lines.length;
    this.#fd = openSync(this.path, 'a');
  }

  #write(text: string): void {
    if (this.#fd === undefined) this.#fd = openSync(this.path, 'a');
    writeSync(this.#fd, text);
    if (this.#fsync) fsyncSync(this.#fd);
  }
}
