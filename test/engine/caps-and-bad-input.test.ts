import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { MAX_TEXT_LENGTH } from '../../src/boundary/events.js';
import { MARA, expectOk, humanJoins, makeEngine, registry, sample, sampleCopy } from './support/engine-fixture.js';

const withCode = (code: string) => expect.objectContaining({ code, name: expect.stringMatching(/Error$/) });

/** Registry NPCs not on the sample roster, in a stable order. */
const extraNpcs = [...['cassius-vale', 'delphine-ashgrove', 'eamon-brack', 'ines-marchetti', 'jude-korhonen', 'lark-sato', 'piet-danvers', 'sabine-achterberg', 'marta-quenby']].map((s) => `npc-${s}`);

describe('roster and room caps', () => {
  it('refuses an 11th NPC on a running game with ROSTER_FULL', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    // The sample has 4; six more make 10, spread so no room passes 6.
    const rooms = ['cloakroom', 'cloakroom', 'study', 'study', 'archive', 'courtyard'];
    for (const [i, room] of rooms.entries()) await engine.addNpc(gameId, extraNpcs[i]!, room, 'A visitor.');
    await expect(engine.addNpc(gameId, extraNpcs[6]!, 'archive', 'One too many.')).rejects.toThrowError(withCode('ROSTER_FULL'));
  });

  it('refuses a 7th NPC placed in a room with ROOM_NPC_CAP', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    // The reading room starts with 2.
    for (const id of extraNpcs.slice(0, 4)) await engine.addNpc(gameId, id, 'reading-room', 'A reader.');
    await expect(engine.addNpc(gameId, extraNpcs[4]!, 'reading-room', 'A 7th.')).rejects.toThrowError(withCode('ROOM_NPC_CAP'));
  });

  it('refuses a 7th NPC walking into a room with a physical failure', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    for (const id of extraNpcs.slice(0, 4)) await engine.addNpc(gameId, id, 'reading-room', 'A reader.');
    humanJoins(engine, gameId, 'Ann'); // wakes Tobias in the foyer
    expect(engine.proposeNpcAction(gameId, 'npc-tobias-fenn', { type: 'move', direction: 'north' })).toEqual({
      ok: false,
      code: 'ROOM_NPC_CAP',
      failure: 'The Reading Room is too crowded to enter.',
    });
  });

  it('refuses a 9th participant joining a room with ROOM_FULL', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    for (let i = 0; i < 8; i += 1) humanJoins(engine, gameId, `P${i}`);
    const { token } = engine.sessions.openAnonymous();
    expect(() => engine.join(token, gameId)).toThrowError(withCode('ROOM_FULL'));
  });

  it('refuses a 9th participant walking into a full room with a physical failure', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const tokens = Array.from({ length: 8 }, (_, i) => humanJoins(engine, gameId, `P${i}`));
    for (const t of tokens) expectOk(engine.act(t, gameId, { type: 'move', direction: 'north' }));
    const ninth = humanJoins(engine, gameId, 'P8');
    expect(engine.act(ninth, gameId, { type: 'move', direction: 'north' })).toMatchObject({ ok: false, code: 'ROOM_FULL' });
  });

  it('refuses an NPC that is not in the name registry with UNKNOWN_NPC', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    await expect(engine.addNpc(gameId, 'npc-nobody', 'foyer', 'Who?')).rejects.toThrowError(withCode('UNKNOWN_NPC'));
    const def = sampleCopy();
    def.npcs[0]!.npcId = 'npc-nobody';
    await expect(engine.createGame(def)).rejects.toThrowError(
      expect.objectContaining({ code: 'UNKNOWN_NPC', details: { path: '/npcs/0/npcId' } }),
    );
  });

  it('refuses the same NPC twice on a roster', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    await expect(engine.addNpc(gameId, MARA, 'foyer', 'Again.')).rejects.toThrowError(withCode('NPC_ALREADY_ON_ROSTER'));
  });

  it('refuses an unknown room with UNKNOWN_ROOM', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    await expect(engine.addNpc(gameId, extraNpcs[0]!, 'ballroom', 'Dancing.')).rejects.toThrowError(withCode('UNKNOWN_ROOM'));
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(engine.act(ann, gameId, { type: 'move', to: 'ballroom' })).toMatchObject({ ok: false, code: 'UNKNOWN_ROOM' });
  });
});

describe('malformed input', () => {
  it.each([
    ['a bare string', 'hello'],
    ['null', null],
    ['no text', {}],
    ['empty text', { text: '' }],
    ['only whitespace', { text: '  \n\t ' }],
    ['a number for text', { text: 42 }],
    ['a control character', { text: 'hi\u0000there' }],
    ['an escape sequence', { text: '\u001b[31mred' }],
    ['text over the limit', { text: 'x'.repeat(MAX_TEXT_LENGTH + 1) }],
    ['an extra field', { text: 'hi', typingMs: 120 }],
    ['a malformed target', { text: 'hi', target: '../../etc' }],
  ])('refuses a message that is %s with INVALID_MESSAGE', async (_kind, message) => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    const seq = engine.feed(ann, gameId).at(-1)?.seq;
    expect(() => engine.say(ann, gameId, message)).toThrowError(withCode('INVALID_MESSAGE'));
    expect(engine.feed(ann, gameId).at(-1)?.seq).toBe(seq);
    await engine.idle();
    expect(memory.boundaryEvents).toEqual([]);
  });

  it('accepts the longest allowed message and multi-line text', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(engine.say(ann, gameId, { text: 'x'.repeat(MAX_TEXT_LENGTH) }).text).toHaveLength(MAX_TEXT_LENGTH);
    expect(engine.say(ann, gameId, { text: 'line one\nline two' }).kind).toBe('say');
  });

  it('refuses a target that is not in the room with NPC_NOT_IN_ROOM', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(() => engine.say(ann, gameId, { text: 'hi', target: MARA })).toThrowError(withCode('NPC_NOT_IN_ROOM'));
  });

  it.each([
    ['no type', {}],
    ['an unknown type', { type: 'teleport', to: 'courtyard' }],
    ['a move with both direction and room', { type: 'move', direction: 'north', to: 'foyer' }],
    ['a solve without an answer', { type: 'solve', puzzle: 'study-safe' }],
    ['an item id with spaces', { type: 'take', item: 'brass key' }],
  ])('refuses an action with %s with INVALID_ACTION', async (_kind, action) => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(() => engine.act(ann, gameId, action)).toThrowError(withCode('INVALID_ACTION'));
  });

  it('refuses unknown games, unknown sessions and ended games with their codes', async () => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expect(() => engine.say(ann, 'g-nope', { text: 'hi' })).toThrowError(withCode('UNKNOWN_GAME'));
    expect(() => engine.say('not-a-token', gameId, { text: 'hi' })).toThrowError(withCode('INVALID_SESSION'));
    const { token } = engine.sessions.openAnonymous();
    expect(() => engine.say(token, gameId, { text: 'hi' })).toThrowError(withCode('NOT_IN_GAME'));
    expect(() => engine.join(ann, gameId)).toThrowError(withCode('ALREADY_IN_GAME'));
    engine.endGame(gameId);
    expect(() => engine.say(ann, gameId, { text: 'hi' })).toThrowError(withCode('GAME_ENDED'));
    await engine.idle();
    expect(memory.calls.at(-1)).toEqual({ name: 'endGame', request: { gameId } });
  });

  it('throws EngineError instances whose messages say what to do next', async () => {
    const { engine } = makeEngine();
    try {
      engine.join('nope', 'g-nope');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(EngineError);
      expect((e as EngineError).message).toMatch(/log in or start a new session/);
    }
    void registry;
  });
});
