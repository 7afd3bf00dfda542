import { describe, expect, it } from 'vitest';
import { MARA, OSRIC, expectOk, humanJoins, makeEngine, sample } from './support/engine-fixture.js';

async function inTheReadingRoom() {
  const fixture = makeEngine();
  const gameId = await fixture.engine.createGame(sample);
  const ann = humanJoins(fixture.engine, gameId, 'Ann');
  expectOk(fixture.engine.act(ann, gameId, { type: 'move', direction: 'north' }));
  return { ...fixture, gameId, ann };
}

describe('NPC actions are validated against the location graph', () => {
  it('refuses an NPC move through a locked door and reports a physical failure', async () => {
    const { engine, gameId } = await inTheReadingRoom();
    const result = engine.proposeNpcAction(gameId, OSRIC, { type: 'move', direction: 'west' });
    expect(result).toEqual({ ok: false, code: 'DOOR_LOCKED', failure: 'The iron door is locked.' });
    expect(engine.npcStatus(gameId, OSRIC).roomId).toBe('reading-room');
  });

  it('lets an NPC through the same door once a player has unlocked it', async () => {
    const { engine, memory, gameId, ann } = await inTheReadingRoom();
    expectOk(engine.act(ann, gameId, { type: 'move', direction: 'south' }));
    expectOk(engine.act(ann, gameId, { type: 'move', direction: 'east' }));
    expectOk(engine.act(ann, gameId, { type: 'take', item: 'brass-key' }));
    expectOk(engine.act(ann, gameId, { type: 'move', to: 'foyer' }));
    expectOk(engine.act(ann, gameId, { type: 'move', to: 'reading-room' }));
    expectOk(engine.act(ann, gameId, { type: 'unlock', direction: 'west' }));

    const result = engine.proposeNpcAction(gameId, OSRIC, { type: 'move', direction: 'west' });
    expect(result.ok).toBe(true);
    expect(engine.npcStatus(gameId, OSRIC)).toMatchObject({ roomId: 'study', state: 'suspended' });
    // His working memory of the reading room is flushed as he leaves it (the last call of that room:
    // the outbox keeps order per room, and rooms do not wait for each other).
    await engine.idle();
    expect(memory.calls.filter((c) => c.name === 'flushWorkingMemory' && c.request.roomId === 'reading-room').at(-1)).toEqual({
      name: 'flushWorkingMemory',
      request: { gameId, roomId: 'reading-room', npcIds: [OSRIC], reason: 'npc_moved' },
    });
    // Everyone in the reading room sees the engine's account of it, not the model's.
    expect(engine.feed(ann, gameId).at(-1)?.text).toBe('Osric goes west.');
  });

  it('hides a secret passage from an NPC until it is found', async () => {
    const { engine, gameId, ann } = await inTheReadingRoom();
    expect(engine.proposeNpcAction(gameId, MARA, { type: 'move', direction: 'bookcase' })).toMatchObject({
      ok: false,
      code: 'NO_EXIT',
    });
    expect(engine.proposeNpcAction(gameId, MARA, { type: 'move', to: 'archive' })).toMatchObject({ ok: false, code: 'NO_EXIT' });
    expectOk(engine.act(ann, gameId, { type: 'solve', puzzle: 'whale-shelf', answer: 'Moby Dick' }));
    expectOk(engine.proposeNpcAction(gameId, MARA, { type: 'move', to: 'archive' }));
  });

  it('refuses a move to a room that does not exist as a physical failure', async () => {
    const { engine, gameId } = await inTheReadingRoom();
    expect(engine.proposeNpcAction(gameId, MARA, { type: 'move', to: 'kitchen' })).toMatchObject({
      ok: false,
      code: 'UNKNOWN_ROOM',
    });
  });

  it('refuses an NPC unlocking a door without the key', async () => {
    const { engine, gameId } = await inTheReadingRoom();
    expect(engine.proposeNpcAction(gameId, MARA, { type: 'unlock', direction: 'west' })).toEqual({
      ok: false,
      code: 'NO_KEY',
      failure: 'You have nothing that fits the iron door.',
    });
  });

  it('validates players the same way as NPCs', async () => {
    const { engine, gameId, ann } = await inTheReadingRoom();
    expect(engine.act(ann, gameId, { type: 'move', direction: 'west' })).toEqual(
      engine.proposeNpcAction(gameId, MARA, { type: 'move', direction: 'west' }),
    );
  });

  it('lets an NPC pick up only what is in its room', async () => {
    const { engine, gameId } = await inTheReadingRoom();
    expect(engine.proposeNpcAction(gameId, MARA, { type: 'take', item: 'brass-key' })).toMatchObject({ ok: false, code: 'NOT_HERE' });
  });

  it('refuses any action for an NPC whose room has no human', async () => {
    const { engine, gameId, ann } = await inTheReadingRoom();
    engine.act(ann, gameId, { type: 'move', direction: 'south' });
    expect(() => engine.proposeNpcAction(gameId, MARA, { type: 'look' })).toThrowError(
      expect.objectContaining({ code: 'NPC_SUSPENDED' }),
    );
  });
});
