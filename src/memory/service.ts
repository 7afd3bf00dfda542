import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from './audit/ledger.js';
import type { Database, Sql, Tx } from './db/types.js';
import type { Embedder } from './embeddings/types.js';
import { embeddingText, toVectorLiteral } from './embeddings/types.js';
import { TopicClassifier } from './embeddings/topics.js';
import { DataKeys } from './crypto/data-keys.js';
import type { Keyring } from './crypto/keyring.js';
import { open } from './crypto/cipher.js';
import { RowOpener, sealFact, sealText } from './crypto/sealed-rows.js';
import { inScope, readInScope, setLocal, type Scope } from './scope.js';
import { MemoryError, notFound } from './errors.js';
import type { IngestBatch, IngestResult } from '../boundary/events.js';
import {
  FACT_TIERS,
  TIER_TABLES,
  type DurableTier,
  type EpisodeMemory,
  type FactMemory,
  type FactTier,
  type Lineage,
  type Memory,
  type Provenance,
  type RetentionClass,
  type Source,
} from './types.js';
import { appendIngest } from './store/ingest-requests.js';
import { getEpisode, insertEpisodes, listEpisodes, searchEpisodesStatement, type NewEpisodeRow } from './store/episodes.js';
import * as facts from './store/facts.js';
import { admitIngest, assertFactWriteAllowed } from './lifecycle/guards.js';
import { iso, isoOrNull, type EpisodeRow, type FactRow } from './store/rows.js';
import { latestProcedural, toProcedural } from './store/procedural.js';

export interface FactInput extends Provenance {
  tier: FactTier;
  /** Required for social facts; must be a participant of the caller's scope. */
  participantId?: string;
  key: string;
  value: string;
  summary: string;
  supersedes?: string;
  derivedFrom?: string[];
}

import type { Procedural } from './types.js';
export type { Procedural, ProceduralInput } from './types.js';

export type ScoredMemory = Memory & { distance: number };

/**
 * The memory service's operations. Every method runs in exactly one scoped transaction
 * (`inScope`), so row-level security filters every statement; the HTTP layer and the
 * consolidation pipeline call the same methods.
 */
export class MemoryService {
  readonly keys: DataKeys;
  /** Topics of a life read from meaning, in this service's embedding space. */
  readonly topics: TopicClassifier;

  constructor(
    readonly db: Database,
    readonly keyring: Keyring,
    readonly embedder: Embedder,
    private readonly options: {
      /** Called with the id of a row whose ciphertext fails authentication. (Default: ignore) */
      onIntegrityFailure?: (rowId: string) => void;
      /** Batching window of ingest-triggered consolidation, in ms (`enqueueConsolidations`). (Default: 0) */
      consolidationWindowMs?: number;
    } = {},
  ) {
    this.keys = new DataKeys(keyring);
    this.topics = new TopicClassifier(embedder);
  }

  /** Appends a batch of boundary events as episodic rows; a retried batch is stored once. */
  async ingest(scope: Scope, batch: IngestBatch): Promise<IngestResult> {
    const gameId = requireGame(scope);
    const foreign = batch.events.find((e) => e.gameId !== gameId);
    if (foreign) {
      throw new MemoryError('SCOPE_MISMATCH', `event for game "${foreign.gameId}" sent with a token for another game; mint a token for that game`);
    }
    // Canonical: a batch resent after a round trip through a database (jsonb reorders keys) is the same batch.
    const requestHash = createHash('sha256').update(canonicalJson(batch.events)).digest('hex');
    // Embed outside the transaction: it is the slow part and needs no locks.
    const vectors = await this.embedder.embed(batch.events.map((e) => embeddingText(e.text)));
    // The episodic policy binds rows to one npc: the scope names it (a batch for one npc, the
    // usual case, sets it with the rest of the scope), or each npc's rows are written in turn.
    const npcs = [...new Set(batch.events.map((e) => e.npcId))];
    const attempt = () =>
      inScope(this.db, npcs.length === 1 ? { ...scope, npcId: npcs[0] } : scope, async (tx) => {
        const previous = await admitIngest(tx, scope.tenantId, gameId, batch.events.map((e) => e.participantId), batch.idempotencyKey);
        if (previous) return replay(previous, requestHash);
        const { keyId, key } = await this.keys.forWrite(tx, scope.tenantId, 'game', gameId);
        const byNpc = new Map<string, NewEpisodeRow[]>();
        const ids = batch.events.map((event, i) => {
          const id = randomUUID();
          const row: NewEpisodeRow = {
            id,
            npcId: event.npcId,
            roomId: event.roomId,
            participantId: event.participantId,
            ts: event.ts,
            targeted: event.targeted,
            anonymous: event.anonymous ?? false,
            keyId,
            ciphertext: sealText(key, 'episodic', scope.tenantId, { id, game_id: gameId, npc_id: event.npcId, participant_id: event.participantId }, event.text),
            embedding: toVectorLiteral(vectors[i]!),
            embedder: this.embedder.id,
          };
          byNpc.set(event.npcId, [...(byNpc.get(event.npcId) ?? []), row]);
          return id;
        });
        // Each npc's rows under its own scope; the last npc's go in one statement with the
        // consolidation jobs (a job exists iff the episodes do) and the batch's record.
        const groups = [...byNpc];
        const last = groups.pop();
        for (const [npcId, rows] of groups) {
          await setNpc(tx, npcId);
          await insertEpisodes(tx, scope.tenantId, gameId, rows);
        }
        if (last && npcs.length > 1) await setNpc(tx, last[0]);
        const result: IngestResult = { accepted: ids.length, ids, replayed: false };
        const jobs = { npcIds: [...byNpc.keys()], windowMs: this.options.consolidationWindowMs ?? 0 };
        await appendIngest(tx, scope.tenantId, gameId, last?.[1] ?? [], jobs, { key: batch.idempotencyKey, hash: requestHash, response: result });
        return result;
      });
    try {
      return await attempt();
    } catch (error) {
      // A concurrent retry of the same batch committed first: answer as its replay.
      if (isUniqueViolation(error)) return attempt();
      throw error;
    }
  }

  async writeFact(scope: Scope, input: FactInput): Promise<FactMemory> {
    factTarget(scope, input); // refuse a bad request before paying for its embedding
    const [vector] = await this.embedder.embed([input.summary]);
    return inScope(this.db, scope, (tx) => this.writeFactIn(tx, scope, input, vector!));
  }

  /**
   * `writeFact` inside a transaction the caller already holds in `scope` (consolidation writes
   * all of one batch's facts, and marks its episodes consolidated, in one transaction).
   */
  async writeFactIn(tx: Tx, scope: Scope, input: FactInput, vector: Float32Array): Promise<FactMemory> {
    const target = factTarget(scope, input);
    await assertFactWriteAllowed(tx, scope.tenantId, target.gameId, target.participantId);
    if (input.supersedes && (await facts.markSupersededAll(tx, input.tier, scope, [input.supersedes])) !== 1) {
      throw new MemoryError('NOT_FOUND', 'the fact named in "supersedes" is not a current fact in your scope');
    }
    const row = await facts.insertFact(tx, input.tier, await this.sealedFact(tx, scope, randomUUID(), input, vector, target));
    return this.toFact(await this.keysFor(tx, scope.tenantId, [row]), input.tier, scope.tenantId, row)!;
  }

  /**
   * Facts of one tier written together inside a transaction the caller holds (consolidation), with
   * the checks of `writeFactIn`, in a few statements however many there are. Each comes with its
   * id, so that one may supersede another of the same batch: that one is written already superseded.
   */
  async writeFactsIn(tx: Tx, scope: Scope, tier: FactTier, batch: readonly { id: string; input: FactInput; vector: Float32Array }[]): Promise<void> {
    if (batch.length === 0) return;
    const targets = batch.map((b) => ({ ...b, target: factTarget(scope, { ...b.input, tier }) }));
    // (Asked once per game and participant in the transaction: see `assertFactWriteAllowed`.)
    for (const { target } of targets) await assertFactWriteAllowed(tx, scope.tenantId, target.gameId, target.participantId);
    const ids = new Set(batch.map((b) => b.id));
    const replacedHere = new Set(batch.flatMap((b) => (b.input.supersedes && ids.has(b.input.supersedes) ? [b.input.supersedes] : [])));
    const earlier = [...new Set(batch.flatMap((b) => (b.input.supersedes && !ids.has(b.input.supersedes) ? [b.input.supersedes] : [])))];
    if (earlier.length > 0 && (await facts.markSupersededAll(tx, tier, scope, earlier)) !== earlier.length) {
      throw new MemoryError('NOT_FOUND', 'the fact named in "supersedes" is not a current fact in your scope');
    }
    const rows: (facts.NewFactRow & { superseded: boolean })[] = [];
    for (const { id, input, vector, target } of targets) {
      rows.push({ ...(await this.sealedFact(tx, scope, id, { ...input, tier }, vector, target)), superseded: replacedHere.has(id) });
    }
    await facts.insertFacts(tx, tier, rows);
  }

  /** A fact's row, its text sealed under the key of its tier's subject (the game, the participant or the NPC). */
  private async sealedFact(tx: Tx, scope: Scope, id: string, input: FactInput, vector: Float32Array, { npcId, spec, gameId, participantId }: ReturnType<typeof factTarget>): Promise<facts.NewFactRow> {
    const subject = spec.keyScope === 'game' ? gameId! : spec.keyScope === 'participant' ? participantId! : npcId;
    const { keyId, key } = await this.keys.forWrite(tx, scope.tenantId, spec.keyScope, subject);
    return {
      id,
      tenantId: scope.tenantId,
      npcId,
      gameId,
      participantId,
      factKey: input.key,
      source: input.source,
      confidence: input.confidence,
      importance: input.importance,
      retention: input.retention,
      supersedes: input.supersedes,
      derivedFrom: input.derivedFrom ?? [],
      keyId,
      ciphertext: sealFact(key, input.tier, scope.tenantId, { id, game_id: gameId, npc_id: npcId, participant_id: participantId }, { value: input.value, summary: input.summary }),
      embedding: toVectorLiteral(vector),
      embedder: this.embedder.id,
    };
  }

  async list(scope: Scope, tier: DurableTier, options: { limit: number; includeHistory?: boolean }): Promise<Memory[]> {
    return inScope(this.db, scope, async (tx) => {
      if (tier === 'episodic') return this.decryptAll(tx, scope.tenantId, await listEpisodes(tx, scope, options.limit), 'episodic');
      return this.decryptAll(tx, scope.tenantId, await facts.listFacts(tx, tier, scope, options), tier);
    });
  }

  async count(scope: Scope, tier: DurableTier): Promise<number> {
    return inScope(this.db, scope, (tx) => facts.countRows(tx, tier, scope));
  }

  /** A memory by id, looked up inside the same scope as a search; 404 when not visible. */
  async get(scope: Scope, id: string): Promise<Memory> {
    return inScope(this.db, scope, async (tx) => {
      const found = await this.find(tx, scope, id);
      if (!found) throw notFound();
      return found.memory;
    });
  }

  /** Scoped top-k similarity search over the tiers the scope can see, nearest first. */
  async search(scope: Scope, query: { text: string; k: number; tiers?: readonly DurableTier[] }): Promise<ScoredMemory[]> {
    const [vector] = await this.embedder.embed([query.text]);
    const literal = toVectorLiteral(vector!);
    const tiers = query.tiers ?? ['episodic', ...FACT_TIERS];
    const statements = tiers.flatMap((tier) => {
      const statement =
        tier === 'episodic'
          ? searchEpisodesStatement(scope, literal, query.k)
          : facts.searchFactsStatement(tier, scope, literal, query.k);
      return statement ? [{ tier, statement }] : [];
    });
    if (statements.length === 0) return [];
    // One round trip for the scope and every tier's query; keys come from the cache.
    const results = await readInScope(this.db, scope, statements.map((s) => s.statement));
    const keys = await this.keysForRows(scope, results.flat() as unknown as { key_id: string }[]);
    const out: ScoredMemory[] = [];
    for (const [i, tierRows] of results.entries()) {
      const tier = statements[i]!.tier;
      for (const r of tierRows) {
        const row = r as unknown as (EpisodeRow | FactRow) & { distance: number | null };
        const m = tier === 'episodic' ? this.toEpisode(keys, scope.tenantId, row as EpisodeRow) : this.toFact(keys, tier, scope.tenantId, row as FactRow);
        // A row with no vector (cleared, or not re-embedded since migration 0005) has a NULL
        // distance: the farthest (2), not Number(null) = 0, the nearest.
        if (m) out.push(Object.assign(m, { distance: row.distance === null ? 2 : Number(row.distance) }));
      }
    }
    // Each tier's rows come nearest first; several tiers are merged.
    return results.length === 1 ? out : out.sort((a, b) => a.distance - b.distance).slice(0, query.k);
  }

  async updateFact(scope: Scope, id: string, patch: facts.FactPatch): Promise<FactMemory> {
    return inScope(this.db, scope, async (tx) => {
      const found = await this.find(tx, scope, id);
      if (!found) throw notFound();
      if (found.tier === 'episodic') throw appendOnly();
      const row = await facts.updateFact(tx, found.tier, scope, id, patch);
      if (!row) throw notFound();
      return this.toFact(await this.keysFor(tx, scope.tenantId, [row]), found.tier, scope.tenantId, row)!;
    });
  }

  async deleteFact(scope: Scope, id: string): Promise<void> {
    await inScope(this.db, scope, async (tx) => {
      const found = await this.find(tx, scope, id);
      if (!found) throw notFound();
      if (found.tier === 'episodic') throw appendOnly();
      if (!(await facts.deleteFact(tx, found.tier, scope, id))) throw notFound();
    });
  }

  async getProcedural(scope: Scope): Promise<Procedural | undefined> {
    const npcId = requireNpc(scope);
    const row = await inScope(this.db, scope, (tx) => latestProcedural(tx, scope.tenantId, npcId));
    return row && toProcedural(row);
  }

  /** The data keys of these rows (loaded through the scoped transaction when not cached). */
  async keysFor(tx: Sql, tenantId: string, rows: readonly { key_id: string }[]): Promise<Map<string, Uint8Array>> {
    return this.keys.load(tx, tenantId, rows.map((r) => r.key_id));
  }

  /**
   * The data keys of rows read by `readInScope` (outside a transaction): from the cache, and any
   * cold ones in one more scoped round trip.
   */
  async keysForRows(scope: Scope, rows: readonly { key_id: string }[]): Promise<Map<string, Uint8Array>> {
    const ids = rows.map((r) => r.key_id);
    if (ids.every((id) => this.keys.cached(id))) return this.keys.pick(ids);
    const cold = [...new Set(ids)].filter((id) => !this.keys.cached(id));
    const [records] = await readInScope(this.db, scope, [this.keys.recordsStatement(scope.tenantId, cold)]);
    return this.keys.pick(ids, await this.keys.absorb(records!));
  }

  private async find(tx: Sql, scope: Scope, id: string): Promise<{ tier: DurableTier; memory: Memory } | undefined> {
    const episode = await getEpisode(tx, scope, id);
    if (episode) {
      const memory = this.toEpisode(await this.keysFor(tx, scope.tenantId, [episode]), scope.tenantId, episode);
      return memory && { tier: 'episodic', memory };
    }
    for (const tier of FACT_TIERS) {
      const row = await facts.getFact(tx, tier, scope, id);
      if (row) {
        const memory = this.toFact(await this.keysFor(tx, scope.tenantId, [row]), tier, scope.tenantId, row);
        return memory && { tier, memory };
      }
    }
    return undefined;
  }

  private async decryptAll(tx: Sql, tenantId: string, rows: (EpisodeRow | FactRow)[], tier: DurableTier): Promise<Memory[]> {
    const keys = await this.keysFor(tx, tenantId, rows);
    const out: Memory[] = [];
    for (const row of rows) {
      const m = tier === 'episodic' ? this.toEpisode(keys, tenantId, row as EpisodeRow) : this.toFact(keys, tier, tenantId, row as FactRow);
      if (m) out.push(m);
    }
    return out;
  }

  /** Opens sealed rows of a tenant under these keys (crypto/sealed-rows.ts); integrity failures are reported by id. */
  opener(tenantId: string, keys: ReadonlyMap<string, Uint8Array>): RowOpener {
    return new RowOpener(tenantId, keys, this.options.onIntegrityFailure);
  }

  /**
   * Opens text sealed under another binding than a row's (working memory, registered secrets,
   * anomalies): undefined, and reported by id, when it fails authentication.
   */
  unseal(key: Uint8Array, sealed: Uint8Array, aad: string, rowId: string): Buffer | undefined {
    try {
      return open(key, sealed, aad);
    } catch {
      this.options.onIntegrityFailure?.(rowId);
      return undefined;
    }
  }

  /** Undefined when the row's key has been destroyed: a shredded row is no memory. */
  private toEpisode(keys: Map<string, Uint8Array>, tenantId: string, row: EpisodeRow): EpisodeMemory | undefined {
    const text = this.opener(tenantId, keys).text('episodic', row);
    if (text === undefined) return undefined;
    return {
      tier: 'episodic',
      id: row.id,
      npcId: row.npc_id,
      gameId: row.game_id,
      roomId: row.room_id,
      participantId: row.participant_id,
      ts: Number(row.ts),
      targeted: row.targeted,
      anonymous: row.anonymous,
      kind: row.kind,
      text,
      source: row.source as Source,
      importance: row.importance,
      createdAt: iso(row.created_at),
    };
  }

  private toFact(keys: Map<string, Uint8Array>, tier: FactTier, tenantId: string, row: FactRow): FactMemory | undefined {
    const body = this.opener(tenantId, keys).fact(tier, row);
    if (!body) return undefined;
    return {
      tier,
      id: row.id,
      npcId: row.npc_id,
      gameId: row.game_id,
      participantId: row.participant_id,
      fact: { key: row.fact_key, value: body.value, summary: body.summary },
      source: row.source as Source,
      confidence: row.confidence,
      importance: row.importance,
      retention: row.retention as RetentionClass,
      supersedes: row.supersedes,
      supersededAt: isoOrNull(row.superseded_at),
      invalidatedAt: isoOrNull(row.invalidated_at),
      derivedFrom: row.derived_from,
      lineage: (row.lineage as Lineage | null) ?? null,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  }
}

/** Where a fact goes, checked against the scope. */
function factTarget(scope: Scope, input: FactInput) {
  const npcId = requireNpc(scope);
  const spec = TIER_TABLES[input.tier];
  const gameId = spec.gameBound ? requireGame(scope) : undefined;
  const participantId = spec.participantBound ? input.participantId : undefined;
  if (spec.participantBound && (!participantId || !scope.participantIds?.includes(participantId))) {
    throw new MemoryError('SCOPE_MISMATCH', 'a social fact needs a participantId that your game token covers');
  }
  if (!spec.participantBound && input.participantId) {
    throw new MemoryError('INVALID_REQUEST', `${input.tier} facts carry no participant; omit participantId`);
  }
  return { npcId, spec, gameId, participantId };
}

function setNpc(tx: Tx, npcId: string): Promise<void> {
  return setLocal(tx, { 'memory.npc': npcId });
}

function replay(previous: { request_hash: string; response: IngestResult }, requestHash: string): IngestResult {
  if (previous.request_hash !== requestHash) {
    throw new MemoryError(
      'IDEMPOTENCY_CONFLICT',
      'this idempotencyKey was already used for a different batch; use a new key for new events',
    );
  }
  return { ...previous.response, replayed: true };
}

function requireGame(scope: Scope): string {
  if (!scope.gameId) {
    throw new MemoryError('GAME_TOKEN_REQUIRED', 'this needs a game token: POST /v1/tokens with your API key to get one');
  }
  return scope.gameId;
}

function requireNpc(scope: Scope): string {
  if (!scope.npcId) throw new MemoryError('INVALID_REQUEST', 'an npc id is required');
  return scope.npcId;
}

const appendOnly = () =>
  new MemoryError('APPEND_ONLY', 'episodic memory is append-only; it expires with its game and cannot be edited');

const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === '23505';
