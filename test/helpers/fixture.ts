import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { toVectorLiteral } from '../../src/memory/embeddings/types.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { createTenant } from '../../src/memory/credentials.js';
import { inScope, type Scope } from '../../src/memory/scope.js';
import { TIER_TABLES, type DurableTier } from '../../src/memory/types.js';
import type { Database } from '../../src/memory/db/types.js';
import { tempDir } from './database.js';

export const GAMES = ['alpha', 'beta'] as const;
export const NPCS = ['npc-mara', 'npc-otto'] as const;
export const PARTICIPANTS = ['part-aaaa1111', 'part-bbbb2222', 'part-cccc3333'] as const;

export interface TenantFixture {
  name: string;
  tenantId: string;
  runtimeKey: string;
  adminKey: string;
}

/** One stored row of the fixture, with the marker its text carries. */
export interface FixtureRow {
  id: string;
  tier: DurableTier;
  tenantId: string;
  gameId?: string;
  npcId: string;
  participantId?: string;
  marker: string;
}

export interface Fixture {
  system: MemorySystem;
  tenants: TenantFixture[];
  rows: FixtureRow[];
  cleanup(): Promise<void>;
}

export async function memorySystemOn(db: Database): Promise<{ system: MemorySystem; cleanup(): Promise<void> }> {
  const keys = await tempDir('keyring');
  const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false });
  return {
    system,
    async cleanup() {
      await system.app.close();
      await keys.remove();
    },
  };
}

/**
 * Two tenants x two games x two NPCs x three participants, with the same game, npc and
 * participant ids in both tenants, so that only the tenant separates some rows. Every row's
 * text carries a unique marker.
 */
export async function buildFixture(db: Database): Promise<Fixture> {
  const { system, cleanup } = await memorySystemOn(db);
  const tenants: TenantFixture[] = [];
  const rows: FixtureRow[] = [];
  for (const name of ['studio-one', 'studio-two']) {
    const keys = await createTenant(db, `${name}-${Math.random().toString(36).slice(2, 8)}`);
    const tenant = { name, ...keys };
    tenants.push(tenant);
    const t = tenants.length;
    for (const gameId of GAMES) {
      const game: Scope = { tenantId: tenant.tenantId, gameId, participantIds: [...PARTICIPANTS], role: 'runtime' };
      const events = NPCS.flatMap((npcId) =>
        PARTICIPANTS.map((participantId) => ({
          gameId,
          roomId: 'library',
          npcId,
          participantId,
          ts: 1_700_000_000,
          targeted: false,
          text: `marker-t${t}-${gameId}-${npcId}-${participantId}-episodic said the safe code is hidden`,
        })),
      );
      const result = await system.service.ingest(game, { idempotencyKey: `fixture-${gameId}-seed`, events });
      result.ids.forEach((id, i) => {
        const e = events[i]!;
        rows.push({ id, tier: 'episodic', tenantId: tenant.tenantId, gameId, npcId: e.npcId, participantId: e.participantId, marker: e.text.split(' ')[0]! });
      });
      for (const npcId of NPCS) {
        const marker = `marker-t${t}-${gameId}-${npcId}-clue`;
        const clue = await system.service.writeFact({ ...game, npcId }, fact('clue', marker));
        rows.push({ id: clue.id, tier: 'clue', tenantId: tenant.tenantId, gameId, npcId, marker });
      }
    }
    for (const npcId of NPCS) {
      const scope: Scope = { tenantId: tenant.tenantId, npcId, participantIds: [...PARTICIPANTS], role: 'runtime' };
      for (const participantId of PARTICIPANTS) {
        const marker = `marker-t${t}-${npcId}-${participantId}-social`;
        const social = await system.service.writeFact(scope, { ...fact('social', marker), participantId });
        rows.push({ id: social.id, tier: 'social', tenantId: tenant.tenantId, npcId, participantId, marker });
      }
      for (const tier of ['lore', 'fragment'] as const) {
        const marker = `marker-t${t}-${npcId}-${tier}`;
        const written = await system.service.writeFact(scope, fact(tier, marker));
        rows.push({ id: written.id, tier, tenantId: tenant.tenantId, npcId, marker });
      }
    }
  }
  return { system, tenants, rows, cleanup };
}

function fact(tier: 'clue' | 'social' | 'lore' | 'fragment', marker: string) {
  return {
    tier,
    key: `${tier}.note`,
    value: `${marker} value`,
    summary: `${marker} the safe code is hidden behind the clock`,
    source: 'player_statement' as const,
    confidence: 0.8,
    importance: 0.6,
    retention: 'permanent' as const,
  };
}

/** Whether a row may be seen from a scope: the rule the policies must implement. */
export function visible(scope: Scope, row: FixtureRow): boolean {
  if (row.tenantId !== scope.tenantId || row.npcId !== scope.npcId) return false;
  const spec = TIER_TABLES[row.tier];
  if (spec.gameBound && row.gameId !== scope.gameId) return false;
  if (spec.participantBound && !scope.participantIds?.includes(row.participantId!)) return false;
  return true;
}

/** Every scope the checks run from: each tenant x (each game or none) x each npc, with one participant. */
export function scopesOf(fixture: Fixture): Scope[] {
  return fixture.tenants.flatMap((t) =>
    [...GAMES, undefined].flatMap((gameId) =>
      NPCS.map((npcId) => ({ tenantId: t.tenantId, gameId, npcId, participantIds: [PARTICIPANTS[0]], role: 'runtime' as const })),
    ),
  );
}

/**
 * Attacks every path at the SQL level, as the runtime role, with statements that carry no
 * WHERE clause of their own: only row-level security stands between a scope and other rows.
 * Returns a list of violations (empty when isolation holds).
 */
export async function sqlIsolationViolations(fixture: Fixture): Promise<string[]> {
  const { db } = fixture.system;
  const violations: string[] = [];
  const probe = toVectorLiteral((await new LocalHashEmbedder().embed(['safe code']))[0]!);
  for (const scope of scopesOf(fixture)) {
    const label = `scope(${scope.tenantId.slice(0, 8)},${scope.gameId ?? '-'},${scope.npcId})`;
    for (const tier of Object.keys(TIER_TABLES) as DurableTier[]) {
      const { table } = TIER_TABLES[tier];
      const tierRows = fixture.rows.filter((r) => r.tier === tier);
      const expected = new Set(tierRows.filter((r) => visible(scope, r)).map((r) => r.id));
      const foreign = tierRows.filter((r) => !visible(scope, r)).map((r) => r.id);
      const seen = await inScope(db, scope, async (tx) => {
        const list = (await tx.query<{ id: string }>(`SELECT id FROM ${table}`)).rows.map((r) => r.id);
        const count = Number((await tx.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
        const search = (await tx.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY embedding <=> $1::vector LIMIT 1000`, [probe])).rows.map((r) => r.id);
        const byId = (await tx.query<{ id: string }>(`SELECT id FROM ${table} WHERE id = ANY ($1::uuid[])`, [foreign])).rows.map((r) => r.id);
        return { list, count, search, byId };
      });
      for (const id of seen.list) if (!expected.has(id)) violations.push(`${label} lists ${tier} row ${id}`);
      if (seen.count !== expected.size) violations.push(`${label} counts ${seen.count} ${tier} rows, expected ${expected.size}`);
      for (const id of seen.search) if (!expected.has(id)) violations.push(`${label} finds ${tier} row ${id} by similarity`);
      for (const id of seen.byId) violations.push(`${label} gets foreign ${tier} row ${id} by id`);
      for (const verb of ['UPDATE', 'DELETE'] as const) {
        const touched = await writeAttempt(db, scope, verb === 'UPDATE'
          ? `UPDATE ${table} SET importance = importance WHERE id = ANY ($1::uuid[])`
          : `DELETE FROM ${table} WHERE id = ANY ($1::uuid[])`, [foreign]);
        if (touched.rows > 0) violations.push(`${label} ${verb}s ${touched.rows} foreign ${tier} rows`);
      }
    }
    // Inserting into another scope must be refused by WITH CHECK (42501).
    for (const target of foreignTargets(fixture, scope)) {
      const outcome = await writeAttempt(db, scope, target.sql, target.params);
      if (outcome.error !== '42501') violations.push(`${label} inserts ${target.what} (outcome ${outcome.error ?? 'accepted'})`);
    }
  }
  return violations;
}

async function writeAttempt(db: Database, scope: Scope, sql: string, params: unknown[]): Promise<{ rows: number; error?: string }> {
  // Always rolled back, so that a loosened policy (mutation test) cannot damage the fixture.
  class Rollback {
    constructor(readonly rows: number) {}
  }
  try {
    await inScope(db, scope, async (tx) => {
      throw new Rollback((await tx.query(sql, params)).rowCount);
    });
    return { rows: 0 };
  } catch (error) {
    if (error instanceof Rollback) return { rows: error.rows };
    const code = (error as { code?: string }).code;
    // 42501: insufficient privilege or RLS violation; both mean nothing was touched.
    if (code === '42501') return { rows: 0, error: code };
    return { rows: 0, error: code ?? 'error' };
  }
}

function foreignTargets(fixture: Fixture, scope: Scope): { what: string; sql: string; params: unknown[] }[] {
  const other = fixture.tenants.find((t) => t.tenantId !== scope.tenantId)!.tenantId;
  const otherGame = GAMES.find((g) => g !== scope.gameId)!;
  const otherNpc = NPCS.find((n) => n !== scope.npcId)!;
  const keyId = fixture.rows[0]!.id; // any uuid: the policy must refuse before the foreign key matters
  const common = `, 'player_statement', 0.5, 0.5, 'permanent', $KEY::uuid, '\\x00'::bytea`;
  const fact = (table: string, cols: string, vals: string) =>
    `INSERT INTO ${table} (id, tenant_id, npc_id, ${cols} fact_key, source, confidence, importance, retention, key_id, ciphertext)
     VALUES (gen_random_uuid(), ${vals} 'k'${common})`.replace('$KEY', `'${keyId}'`);
  const out: { what: string; sql: string; params: unknown[] }[] = [];
  const episodic = (tenant: string, game: string, npc: string) =>
    `INSERT INTO memory.episodic (id, tenant_id, game_id, npc_id, room_id, participant_id, ts, key_id, ciphertext)
     VALUES (gen_random_uuid(), '${tenant}', '${game}', '${npc}', 'r', 'part-aaaa1111', 1, '${keyId}', '\\x00')`;
  out.push({ what: 'episodic into another tenant', sql: episodic(other, scope.gameId ?? 'alpha', scope.npcId!), params: [] });
  out.push({ what: 'episodic into another game', sql: episodic(scope.tenantId, otherGame, scope.npcId!), params: [] });
  out.push({ what: 'episodic for another npc', sql: episodic(scope.tenantId, scope.gameId ?? 'alpha', otherNpc), params: [] });
  out.push({ what: 'a clue into another game', sql: fact('memory.clues', 'game_id,', `'${scope.tenantId}', '${scope.npcId}', '${otherGame}',`), params: [] });
  out.push({ what: 'a social fact for a participant out of scope', sql: fact('memory.social', 'participant_id,', `'${scope.tenantId}', '${scope.npcId}', 'part-bbbb2222',`), params: [] });
  out.push({ what: 'lore of another tenant', sql: fact('memory.lore', '', `'${other}', '${scope.npcId}',`), params: [] });
  out.push({ what: 'a fragment of another npc', sql: fact('memory.fragments', '', `'${scope.tenantId}', '${otherNpc}',`), params: [] });
  out.push({
    what: 'procedural memory',
    sql: `INSERT INTO memory.procedural (tenant_id, npc_id, version, persona, created_by) VALUES ('${scope.tenantId}', '${scope.npcId}', 99, 'x', 'attacker')`,
    params: [],
  });
  return out;
}
