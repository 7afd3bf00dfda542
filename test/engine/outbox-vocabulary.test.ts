/**
 * The engine speaks the boundary's words ("room_empty", "item_location"). Calls an older engine
 * kept in its outbox with its own words ("room-empty", "item-location") are rewritten when the
 * database is opened, so a restart after the upgrade delivers them as the memory service expects;
 * what players said is never touched.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openEngineDatabase, type EngineDatabase } from '../../src/engine/store/database.js';
import { DatabaseOutboxStore } from '../../src/engine/outbox/store.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** An engine database that can be opened twice: a native one, or PGlite in a folder. */
async function reopenable(): Promise<() => Promise<EngineDatabase>> {
  if (process.env.DATABASE_URL) {
    const test: TestDatabase = await openTestDatabase({ migrate: false });
    cleanup.push(() => test.drop());
    return () => openEngineDatabase({ url: test.url! });
  }
  const { dir, remove } = await tempDir('engine-vocabulary');
  cleanup.push(remove);
  return () => openEngineDatabase({ dir });
}

describe('the outbox across the vocabulary change', () => {
  it('rewrites kept calls in the engine\'s old words to the boundary\'s and leaves what players said alone', async () => {
    const open = await reopenable();
    const before = await open();
    const calls = [
      { name: 'flushWorkingMemory', request: { gameId: 'g1', roomId: 'hall', npcIds: ['mara'], reason: 'room-empty' } },
      { name: 'registerSecrets', request: { gameId: 'g1', secrets: [{ kind: 'code', text: '1847' }, { kind: 'item-location', text: 'the key is in the safe' }] } },
      { name: 'ingest', events: [{ text: 'the sign says "room-empty" and "item-location"' }] },
    ];
    for (const [i, call] of calls.entries()) {
      await before.query('INSERT INTO engine.outbox (id, game_id, room_id, call, enqueued_at_ms) VALUES ($1, $2, $3, $4, $5)', [i + 1, 'g1', 'hall', JSON.stringify(call), 1]);
    }
    await before.close();

    const after = await open();
    cleanup.push(() => after.close());
    const { pending } = await DatabaseOutboxStore.load(after);
    expect(pending.map((e) => e.call)).toEqual([
      { name: 'flushWorkingMemory', request: { gameId: 'g1', roomId: 'hall', npcIds: ['mara'], reason: 'room_empty' } },
      { name: 'registerSecrets', request: { gameId: 'g1', secrets: [{ kind: 'code', text: '1847' }, { kind: 'item_location', text: 'the key is in the safe' }] } },
      calls[2],
    ]);
  });
});
