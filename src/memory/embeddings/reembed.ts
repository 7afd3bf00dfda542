import type { Database, Tx } from '../db/types.js';
import { scopeSettings, setLocal } from '../scope.js';
import { MemoryError } from '../errors.js';
import type { MemoryService } from '../service.js';

/** What re-embedding needs of the memory service: the embedder and its keys, to open each row. */
type ReembedDeps = Pick<MemoryService, 'embedder' | 'keysFor' | 'opener'>;
import { TIER_TABLES, type DurableTier } from '../types.js';
import { embeddingText, toVectorLiteral } from './types.js';

/**
 * Re-embeds stored memory with the service's current embedder: every row of a tier table whose
 * `embedder` differs from the current one (another model, or NULL: no vector, as after
 * migration 0005) gets its text decrypted with the keys the service uses, embedded in batches,
 * and its `embedding` and `embedder` replaced.
 *
 * Statements run as memory_reembed (migration 0005) for one tenant at a time: it may read rows and
 * the tenant's data keys and update only those two columns; rows of ended games are invisible to
 * it (game end cleared their vectors for good), and rows whose key was destroyed are not read.
 * Text is held in memory only while its batch is embedded, and is never logged.
 */
export interface ReembedOptions {
  /** One tenant; (Default: every tenant) */
  tenantId?: string;
  /** Rows per model call and per update. (Default: 64) */
  batch?: number;
  /** Called after each batch: rows done and rows to do in all (known before the first batch). */
  onProgress?: (progress: ReembedProgress) => void;
}

export interface ReembedProgress {
  done: number;
  total: number;
  tier: DurableTier;
  tenantId: string;
}

export interface ReembedReport {
  embedder: string;
  /** Rows given the current embedder's vector, per tier. */
  reembedded: Record<DurableTier, number>;
  /** Rows whose text could not be decrypted (failed authentication): left as they were. */
  unreadable: number;
  total: number;
}

const TIERS = Object.keys(TIER_TABLES) as DurableTier[];

export async function reembed(db: Database, service: ReembedDeps, options: ReembedOptions = {}): Promise<ReembedReport> {
  const embedder = service.embedder;
  const batch = options.batch ?? 64;
  if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) throw new MemoryError('INVALID_REQUEST', '--batch must be a whole number from 1 to 10000');
  const tenants = options.tenantId
    ? [options.tenantId]
    : (await db.query<{ tenant_id: string }>('SELECT tenant_id FROM memory.tenants ORDER BY tenant_id')).rows.map((r) => r.tenant_id);

  const pending = `embedder IS DISTINCT FROM $1 AND key_id IN (SELECT key_id FROM memory.data_keys WHERE tenant_id = $2 AND destroyed_at IS NULL)`;
  const todo: { tenantId: string; tier: DurableTier; count: number }[] = [];
  for (const tenantId of tenants) {
    await asReembed(db, tenantId, async (tx) => {
      for (const tier of TIERS) {
        const { rows } = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${TIER_TABLES[tier].table} WHERE tenant_id = $2 AND ${pending}`, [embedder.id, tenantId]);
        const count = Number(rows[0]!.n);
        if (count > 0) todo.push({ tenantId, tier, count });
      }
    });
  }
  const total = todo.reduce((s, t) => s + t.count, 0);
  const report: ReembedReport = { embedder: embedder.id, reembedded: { episodic: 0, clue: 0, social: 0, lore: 0, fragment: 0 }, unreadable: 0, total };
  let done = 0;
  for (const { tenantId, tier } of todo) {
    const spec = TIER_TABLES[tier];
    const columns = [
      'id, npc_id, key_id, ciphertext',
      spec.gameBound ? 'game_id' : 'NULL::text AS game_id',
      tier === 'episodic' || spec.participantBound ? 'participant_id' : 'NULL::text AS participant_id',
    ].join(', ');
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      // Read and decrypt one page; embed with no transaction open (the model takes a while).
      const page = await asReembed(db, tenantId, async (tx) => {
        const { rows } = await tx.query<Row>(
          `SELECT ${columns} FROM ${spec.table} WHERE tenant_id = $2 AND ${pending} AND id > $3::uuid ORDER BY id LIMIT ${batch}`,
          [embedder.id, tenantId, after],
        );
        const keys = rows.length ? await service.keysFor(tx, tenantId, rows) : new Map<string, Uint8Array>();
        return rows.map((row) => ({ row, text: textOf(service, keys, tier, tenantId, row) }));
      });
      if (page.length === 0) break;
      after = page[page.length - 1]!.row.id;
      const readable = page.filter((p): p is { row: Row; text: string } => p.text !== undefined);
      report.unreadable += page.length - readable.length;
      const vectors = await embedder.embed(readable.map((p) => p.text));
      if (readable.length > 0) {
        await asReembed(db, tenantId, (tx) =>
          tx.query(
            `UPDATE ${spec.table} AS t SET embedding = u.embedding::vector, embedder = $1
             FROM unnest($2::uuid[], $3::text[]) AS u(id, embedding)
             WHERE t.id = u.id AND t.tenant_id = $4`,
            [embedder.id, readable.map((p) => p.row.id), vectors.map((v) => toVectorLiteral(v)), tenantId],
          ),
        );
      }
      report.reembedded[tier] += readable.length;
      done += page.length;
      options.onProgress?.({ done, total, tier, tenantId });
    }
  }
  return report;
}

interface Row {
  id: string;
  npc_id: string;
  game_id: string | null;
  participant_id: string | null;
  key_id: string;
  ciphertext: Uint8Array;
}

/** The text the service embedded when it wrote the row: an episode's text, a fact's summary. */
function textOf(service: ReembedDeps, keys: Map<string, Uint8Array>, tier: DurableTier, tenantId: string, row: Row): string | undefined {
  const text = service.opener(tenantId, keys).text(tier, row);
  if (text === undefined) return undefined;
  if (tier === 'episodic') return embeddingText(text);
  try {
    return (JSON.parse(text) as { summary: string }).summary;
  } catch {
    return undefined;
  }
}

/** A transaction as memory_reembed for one tenant (no game, npc or participants in scope). */
function asReembed<T>(db: Database, tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await setLocal(tx, scopeSettings('memory_reembed', { tenantId }));
    return fn(tx);
  });
}
