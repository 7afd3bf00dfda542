import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ScopeId } from '../../../boundary/events.js';
import type { MemoryRouteDeps } from '../deps.js';
import { requireAttribute } from '../../admin/principals.js';
import { appendAudit, type AuditAction } from '../../audit/ledger.js';
import type { ContextRecord } from '../../context/assemble.js';
import { MemoryError } from '../../errors.js';
import { inScope, type Scope } from '../../scope.js';
import type { MemoryService } from '../../service.js';
import { getEpisode } from '../../store/episodes.js';
import { getFact } from '../../store/facts.js';
import type { EpisodeRow, FactRow } from '../../store/rows.js';
import { getContextLog } from '../../store/working.js';
import { SECTION_TIER, TIER_TABLES, type DurableTier, type Section } from '../../types.js';
import type { Sql } from '../../db/types.js';
import { UUID } from '../auth.js';

const strict = { additionalProperties: false } as const;

/**
 * The ledger action of an operator reading remembered text. (Not in ledger.ts's AUDIT_ACTIONS
 * list yet; the ledger stores and verifies any action name of its shape.)
 */
export const MEMORY_READ_ACTION = 'memory_read' as AuditAction;

/** Why a memory named in a context record cannot be shown; never an error. */
export type UnavailableReason = 'game_ended' | 'participant_erased' | 'removed' | 'key_destroyed' | 'integrity_failure';

export type InspectedMemory =
  | {
      id: string;
      tier: DurableTier;
      available: true;
      participantId: string | null;
      /** An episode's text. */
      text?: string;
      /** A fact's key, value and summary. */
      fact?: { key: string; value: string; summary: string };
      supersededAt?: string | null;
      invalidatedAt?: string | null;
    }
  | { id: string; tier: DurableTier; available: false; reason: UnavailableReason };

const Params = Type.Object({ contextId: Type.String({ maxLength: 64 }) }, strict);
const Body = Type.Object({ gameId: ScopeId }, strict);


/**
 * Operator inspection: the remembered text behind a context window's memory ids.
 *
 * `POST /v1/admin/contexts/:contextId/memories { gameId }` needs an admin key whose principal
 * holds "audit" on the context's NPC (runtime keys and game tokens: 403 ADMIN_KEY_REQUIRED; a
 * principal without the attribute: 403 ATTRIBUTE_REQUIRED). The context record is read in the
 * key's own tenant and the given game (a foreign or unknown context: the same 404), then the rows
 * it names are read in the same scope the NPC had (tenant, game, npc, the participants whose
 * social facts it was shown) and opened with the service's keys, as the runtime would. A row of
 * an ended or shredded game, of an erased participant, or whose key is gone is listed as
 * unavailable with a reason. Every read is recorded in the audit ledger, in the same transaction:
 * actor, context id, the memory ids read and those unavailable; never memory text.
 */
export function inspectionRoutes(fastify: FastifyInstance, { service }: MemoryRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/admin/contexts/:contextId/memories',
    {
      schema: {
        summary: "The remembered text of a context window's memories, for an operator (admin key with \"audit\" on the NPC); every read is recorded in the audit ledger",
        params: Params,
        body: Body,
      },
    },
    async (request) => {
      // The credential first: nothing is looked up for a runtime key or a game token.
      const admin = await requireAttribute(request, 'audit');
      const { contextId } = request.params;
      const { gameId } = request.body;
      const notFound = () => new MemoryError('NOT_FOUND', 'No context with this id is visible in your scope.');
      if (!UUID.test(contextId)) throw notFound();
      const tenantId = admin.tenantId;
      const record = (await inScope(service.db, { tenantId, gameId, role: 'runtime' }, (tx) => getContextLog(tx, tenantId, gameId, contextId))) as
        | ContextRecord
        | undefined;
      if (!record) throw notFound();
      await requireAttribute(request, 'audit', record.npcId);

      const wanted: Wanted[] = [];
      const participants = new Set<string>();
      for (const [section, rows] of Object.entries(record.chosen ?? {})) {
        const tier = SECTION_TIER[section as Section];
        if (!tier) continue;
        for (const row of rows) {
          wanted.push({ id: row.id, tier, participantId: row.participantId });
          if (row.participantId) participants.add(row.participantId);
        }
      }
      for (const id of record.reconstruction?.fragmentIds ?? []) wanted.push({ id, tier: 'fragment' });

      const scope: Scope = { tenantId, gameId, npcId: record.npcId, participantIds: [...participants], role: 'runtime' };
      return inScope(service.db, scope, async (tx) => {
        const memories = await readRows(tx, service, scope, wanted);
        const ledger = await appendAudit(tx, {
          tenantId,
          action: MEMORY_READ_ACTION,
          actor: admin.actor,
          subject: contextId,
          details: {
            gameId,
            npcId: record.npcId,
            read: memories.filter((m) => m.available).map((m) => m.id),
            unavailable: memories.filter((m) => !m.available).map((m) => m.id),
          },
        });
        return { contextId, gameId, npcId: record.npcId, memories, ledger: { seq: ledger.seq } };
      });
    },
  );
}

type Wanted = { id: string; tier: DurableTier; participantId?: string };

async function readRows(tx: Sql, service: MemoryService, scope: Scope, wanted: readonly Wanted[]): Promise<InspectedMemory[]> {
  const tenantId = scope.tenantId;
  const found = new Map<string, EpisodeRow | FactRow>();
  for (const { id, tier } of wanted) {
    if (!UUID.test(id)) continue;
    const row = tier === 'episodic' ? await getEpisode(tx, scope, id) : await getFact(tx, tier, scope, id);
    if (row) found.set(id, row);
  }
  const opener = service.opener(tenantId, await service.keysFor(tx, tenantId, [...found.values()]));
  const { rows: games } = await tx.query<{ ended_at: Date | string | null }>('SELECT ended_at FROM memory.games WHERE tenant_id = $1 AND game_id = $2', [
    tenantId,
    scope.gameId,
  ]);
  const ended = !games[0] || games[0].ended_at !== null;
  const erased = async (participantId: string | undefined) => {
    if (!participantId) return false;
    const { rows } = await tx.query('SELECT 1 FROM memory.erased_subjects WHERE tenant_id = $1 AND subject = memory.subject_hash($1, $2)', [tenantId, participantId]);
    return rows.length > 0;
  };

  const out: InspectedMemory[] = [];
  for (const { id, tier, participantId } of wanted) {
    const row = found.get(id);
    if (!row) {
      // Gone with what binds it: its game's end, or its participant's erasure.
      const { gameBound, participantBound } = TIER_TABLES[tier];
      const reason: UnavailableReason = gameBound && ended ? 'game_ended' : participantBound && (await erased(participantId)) ? 'participant_erased' : 'removed';
      out.push({ id, tier, available: false, reason });
      continue;
    }
    const plain = opener.open(tier, row);
    if (typeof plain === 'string') {
      out.push({ id, tier, available: false, reason: plain });
      continue;
    }
    if (tier === 'episodic') {
      out.push({ id, tier, available: true, participantId: row.participant_id, text: plain.toString('utf8') });
    } else {
      const fact = row as FactRow;
      const body = JSON.parse(plain.toString('utf8')) as { value: string; summary: string };
      out.push({
        id,
        tier,
        available: true,
        participantId: fact.participant_id,
        fact: { key: fact.fact_key, value: body.value, summary: body.summary },
        supersededAt: iso(fact.superseded_at),
        invalidatedAt: iso(fact.invalidated_at),
      });
    }
  }
  return out;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
