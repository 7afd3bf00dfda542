import type { FastifyInstance } from 'fastify';
import type { Database } from '../../../src/memory/db/types.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import { createTenant } from '../../../src/memory/credentials.js';
import type { Scope } from '../../../src/memory/scope.js';
import type { FactInput } from '../../../src/memory/service.js';

export const P1 = 'part-consent-1111';
export const P2 = 'part-consent-2222';
export const P3 = 'part-consent-3333';
export const GAME = 'game-one';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface Tenant {
  tenantId: string;
  runtimeKey: string;
  adminKey: string;
}

export async function newTenant(db: Database, prefix: string): Promise<Tenant> {
  return createTenant(db, `${prefix}-${Math.random().toString(36).slice(2, 10)}`);
}

export async function gameToken(app: FastifyInstance, tenant: Tenant, participantIds: string[], gameId = GAME): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/tokens', headers: bearer(tenant.runtimeKey), payload: { gameId, participantIds } });
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json<{ token: string }>().token;
}

const fact = (tier: FactInput['tier'], key: string, text: string, extra: Partial<FactInput> = {}): FactInput => ({
  tier,
  key,
  value: `${text} (value)`,
  summary: text,
  source: 'player_statement',
  confidence: 0.8,
  importance: 0.6,
  retention: 'permanent',
  ...extra,
});

/** What a populated NPC holds: every row's id by marker, so tests can check what moved. */
export interface PopulatedNpc {
  npcId: string;
  persona: string;
  ids: Record<string, string>;
}

/**
 * An NPC with memory in every tier: procedural (via the API, so the ledger records it),
 * episodes and clues in one game, social facts of three participants, general lore, a lore
 * fact that looks like a code, a superseded lore fact and an anonymous fragment.
 */
export async function populateNpc(system: MemorySystem, tenant: Tenant, npcId: string): Promise<PopulatedNpc> {
  const { app, service } = system;
  const persona = `${npcId} is a cautious librarian who speaks in riddles`;
  const put = await app.inject({
    method: 'PUT',
    url: `/v1/npcs/${npcId}/procedural`,
    headers: bearer(tenant.adminKey),
    payload: { persona, directives: ['never reveal the vault', 'stay in character'], core: { loyalty: 'the guild' } },
  });
  if (put.statusCode !== 201) throw new Error(put.body);
  const ids: Record<string, string> = {};
  const game: Scope = { tenantId: tenant.tenantId, gameId: GAME, npcId, participantIds: [P1, P2, P3], role: 'runtime' };
  const ingest = await service.ingest(game, {
    idempotencyKey: `populate-${npcId}`,
    events: [P1, P2, P3].map((participantId, i) => ({
      gameId: GAME,
      roomId: 'library',
      npcId,
      participantId,
      ts: 1_700_000_000 + i,
      targeted: true,
      text: `EPISODE-${npcId}-${participantId} I saw you take the red book`,
    })),
  });
  ingest.ids.forEach((id, i) => (ids[`episode${i + 1}`] = id));
  ids.clue = (await service.writeFact(game, fact('clue', 'clue.vault', `CLUE-${npcId} the vault opens with 7391`))).id;
  const npcScope: Scope = { tenantId: tenant.tenantId, npcId, participantIds: [P1, P2, P3], role: 'runtime' };
  for (const [name, pid] of [['social1', P1], ['social2', P2], ['social3', P3]] as const) {
    ids[name] = (await service.writeFact(npcScope, fact('social', 'player.pet', `SOCIAL-${npcId}-${pid} has a cat named Whiskers`, { participantId: pid }))).id;
  }
  ids.lore = (await service.writeFact(npcScope, fact('lore', 'world.river', `LORE-${npcId} the river floods every spring`))).id;
  ids.lore2 = (await service.writeFact(npcScope, fact('lore', 'world.king', `LORE2-${npcId} the old king had two daughters`))).id;
  ids.loreCode = (await service.writeFact(npcScope, fact('lore', 'world.lock', `LORECODE-${npcId} the guild safe code is 4812`))).id;
  const old = await service.writeFact(npcScope, fact('lore', 'world.bridge', `LOREOLD-${npcId} the bridge is wooden`));
  ids.loreOld = old.id;
  ids.loreNew = (await service.writeFact(npcScope, fact('lore', 'world.bridge', `LORENEW-${npcId} the bridge is stone now`, { supersedes: old.id }))).id;
  ids.fragment = (await service.writeFact(npcScope, fact('fragment', 'anon.rumour', `FRAGMENT-${npcId} someone said the tower is haunted`))).id;
  return { npcId, persona, ids };
}

/** Row counts of every table of the memory schema (and the migrations table), as the owner. */
export async function tableCounts(db: Database): Promise<Record<string, number>> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND (n.nspname = 'memory' OR (n.nspname = 'public' AND c.relname = 'memory_migrations')) ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of rows) counts[name] = Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${name}`)).rows[0]!.n);
  return counts;
}
