import { createHash, randomUUID } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer';
import type { Database, Tx } from '../db/types.js';
import type { DataKeys } from '../crypto/data-keys.js';
import { inScope } from '../scope.js';
import { RowOpener, sealText } from '../crypto/sealed-rows.js';
import { MemoryError } from '../errors.js';
import { COPIED_TIERS, EXCLUDED_TIERS, TIER_TABLES, type CopiedTier as CopyTier, type ExcludedTier, type Lineage } from '../types.js';
import { appendAudit, canonicalJson } from '../audit/ledger.js';
import { consentInputs, type ConsentStatus, type ConsentTokens } from './consent.js';
import { looksLikeClue, redactedPreview, unopenedPreview } from './redact.js';
import * as store from './store.js';

/**
 * Cloning NPC-A into NPC-B (DESIGN.md section 6, seed 000 "Safe Cloning Command Contract").
 *
 * Per tier: procedural copied (as B's next version); lore copied; player-specific social facts
 * copied only for participants with a verified consent token; game clues, episodes and
 * anonymous fragments excluded. Fragments are excluded because they are reachable only through
 * uncertain reconstruction of anonymous speakers, and lore is by definition the part of social
 * memory a clone may copy: a fragment is neither.
 *
 * One pipeline, `plan`, decides every row; a dry run runs it in a read-only transaction and
 * writes nothing but its ledger record; a commit runs it and then writes, in one transaction
 * with its ledger record. The pipeline opens (decrypts) only rows it will copy: clues, episodes,
 * fragments and unconsented social facts are counted and named, never decrypted; the admin
 * role cannot even unwrap their keys (0004's policies).
 */
export const TOOL_VERSION = 'npc-memory/clone@1.0.0';

export type BlockRule =
  | `${ExcludedTier}_excluded`
  | 'not_current'
  | 'no_consent'
  | `consent_${Exclude<ConsentStatus, 'valid'>}`
  | 'looks_like_clue'
  | 'key_destroyed'
  | 'integrity_failure';

export type ManifestTier = 'procedural' | 'lore' | 'social' | 'clue' | 'episodic' | 'fragment';

export interface BlockedSample {
  tier: ManifestTier;
  id: string;
  rule: BlockRule;
  gameId?: string;
  preview: string;
}

export interface CloneManifest {
  mode: 'dry_run' | 'commit';
  operationId: string;
  tenantId: string;
  source: string;
  target: string;
  toolVersion: string;
  actor: string;
  at: string;
  tokens: { estimated: number; byTier: { procedural: number; lore: number; social: number }; tokenizer: string };
  cleared: { procedural: number; lore: number; social: number; total: number };
  blocked: { byRule: Partial<Record<BlockRule, number>>; byTier: Partial<Record<ManifestTier, number>>; total: number };
  consent: { tokensChecked: number; byStatus: Partial<Record<ConsentStatus, number>>; participantsConsented: number };
  sample: BlockedSample[];
  /** After a commit: what was written. */
  written?: { procedural: { npcId: string; version: number } | null; lore: number; social: number };
}

export interface CloneRequest {
  tenantId: string;
  sourceNpc: string;
  targetNpc: string;
  /** Who authorized it (lineage `actor`, ledger `actor`). */
  actor: string;
  /** Tokens offered with the request, in addition to those recorded for the source NPC. */
  consentTokens?: readonly string[];
  /** Blocked rows shown per rule. (Default: 3) */
  samplePerRule?: number;
}

interface CopyItem {
  tier: CopyTier;
  row: store.SourceFactRow;
  body: Buffer;
}

interface Plan {
  procedural?: store.SourceProcedural;
  copies: CopyItem[];
  consented: string[];
  manifest: Omit<CloneManifest, 'mode' | 'operationId' | 'at'>;
}

const SAMPLE_CAP = 30;
const PARTICIPANT = /^[A-Za-z0-9_-]{8,128}$/;

export class Cloner {
  constructor(
    private readonly db: Database,
    private readonly keys: DataKeys,
    private readonly consents: ConsentTokens,
  ) {}

  /** The whole pipeline, writing nothing but its ledger record. */
  async dryRun(request: CloneRequest): Promise<{ manifest: CloneManifest; ledger: { seq: number; hash: string } }> {
    checkRequest(request);
    const plan = await inScope(this.db, this.sourceScope(request), async (tx) => {
      // Read-only from here on: a dry run that tried to write would fail, not write.
      await tx.query('SET TRANSACTION READ ONLY');
      return this.plan(tx, request);
    });
    const manifest: CloneManifest = { mode: 'dry_run', operationId: randomUUID(), at: new Date().toISOString(), ...plan.manifest };
    const ledger = await inScope(this.db, { tenantId: request.tenantId, role: 'admin' }, (tx) =>
      appendAudit(tx, ledgerEntry('clone_dry_run', manifest)),
    );
    return { manifest, ledger };
  }

  /** The same pipeline, then the writes, the lineage index and the ledger record: all or nothing. */
  async commit(request: CloneRequest): Promise<{ manifest: CloneManifest; ledger: { seq: number; hash: string } }> {
    checkRequest(request);
    for (let attempt = 1; ; attempt++) {
      try {
        return await inScope(this.db, this.sourceScope(request), (tx) => this.commitIn(tx, request));
      } catch (error) {
        // A concurrent writer took the target's next procedural version: run again.
        if ((error as { code?: string }).code === '23505' && attempt < 3) continue;
        throw error;
      }
    }
  }

  private async commitIn(tx: Tx, request: CloneRequest): Promise<{ manifest: CloneManifest; ledger: { seq: number; hash: string } }> {
    const plan = await this.plan(tx, request);
    const operationId = randomUUID();
    const at = new Date().toISOString();
    const { tenantId, sourceNpc, targetNpc, actor } = request;
    const lineage = (sourceRowId: string): Lineage => ({ sourceNpcId: sourceNpc, sourceRowId, operationId, actor, toolVersion: TOOL_VERSION, at });
    const lineageRows: store.LineageRow[] = [];
    await store.setNpcScope(tx, targetNpc, plan.consented);

    let procedural: { npcId: string; version: number } | null = null;
    if (plan.procedural) {
      const sourceRowId = proceduralRowId(sourceNpc, plan.procedural.version);
      const version = await store.insertClonedProcedural(tx, {
        tenantId,
        npcId: targetNpc,
        source: plan.procedural,
        createdBy: actor,
        lineage: lineage(sourceRowId),
      });
      procedural = { npcId: targetNpc, version };
      lineageRows.push({ operation_id: operationId, tier: 'procedural', row_id: proceduralRowId(targetNpc, version), npc_id: targetNpc, participant_id: null, source_npc: sourceNpc, source_row_id: sourceRowId });
    }
    const written = { procedural, lore: 0, social: 0 };
    for (const item of plan.copies) {
      const participantId = item.tier === 'social' ? item.row.participant_id! : undefined;
      const { keyId, key } =
        item.tier === 'social'
          ? await this.keys.forWrite(tx, tenantId, 'participant', participantId!)
          : await this.keys.forWrite(tx, tenantId, 'npc', targetNpc);
      const id = randomUUID();
      await store.insertClonedFact(tx, item.tier, {
        id,
        tenantId,
        npcId: targetNpc,
        participantId,
        source: item.row,
        keyId,
        ciphertext: sealText(key, item.tier, tenantId, { id, game_id: null, npc_id: targetNpc, participant_id: participantId }, item.body.toString('utf8')),
        lineage: lineage(item.row.id),
      });
      written[item.tier]++;
      lineageRows.push({ operation_id: operationId, tier: item.tier, row_id: id, npc_id: targetNpc, participant_id: participantId ?? null, source_npc: sourceNpc, source_row_id: item.row.id });
    }
    const manifest: CloneManifest = { mode: 'commit', operationId, at, ...plan.manifest, written };
    await store.insertOperation(tx, { tenantId, operationId, sourceNpc, targetNpc, actor, toolVersion: TOOL_VERSION, manifest });
    await store.insertLineageRows(tx, tenantId, lineageRows);
    const ledger = await appendAudit(tx, ledgerEntry('clone_commit', manifest));
    return { manifest, ledger };
  }

  private sourceScope(request: CloneRequest) {
    return { tenantId: request.tenantId, npcId: request.sourceNpc, participantIds: [], role: 'admin' as const };
  }

  /** Decides every row of the source NPC. Reads only; runs in the source's admin scope. */
  private async plan(tx: Tx, request: CloneRequest): Promise<Plan> {
    const { tenantId, sourceNpc } = request;
    const perRule = request.samplePerRule ?? 3;
    // Consent first: it decides which participant keys the transaction may unwrap at all.
    const consent = await this.consent(tx, request);
    await store.setNpcScope(tx, sourceNpc, [...consent.consented]);

    const procedural = await store.currentProcedural(tx, tenantId, sourceNpc);
    // What the clone contract copies and what it leaves, tier by tier (TIER_TABLES' `clone`).
    const facts = new Map<CopyTier, store.SourceFactRow[]>();
    for (const tier of COPIED_TIERS) facts.set(tier, await store.sourceFacts(tx, tier, tenantId, sourceNpc));
    const excluded = new Map<ExcludedTier, { count: number; sample: store.ExcludedRow[] }>();
    for (const tier of EXCLUDED_TIERS) excluded.set(tier, await store.excludedRows(tx, tier, tenantId, sourceNpc, perRule));
    const held = [...facts.values()].reduce((n, rows) => n + rows.length, 0) + [...excluded.values()].reduce((n, x) => n + x.count, 0);
    if (!procedural && held === 0) {
      throw new MemoryError('SOURCE_NOT_FOUND', `NPC "${sourceNpc}" has no memory in your tenant; nothing to clone`);
    }

    const blocked = new Blocked(perRule);
    for (const [tier, rows] of excluded) blocked.excluded(tier, `${tier}_excluded`, TIER_TABLES[tier].noun, rows);
    const copies: CopyItem[] = [];
    const tokensByTier = { procedural: 0, lore: 0, social: 0 };
    for (const [tier, rows] of facts) {
      for (const row of rows) {
        const copy = await this.consider(tx, request, tier, row, consent, blocked);
        if (!copy) continue;
        tokensByTier[tier] += copy.tokens;
        copies.push(copy.item);
      }
    }
    if (procedural) tokensByTier.procedural = countTokens([procedural.persona, ...procedural.directives, JSON.stringify(procedural.core)].join('\n'));
    const cleared = { procedural: procedural ? 1 : 0, lore: copies.filter((c) => c.tier === 'lore').length, social: copies.filter((c) => c.tier === 'social').length };
    return {
      procedural,
      copies,
      consented: [...consent.consented],
      manifest: {
        tenantId,
        source: sourceNpc,
        target: request.targetNpc,
        toolVersion: TOOL_VERSION,
        actor: request.actor,
        tokens: { estimated: tokensByTier.procedural + tokensByTier.lore + tokensByTier.social, byTier: tokensByTier, tokenizer: 'gpt-tokenizer (o200k_base)' },
        cleared: { ...cleared, total: cleared.procedural + cleared.lore + cleared.social },
        blocked: blocked.summary(),
        consent: { tokensChecked: consent.tokens.length, byStatus: consent.byStatus, participantsConsented: consent.consented.size },
        sample: blocked.sample,
      },
    };
  }

  /** Every consent token recorded for the source NPC or sent with the request, checked. */
  private async consent(tx: Tx, { tenantId, sourceNpc, targetNpc, consentTokens }: CloneRequest): Promise<Consent> {
    const stored = await consentInputs(tx, tenantId, sourceNpc);
    const tokens = [...new Set([...stored.tokens, ...(consentTokens ?? [])])];
    const consent: Consent = { tokens, byStatus: {}, consented: new Set(), refusals: new Map() };
    for (const token of tokens) {
      const check = await this.consents.check(token, { tenantId, sourceNpc, targetNpc, revoked: stored.revoked });
      consent.byStatus[check.status] = (consent.byStatus[check.status] ?? 0) + 1;
      const pid = check.claims?.pid;
      if (check.status === 'valid' && pid && PARTICIPANT.test(pid)) consent.consented.add(pid);
      else if (pid && !consent.refusals.has(pid)) consent.refusals.set(pid, check.status);
    }
    return consent;
  }

  /** One lore or social fact: copied (opened, with its token count), or blocked by the first rule it meets. */
  private async consider(tx: Tx, { tenantId, sourceNpc }: CloneRequest, tier: CopyTier, row: store.SourceFactRow, consent: Consent, blocked: Blocked): Promise<{ item: CopyItem; tokens: number } | undefined> {
    const unopened = (rule: BlockRule, what: string, why: string) => blocked.add(tier, rule, { id: row.id, preview: unopenedPreview(what, row.fact_key, why) });
    if (row.superseded_at || row.invalidated_at) return unopened('not_current', `${tier} fact`, 'superseded or invalidated, not opened');
    if (tier === 'social' && !consent.consented.has(row.participant_id!)) {
      const refusal = consent.refusals.get(row.participant_id!);
      return unopened(refusal ? `consent_${refusal as Exclude<ConsentStatus, 'valid'>}` : 'no_consent', 'player-specific fact', 'no valid consent, not opened');
    }
    const key = await this.keys.forRead(tx, tenantId, row.key_id);
    if (!key) return unopened('key_destroyed', `${tier} fact`, 'its key was destroyed');
    const body = new RowOpener(tenantId, new Map([[row.key_id, key]])).open(tier, { ...row, game_id: null, npc_id: sourceNpc });
    if (typeof body === 'string') return unopened('integrity_failure', `${tier} fact`, 'ciphertext failed authentication');
    const { value, summary } = JSON.parse(body.toString('utf8')) as { value: string; summary: string };
    if (looksLikeClue(`${value}\n${summary}`)) return blocked.add(tier, 'looks_like_clue', { id: row.id, preview: `${row.fact_key}: ${redactedPreview(summary)}` });
    return { item: { tier, row, body }, tokens: countTokens(`${row.fact_key}: ${value}\n${summary}`) };
  }
}

/** What the consent tokens said: who consented, who was refused and why, counts by status. */
interface Consent {
  tokens: string[];
  byStatus: Partial<Record<ConsentStatus, number>>;
  consented: Set<string>;
  refusals: Map<string, ConsentStatus>;
}

/** The blocked rows of a plan, counted by rule and tier, with a few shown per rule (never more than 30). */
class Blocked {
  readonly byRule: Partial<Record<BlockRule, number>> = {};
  readonly byTier: Partial<Record<ManifestTier, number>> = {};
  readonly sample: BlockedSample[] = [];

  constructor(private readonly perRule: number) {}

  add(tier: ManifestTier, rule: BlockRule, shown: Omit<BlockedSample, 'tier' | 'rule'>): undefined {
    this.#count(tier, rule, 1);
    if (this.sample.filter((x) => x.rule === rule).length < this.perRule && this.sample.length < SAMPLE_CAP) this.sample.push({ tier, rule, ...shown });
    return undefined;
  }

  /** A tier the clone contract excludes: counted whole, a few rows shown, none opened. */
  excluded(tier: ExcludedTier, rule: BlockRule, kind: string, { count, sample }: { count: number; sample: store.ExcludedRow[] }): void {
    if (count === 0) return;
    this.#count(tier, rule, count);
    for (const r of sample.slice(0, this.perRule)) {
      if (this.sample.length >= SAMPLE_CAP) break;
      this.sample.push({ tier, rule, id: r.id, ...(r.game_id ? { gameId: r.game_id } : {}), preview: unopenedPreview(kind, r.fact_key, 'excluded by the clone contract, not opened') });
    }
  }

  summary(): CloneManifest['blocked'] {
    return { byRule: this.byRule, byTier: this.byTier, total: Object.values(this.byRule).reduce((a, b) => a + (b ?? 0), 0) };
  }

  #count(tier: ManifestTier, rule: BlockRule, n: number): void {
    this.byRule[rule] = (this.byRule[rule] ?? 0) + n;
    this.byTier[tier] = (this.byTier[tier] ?? 0) + n;
  }
}

/** The lineage-index id of a procedural version. */
export const proceduralRowId = (npcId: string, version: number) => `procedural:${npcId}:${version}`;

function checkRequest(request: CloneRequest): void {
  if (request.sourceNpc === request.targetNpc) {
    throw new MemoryError('SAME_NPC', 'the source and target NPC are the same; clone into a new NPC id');
  }
}

/** What the ledger keeps of a manifest: counts and ids, and a hash of the whole manifest. */
function ledgerEntry(action: 'clone_dry_run' | 'clone_commit', m: CloneManifest) {
  return {
    tenantId: m.tenantId,
    action,
    actor: m.actor,
    subject: `npc:${m.source}->npc:${m.target}`,
    details: {
      operationId: m.operationId,
      toolVersion: m.toolVersion,
      cleared: m.cleared,
      blocked: m.blocked.byRule,
      tokens: m.tokens.estimated,
      consentTokens: m.consent.byStatus,
      ...(m.written ? { written: m.written } : {}),
      manifestSha256: createHash('sha256').update(canonicalJson(m)).digest('hex'),
    },
  };
}
