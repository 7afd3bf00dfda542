import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EndGameResponse, RegisterSecretsRequest, RegisterSecretsResponse } from '../../../boundary/lifecycle.js';
import { ParticipantId, ScopeId } from '../../../boundary/events.js';
import { MemoryError } from '../../errors.js';
import { registerSecrets } from '../../consolidation/secrets.js';
import { requireKey } from '../auth.js';
import type { MemoryRouteDeps } from '../deps.js';
import { ErrorBody } from '../schemas.js';

const GameParams = Type.Object({ gameId: ScopeId }, { additionalProperties: false });
const ParticipantParams = Type.Object({ participantId: ParticipantId }, { additionalProperties: false });
const NpcParams = Type.Object({ npcId: ScopeId }, { additionalProperties: false });

export const ErasureReceipt = Type.Object({
  subject: Type.String(),
  erasedAt: Type.String({ format: 'date-time' }),
  removed: Type.Object({
    episodic: Type.Integer(),
    social: Type.Integer(),
    clue: Type.Integer(),
    lore: Type.Integer(),
    fragment: Type.Integer(),
    anomalies: Type.Integer(),
    working: Type.Integer(),
  }),
  keysDestroyed: Type.Integer(),
  receiptHash: Type.String(),
});

const adminOnly = () => new MemoryError('FORBIDDEN', 'this needs an admin API key of the tenant');

/** Game secrets and game end (tenant API key), erasure and anomaly review (admin key). */
export function lifecycleRoutes(fastify: FastifyInstance, { service, lifecycle }: MemoryRouteDeps): void {
  if (!lifecycle) return;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

  app.put(
    '/v1/games/:gameId/secrets',
    {
      schema: {
        summary: "Register a game's secrets for the clue firewall (tenant API key)",
        params: GameParams,
        body: RegisterSecretsRequest,
        response: { 200: RegisterSecretsResponse, ...errors },
      },
    },
    async (request) => {
      const principal = requireKey(request);
      return registerSecrets(service, principal.tenantId, request.params.gameId, request.body.secrets);
    },
  );

  app.post(
    '/v1/games/:gameId/end',
    { schema: { summary: 'End a game: its episodic memory and clues expire now (tenant API key)', params: GameParams, response: { 200: EndGameResponse, ...errors } } },
    async (request) => {
      const principal = requireKey(request);
      const result = await lifecycle.endGame(principal.tenantId, request.params.gameId, `key:${principal.keyId}`);
      request.log.info({ gameId: request.params.gameId }, 'game ended');
      return result;
    },
  );

  app.post(
    '/v1/participants/:participantId/erasure',
    { schema: { summary: 'Erase a participant everywhere and get a receipt (admin key)', params: ParticipantParams, response: { 200: ErasureReceipt, ...errors } } },
    async (request) => {
      const principal = requireKey(request);
      if (principal.role !== 'admin') throw adminOnly();
      return lifecycle.eraseParticipant(principal.tenantId, request.params.participantId, `key:${principal.keyId}`);
    },
  );

  app.get(
    '/v1/npcs/:npcId/anomalies',
    { schema: { summary: 'Poisoning attempts discarded by consolidation, for review (admin key)', params: NpcParams } },
    async (request) => {
      const principal = requireKey(request);
      if (principal.role !== 'admin') throw adminOnly();
      return { anomalies: await lifecycle.listAnomalies(principal.tenantId, request.params.npcId) };
    },
  );
}
