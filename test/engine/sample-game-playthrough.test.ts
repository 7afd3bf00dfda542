import { describe, expect, it } from 'vitest';
import { ScriptedParticipant } from '../../src/engine/scripted-participant.js';
import { WREN, expectOk, makeEngine, sample } from './support/engine-fixture.js';

describe('the sample escape room can be played from start to escape', () => {
  it('lets a team find the key, open the safe, find the secret passage and escape', async () => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    const { token: ann } = engine.sessions.openAnonymous({ displayName: 'Ann' });
    expect(engine.join(ann, gameId).description).toMatch(/^The Foyer\./);
    // A scripted teammate plays along through the same API.
    const bot = ScriptedParticipant.anonymous(engine, 'Bo');
    bot.join(gameId);
    const act = (action: unknown) => expectOk(engine.act(ann, gameId, action));

    act({ type: 'move', direction: 'east' });
    act({ type: 'take', item: 'brass-key' });
    act({ type: 'move', direction: 'west' });
    act({ type: 'move', direction: 'north' });
    expect(engine.act(ann, gameId, { type: 'move', direction: 'west' })).toMatchObject({ ok: false, code: 'DOOR_LOCKED' });
    act({ type: 'unlock', direction: 'west' });
    act({ type: 'move', direction: 'west' });
    expect(engine.npcStatus(gameId, WREN).state).toBe('active');

    expect(engine.act(ann, gameId, { type: 'solve', puzzle: 'study-safe', answer: '1848' })).toMatchObject({ ok: false, code: 'WRONG_ANSWER' });
    act({ type: 'solve', puzzle: 'study-safe', answer: '1847' });
    act({ type: 'take', item: 'gate-key' });
    act({ type: 'take', item: 'ledger' });
    act({ type: 'move', direction: 'east' });

    // The bot walks over and names the book.
    expectOk(bot.act(gameId, { type: 'move', direction: 'north' }));
    expect(bot.act(gameId, { type: 'move', direction: 'bookcase' })).toMatchObject({ ok: false, code: 'NO_EXIT' });
    expectOk(bot.act(gameId, { type: 'solve', puzzle: 'whale-shelf', answer: 'moby-dick' }));

    act({ type: 'move', direction: 'bookcase' });
    expect(engine.act(ann, gameId, { type: 'move', direction: 'north' })).toMatchObject({ ok: false, code: 'DOOR_LOCKED' });
    act({ type: 'unlock', direction: 'north' });
    act({ type: 'move', direction: 'north' });
    expect(engine.whereAmI(ann, gameId)).toBe('courtyard');
    expect(engine.feed(ann, gameId).at(-1)?.text).toBe('Ann has escaped!');

    // The first call of the game registered its secrets, before anything else went out.
    await engine.idle();
    const first = memory.calls[0];
    expect(first?.name).toBe('registerSecrets');
    const secrets = first?.name === 'registerSecrets' ? first.request.secrets.map((s) => s.text) : [];
    expect(secrets).toEqual(expect.arrayContaining(['1847', 'Moby-Dick', 'a long iron key is in the wall safe', 'a brass key is in the Cloakroom']));
  });

  it('leaves what a departing player carried in the room, so the game stays winnable', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const { token: ann } = engine.sessions.openAnonymous();
    const { token: bo } = engine.sessions.openAnonymous();
    engine.join(ann, gameId);
    engine.join(bo, gameId);
    expectOk(engine.act(ann, gameId, { type: 'move', direction: 'east' }));
    expectOk(engine.act(ann, gameId, { type: 'take', item: 'brass-key' }));
    engine.leave(ann, gameId);
    expectOk(engine.act(bo, gameId, { type: 'move', direction: 'east' }));
    expectOk(engine.act(bo, gameId, { type: 'take', item: 'brass-key' }));
  });
});
