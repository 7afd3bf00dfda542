import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ParticipantId, ScopeId } from '../../../boundary/events.js';
import type { MemoryRouteDeps } from '../deps.js';
import { requireAttribute } from '../../admin/principals.js';
import { scopeOf, requireKey, UUID } from '../auth.js';
import { MemoryError } from '../../errors.js';
import type { TraceStart } from '../../cloning/lineage.js';

const strict = { additionalProperties: false } as const;
const ConsentToken = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' });

const CloneRequest = Type.Object(
  {
    from: ScopeId,
    to: ScopeId,
    /** (Default: false) */
    dryRun: Type.Optional(Type.Boolean()),
    consentTokens: Type.Optional(Type.Array(ConsentToken, { maxItems: 1000 })),
    /** Blocked rows shown per rule in the manifest; (Default: 3) */
    samplePerRule: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  },
  strict,
);
/** A source row id as lineage records it: a uuid, or `procedural:<npc>:<version>`. */
const RowId = Type.String({ maxLength: 200, pattern: '^[\\x21-\\x7e]+$' });
const OperationParams = Type.Object({ operationId: Type.String({ maxLength: 64 }) }, strict);
const TraceQuery = Type.Object({ row: Type.Optional(RowId) }, strict);
const InvalidateRequest = Type.Object({ operationId: Type.Optional(Type.String({ maxLength: 64 })), rowId: Type.Optional(RowId) }, strict);
const RecordsQuery = Type.Object(
  { fromSeq: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$' })), limit: Type.Optional(Type.String({ pattern: '^(?:[1-9][0-9]{0,2}|1000)$' })) },
  strict,
);
const ConsentRequest = Type.Object(
  {
    participantId: ParticipantId,
    sourceNpc: ScopeId,
    targetNpc: ScopeId,
    /** (Default: "clone"; only "clone" consents count for a clone) */
    purpose: Type.Optional(Type.String({ pattern: '^[a-z_]{1,40}$' })),
    /** (Default: 30 days) */
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 3 * 365 * 86400 })),
  },
  strict,
);
const ConsentParams = Type.Object({ consentId: Type.String({ maxLength: 64 }) }, strict);
const RevokeRequest = Type.Object({ participantId: ParticipantId }, strict);

/**
 * Admin routes: cloning (dry run and commit), lineage trace and invalidation, the audit
 * ledger (records, verify, checkpoint), and consent to cloning (recorded by the engine).
 * Every admin action checks its attribute first (admin/principals.ts).
 */
export function adminRoutes(fastify: FastifyInstance, { admin }: MemoryRouteDeps): void {
  // requireAttribute (used by other features' routes too) finds the database here.
  if (!fastify.hasDecorator('memoryAdminDb')) fastify.decorate('memoryAdminDb', admin.db);
  const app = typed(fastify);
  cloningRoutes(app, admin);
  auditRoutes(app, admin);
  consentRoutes(app, admin);
}

const typed = (fastify: FastifyInstance) => fastify.withTypeProvider<TypeBoxTypeProvider>();
type Admin = MemoryRouteDeps['admin'];

/** Cloning (dry run and commit), and lineage: trace and invalidation. */
function cloningRoutes(app: ReturnType<typeof typed>, admin: Admin): void {
  app.post(
    '/v1/clones',
    { schema: { summary: 'Clone one NPC into another, or dry-run it (admin key with "clone" on both NPCs)', body: CloneRequest } },
    async (request, reply) => {
      const { from, to, dryRun, consentTokens, samplePerRule } = request.body;
      const principal = await requireAttribute(request, 'clone', [from, to]);
      const cloneRequest = { tenantId: principal.tenantId, sourceNpc: from, targetNpc: to, actor: principal.actor, consentTokens, samplePerRule };
      if (dryRun) return reply.status(200).send(await admin.cloner.dryRun(cloneRequest));
      return reply.status(201).send(await admin.cloner.commit(cloneRequest));
    },
  );

  app.get(
    '/v1/clones/:operationId/trace',
    { schema: { summary: 'Every row a clone produced, through clones of clones (admin key with "audit")', params: OperationParams } },
    async (request) => {
      const principal = await requireAttribute(request, 'audit');
      return admin.lineages.trace(principal.tenantId, operation(request.params.operationId));
    },
  );

  app.get(
    '/v1/lineage/trace',
    { schema: { summary: 'Every copy of one source row, through clones of clones (admin key with "audit")', querystring: TraceQuery } },
    async (request) => {
      const principal = await requireAttribute(request, 'audit');
      if (!request.query.row) throw new MemoryError('INVALID_REQUEST', 'give ?row=<source row id>');
      return admin.lineages.trace(principal.tenantId, { rowId: request.query.row });
    },
  );

  app.post(
    '/v1/lineage/invalidate',
    { schema: { summary: 'Invalidate every row traced from a clone or a source row (admin key with "invalidate" on every NPC reached)', body: InvalidateRequest } },
    async (request) => {
      const { operationId, rowId } = request.body;
      if ((operationId === undefined) === (rowId === undefined)) {
        throw new MemoryError('INVALID_REQUEST', 'give exactly one of "operationId" or "rowId"');
      }
      const start: TraceStart = operationId !== undefined ? operation(operationId) : { rowId: rowId! };
      const key = requireKey(request);
      // Authorize on the NPCs the trace reaches before anything is written; the write re-checks.
      const trace = await admin.lineages.trace(key.tenantId, start);
      const principal = await requireAttribute(request, 'invalidate', trace.npcs);
      return admin.lineages.invalidate(principal.tenantId, start, principal.actor, new Set(trace.npcs));
    },
  );
}

/** The audit ledger: records, verification, checkpoints. */
function auditRoutes(app: ReturnType<typeof typed>, admin: Admin): void {
  app.get(
    '/v1/audit/records',
    { schema: { summary: 'Audit ledger records in sequence order (admin key with "audit")', querystring: RecordsQuery } },
    async (request) => {
      const principal = await requireAttribute(request, 'audit');
      const records = await admin.ledger.records(principal.tenantId, {
        fromSeq: Number(request.query.fromSeq ?? 1),
        limit: Number(request.query.limit ?? 100),
      });
      return { records };
    },
  );

  app.get(
    '/v1/audit/verify',
    { schema: { summary: 'Verify every link of the ledger and every exported checkpoint (admin key with "audit")' } },
    async (request) => {
      const principal = await requireAttribute(request, 'audit');
      return admin.ledger.verify(principal.tenantId);
    },
  );

  app.post(
    '/v1/audit/checkpoints',
    { schema: { summary: 'Sign the ledger head and export it outside the database (admin key with "audit")' } },
    async (request, reply) => {
      const principal = await requireAttribute(request, 'audit');
      const result = await admin.ledger.exportCheckpoint(principal.tenantId);
      if ('refused' in result) {
        if (result.refused.ok) throw new MemoryError('LEDGER_EMPTY', 'the ledger has no record yet; nothing to checkpoint');
        throw new MemoryError('LEDGER_INVALID', 'the ledger does not verify; fix or investigate it before checkpointing (GET /v1/audit/verify)');
      }
      return reply.status(201).send({ checkpoint: result.checkpoint });
    },
  );
}

/** Consent to cloning, recorded and revoked by the engine with a game token covering the participant. */
function consentRoutes(app: ReturnType<typeof typed>, admin: Admin): void {
  app.post(
    '/v1/consents',
    { schema: { summary: "Record a participant's consent to cloning (game token covering the participant)", body: ConsentRequest } },
    async (request, reply) => {
      const { participantId, sourceNpc, targetNpc, purpose, ttlSeconds } = request.body;
      const result = await admin.consents.record(scopeOf(request), { participantId, sourceNpc, targetNpc, purpose, ttlSeconds: ttlSeconds ?? 30 * 86400 });
      return reply.status(201).send(result);
    },
  );

  app.post(
    '/v1/consents/:consentId/revoke',
    { schema: { summary: "Revoke a participant's consent for good (game token covering the participant)", params: ConsentParams, body: RevokeRequest } },
    async (request, reply) => {
      if (!UUID.test(request.params.consentId)) throw new MemoryError('NOT_FOUND', 'no consent with this id');
      const scope = scopeOf(request);
      await admin.consents.revoke(scope, { consentId: request.params.consentId, participantId: request.body.participantId, actor: 'engine' });
      return reply.status(204).send();
    },
  );
}

function operation(operationId: string): TraceStart {
  if (!UUID.test(operationId)) throw new MemoryError('OPERATION_NOT_FOUND', 'no clone operation with this id in your tenant');
  return { operationId };
}
