import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { harness, type Harness } from './lifecycle/support.js';
import { inScope, type Scope } from '../../src/memory/scope.js';
import type { FactInput } from '../../src/memory/service.js';

// Consolidation writes a run's clues, lore and fragments together (`writeFactsIn`): what it
// writes must be what one write at a time would have written.
let database: TestDatabase;
let h: Harness;
beforeAll(async () => {
  database = await openTestDatabase();
  h = await harness(database.db);
});
afterAll(async () => {
  await h?.cleanup();
  await database?.drop();
});

const clue = (key: string, value: string, supersedes?: string): FactInput => ({
  tier: 'clue',
  key,
  value,
  summary: `The ${key} is ${value}.`,
  source: 'player_statement',
  confidence: 0.9,
  importance: 0.8,
  retention: 'session_only',
  ...(supersedes ? { supersedes } : {}),
});

const vector = () => Float32Array.from({ length: h.system.service.embedder.dimensions }, (_, i) => (i === 0 ? 1 : 0));

async function clues(scope: Scope): Promise<{ id: string; key: string; value: string; superseded: boolean }[]> {
  const rows = await h.system.service.list(scope, 'clue', { limit: 100, includeHistory: true });
  return rows.map((m) => ({ id: m.id, key: (m as { fact: { key: string } }).fact.key, value: (m as { fact: { value: string } }).fact.value, superseded: (m as { supersededAt: string | null }).supersededAt !== null }));
}

describe('facts of one tier written together', () => {
  it('writes them readable, supersedes an earlier fact and writes one replaced in the same batch already superseded', async () => {
    const scope: Scope = { tenantId: h.tenantId, gameId: 'batch-game', npcId: 'npc-mara', role: 'runtime' };
    const earlier = await h.system.service.writeFact(scope, clue('game.code', '1234'));
    const first = randomUUID();
    const second = randomUUID();
    const third = randomUUID();
    await inScope(h.system.db, scope, (tx) =>
      h.system.service.writeFactsIn(tx, scope, 'clue', [
        { id: first, input: clue('game.code', '5678', earlier.id), vector: vector() },
        { id: second, input: clue('game.door', 'north'), vector: vector() },
        { id: third, input: clue('game.code', '9012', first), vector: vector() },
      ]),
    );
    const all = await clues(scope);
    expect(all.find((c) => c.id === earlier.id)).toMatchObject({ value: '1234', superseded: true });
    expect(all.find((c) => c.id === first)).toMatchObject({ value: '5678', superseded: true });
    expect(all.find((c) => c.id === second)).toMatchObject({ value: 'north', superseded: false });
    expect(all.find((c) => c.id === third)).toMatchObject({ value: '9012', superseded: false });
  });

  it('writes nothing when a fact it supersedes is not current in the scope', async () => {
    const scope: Scope = { tenantId: h.tenantId, gameId: 'batch-game-2', npcId: 'npc-mara', role: 'runtime' };
    const other: Scope = { ...scope, gameId: 'batch-game-3' };
    const foreign = await h.system.service.writeFact(other, clue('game.code', '1111'));
    const attempt = inScope(h.system.db, scope, (tx) =>
      h.system.service.writeFactsIn(tx, scope, 'clue', [
        { id: randomUUID(), input: clue('game.door', 'east'), vector: vector() },
        { id: randomUUID(), input: clue('game.code', '2222', foreign.id), vector: vector() },
      ]),
    );
    await expect(attempt).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await clues(scope)).toEqual([]);
    expect(await clues(other)).toEqual([expect.objectContaining({ id: foreign.id, superseded: false })]);
  });

  it('refuses a batch for a game that has ended', async () => {
    const scope: Scope = { tenantId: h.tenantId, gameId: 'batch-game-ended', npcId: 'npc-mara', role: 'runtime' };
    await h.system.service.writeFact(scope, clue('game.code', '3333'));
    const ended = await h.call('POST', '/v1/games/batch-game-ended/end', h.runtimeKey, {});
    expect(ended.status).toBeLessThan(300);
    const attempt = inScope(h.system.db, scope, (tx) => h.system.service.writeFactsIn(tx, scope, 'clue', [{ id: randomUUID(), input: clue('game.door', 'west'), vector: vector() }]));
    await expect(attempt).rejects.toMatchObject({ code: 'GAME_ENDED' });
  });
});

describe('fading at consolidation', () => {
  it('invalidates a slow-decay fact that faded away, at the first consolidation once the time has passed', async () => {
    const scope: Scope = { tenantId: h.tenantId, npcId: 'npc-fader', role: 'runtime' };
    const lore = await h.system.service.writeFact(scope, { tier: 'lore', key: 'world.rumour', value: 'the mill burned', summary: 'The mill burned.', source: 'player_statement', confidence: 0.5, importance: 0.1, retention: 'slow_decay' });
    const current = async () => (await h.system.service.list(scope, 'lore', { limit: 10 })).map((m) => m.id);
    await h.ingest('fade-game-1', [{ npcId: 'npc-fader', participantId: 'part-fader01', text: 'hello there' }]);
    await h.system.jobs.drain();
    expect(await current()).toEqual([lore.id]);
    h.advance(3 * 365 * 24 * 60 * 60 * 1000); // far past its half-life
    await h.ingest('fade-game-2', [{ npcId: 'npc-fader', participantId: 'part-fader01', text: 'hello again' }]);
    await h.system.jobs.drain();
    expect(await current()).toEqual([]);
  });
});
