import { describe, expect, it } from 'vitest';
import { ScriptedParticipant } from '../../src/engine/scripted-participant.js';
import { MARA, OSRIC, TOBIAS, expectOk, humanJoins, makeEngine, sample } from './support/engine-fixture.js';

const MINUTE = 60_000;

describe('the library scenario: an emptied room suspends its NPCs', () => {
  it('sends nothing for two NPCs while five players are away for 45 minutes, then resumes them with the duration', async () => {
    const { engine, memory, clock, resumed, outboundErrors } = makeEngine();
    const gameId = await engine.createGame(sample);
    const players = ['Ann', 'Bo', 'Cy', 'Di', 'Ed'].map((name) => humanJoins(engine, gameId, name));
    for (const p of players) expectOk(engine.act(p, gameId, { type: 'move', direction: 'north' }));
    // A human stays in the foyer with Tobias, so other traffic keeps flowing all along.
    const watcher = humanJoins(engine, gameId, 'Fay');
    // A bot stays in the library: scripts do not count as humans.
    const bot = ScriptedParticipant.anonymous(engine, 'Gus');
    bot.join(gameId);
    expectOk(bot.act(gameId, { type: 'move', direction: 'north' }));

    engine.say(players[0]!, gameId, { text: '@Mara what does the verse on the mantel mean?' });
    engine.npcSay(gameId, MARA, 'Whales are rarely found in libraries. Mostly.');
    engine.say(players[1]!, gameId, { text: 'Osric, where did you leave your coat?', target: OSRIC });
    expectOk(engine.act(players[2]!, gameId, { type: 'solve', puzzle: 'whale-shelf', answer: 'moby dick' }));
    await engine.idle();
    expect(memory.callsFor(MARA).length).toBeGreaterThan(0);

    // The five leave through the secret passage; the bot stays behind.
    for (const p of players) expectOk(engine.act(p, gameId, { type: 'move', direction: 'bookcase' }));
    await engine.idle();
    const flush = memory.calls.at(-1);
    expect(flush).toEqual({
      name: 'flushWorkingMemory',
      request: { gameId, roomId: 'reading-room', npcIds: [MARA, OSRIC], reason: 'room_empty' },
    });
    const mark = memory.calls.length;
    expect(engine.npcStatus(gameId, MARA).state).toBe('suspended');

    // 45 minutes pass. The bot chatters in the library, the watcher talks to Tobias in the foyer.
    for (let minute = 0; minute < 45; minute += 1) {
      clock.advance(MINUTE);
      bot.say(gameId, `Is anyone still here, @Mara? (minute ${minute + 1})`);
      engine.say(watcher, gameId, { text: `@Tobias, minute ${minute + 1} of waiting.` });
    }
    // The NPC runtime may not act for them either: that would be inference in an empty room.
    expect(() => engine.npcSay(gameId, OSRIC, 'Hello?')).toThrowError(expect.objectContaining({ code: 'NPC_SUSPENDED' }));
    await engine.idle();

    expect(memory.callsFor(MARA, mark)).toEqual([]);
    expect(memory.callsFor(OSRIC, mark)).toEqual([]);
    expect(memory.eventsFor(TOBIAS, mark)).toHaveLength(45);
    const libraryResumptions = () => resumed.filter((r) => r.roomId === 'reading-room');
    expect(libraryResumptions()).toEqual([]);

    // The players come back.
    for (const p of players) expectOk(engine.act(p, gameId, { type: 'move', direction: 'bookcase' }));
    const duration = 45 * MINUTE;
    expect(libraryResumptions().map((r) => [r.npcId, r.roomId, r.durationMs])).toEqual([
      [MARA, 'reading-room', duration],
      [OSRIC, 'reading-room', duration],
    ]);
    for (const npc of [MARA, OSRIC]) {
      const status = engine.npcStatus(gameId, npc);
      expect(status).toMatchObject({ state: 'active', roomId: 'reading-room' });
      expect(status.lastSuspension?.durationMs).toBe(duration);
    }

    // They hear the room again, emphasis and all.
    engine.say(players[3]!, gameId, { text: '@Mara we found the archive!' });
    await engine.idle();
    const after = memory.callsFor(MARA, mark);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      name: 'ingest',
      events: [
        { npcId: MARA, text: '@Mara we found the archive!', targeted: true },
        { npcId: OSRIC, targeted: false },
      ],
    });
    expect(outboundErrors).toEqual([]);
  });

  it('does not flush NPCs no human has met yet when the game starts', async () => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    await engine.idle();
    expect(memory.calls.map((c) => c.name)).toEqual(['registerSecrets']);
    expect(engine.npcStatus(gameId, MARA).state).toBe('dormant');
  });

  it('suspends a room whose last human leaves the game, and wakes it for the next one', async () => {
    const { engine, memory, clock, resumed } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(engine.npcStatus(gameId, TOBIAS).state).toBe('active');
    engine.leave(ann, gameId);
    await engine.idle();
    expect(memory.calls.at(-1)).toMatchObject({ name: 'flushWorkingMemory', request: { npcIds: [TOBIAS], reason: 'room_empty' } });
    clock.advance(90_000);
    humanJoins(engine, gameId, 'Bo');
    expect(resumed).toMatchObject([{ npcId: TOBIAS, durationMs: 90_000 }]);
  });
});
