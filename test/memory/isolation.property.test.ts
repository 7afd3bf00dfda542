import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { memorySystemOn, visible, type FixtureRow } from '../helpers/fixture.js';
import { createTenant } from '../../src/memory/credentials.js';
import type { MemorySystem } from '../../src/memory/system.js';
import type { Scope } from '../../src/memory/scope.js';
import { DURABLE_TIERS, type DurableTier, type Memory } from '../../src/memory/types.js';

const games = ['g1', 'g2'];
const npcs = ['n1', 'n2'];
const people = ['person-0001', 'person-0002', 'person-0003'];

const scopeArb = fc.record({
  tenant: fc.nat(1),
  game: fc.constantFrom(...games),
  npc: fc.constantFrom(...npcs),
  person: fc.constantFrom(...people),
});
const opArb = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), tier: fc.constantFrom(...DURABLE_TIERS), at: scopeArb }),
  fc.record({ kind: fc.constant('read' as const), how: fc.constantFrom('list', 'search', 'count'), tier: fc.constantFrom(...DURABLE_TIERS), at: scopeArb }),
);

describe('property: random interleavings of writes and reads across scopes', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('never shows a memory outside the reader\'s scope, and finally shows every memory inside it', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 30 }), fc.integer({ min: 1, max: 6 }), async (ops, parallelism) => {
        run += 1;
        const tenants = [await createTenant(database.db, `prop-${run}-a-${Math.random()}`), await createTenant(database.db, `prop-${run}-b-${Math.random()}`)];
        const scopeOf = (at: { tenant: number; game: string; npc: string; person: string }): Scope => ({
          tenantId: tenants[at.tenant]!.tenantId, gameId: at.game, npcId: at.npc, participantIds: [at.person], role: 'runtime',
        });
        const written: FixtureRow[] = [];
        const leaks: string[] = [];
        const check = (scope: Scope, memories: Memory[]) => {
          for (const m of memories) {
            const row = written.find((r) => r.id === m.id);
            if (!row || !visible(scope, row)) leaks.push(`${m.tier} ${m.id} seen from ${JSON.stringify(scope)}`);
          }
        };
        const perform = async (op: (typeof ops)[number], i: number) => {
          const scope = scopeOf(op.at);
          if (op.kind === 'write') {
            const id = await write(system, scope, op.tier, `run${run}-op${i}`);
            written.push({ id, tier: op.tier, tenantId: scope.tenantId, gameId: scope.gameId, npcId: scope.npcId!, participantId: op.at.person, marker: '' });
            return;
          }
          if (op.how === 'list') check(scope, await system.service.list(scope, op.tier, { limit: 1000 }));
          else if (op.how === 'search') check(scope, await system.service.search(scope, { text: 'remember this', k: 100, tiers: [op.tier] }));
          else {
            // A count may run before a concurrent write lands, never above what is visible at the end.
            const n = await system.service.count(scope, op.tier);
            const upper = () => written.filter((r) => r.tier === op.tier && visible(scope, r)).length;
            if (n > upper()) leaks.push(`count ${op.tier} = ${n} > ${upper()} from ${JSON.stringify(scope)}`);
          }
        };
        for (let i = 0; i < ops.length; i += parallelism) {
          await Promise.all(ops.slice(i, i + parallelism).map((op, j) => perform(op, i + j)));
        }
        // Once every write has landed, each scope sees exactly its own rows.
        for (const op of ops) {
          const scope = scopeOf(op.at);
          for (const tier of DURABLE_TIERS) {
            const seen = (await system.service.list(scope, tier, { limit: 1000 })).map((m) => m.id).sort();
            const expected = written.filter((r) => r.tier === tier && visible(scope, r)).map((r) => r.id).sort();
            if (JSON.stringify(seen) !== JSON.stringify(expected)) leaks.push(`final ${tier} from ${JSON.stringify(scope)}`);
          }
        }
        expect(leaks).toEqual([]);
      }),
      { numRuns: 12 },
    );
  });
});

async function write(system: MemorySystem, scope: Scope, tier: DurableTier, marker: string): Promise<string> {
  if (tier === 'episodic') {
    const result = await system.service.ingest(scope, {
      idempotencyKey: `${marker}-batch`,
      events: [{ gameId: scope.gameId!, roomId: 'room', npcId: scope.npcId!, participantId: scope.participantIds![0]!, ts: 1, targeted: false, text: `${marker} remember this` }],
    });
    return result.ids[0]!;
  }
  const fact = await system.service.writeFact(scope, {
    tier,
    participantId: tier === 'social' ? scope.participantIds![0] : undefined,
    key: 'note', value: marker, summary: `${marker} remember this`,
    source: 'player_statement', confidence: 0.5, importance: 0.5, retention: 'permanent',
  });
  return fact.id;
}
