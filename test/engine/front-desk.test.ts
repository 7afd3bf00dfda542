import { afterAll, describe, expect, it } from 'vitest';
import { FrontDesk } from '../../src/engine/front-desk.js';
import { buildRegistryApp } from '../../src/registry/http-app.js';
import { HttpRegistryClient, InProcessRegistryClient } from '../../src/registry/registry-client.js';
import { MARA, OSRIC, expectOk, humanJoins, makeEngine, registry, sample } from './support/engine-fixture.js';

const notRecognized = { ok: false, code: 'CHARACTER_NOT_RECOGNIZED', message: 'Character not recognized' };

async function desk() {
  const { engine } = makeEngine();
  const gameId = await engine.createGame(sample);
  return { engine, gameId, frontDesk: new FrontDesk(new InProcessRegistryClient(registry), engine) };
}

describe('the front desk resolves an NPC only by its exact canonical full name', () => {
  it('resolves an exact full name to the NPC, the game and the room it is in', async () => {
    const { frontDesk, gameId } = await desk();
    const answer = await frontDesk.visit('Mara Ilse Quenby');
    expect(answer).toEqual({
      ok: true,
      npc: expect.objectContaining({ npcId: MARA, fullName: 'Mara Ilse Quenby' }),
      whereabouts: [{ gameId, roomId: 'reading-room' }],
    });
  });

  it('resolves the three name parts the same way', async () => {
    const { frontDesk } = await desk();
    const answer = await frontDesk.visit({ first: 'Osric', middle: 'Bellamy', last: 'Thorne' });
    expect(answer.ok && answer.npc.npcId).toBe(OSRIC);
  });

  it.each([
    ['a partial name', 'Mara Quenby'],
    ['a first name alone', 'Mara'],
    ['a misspelled name', 'Mara Ilse Quenbie'],
    ['a differently cased name', 'mara ilse quenby'],
    ['a phonetic spelling', 'Marah Ilsa Kwenby'],
    ['a name with extra spaces', ' Mara  Ilse Quenby'],
    ['a prefix of a real name', 'Mar Ilse Quenby'],
  ])('answers "Character not recognized" to %s', async (_kind, name) => {
    const { frontDesk } = await desk();
    expect(await frontDesk.visit(name)).toEqual(notRecognized);
  });

  it.each([
    ['a number', 42],
    ['null', null],
    ['two parts only', { first: 'Mara', last: 'Quenby' }],
    ['parts and extra fields', { first: 'Mara', middle: 'Ilse', last: 'Quenby', fuzzy: true }],
  ])('answers "Character not recognized" to %s', async (_kind, request) => {
    const { frontDesk } = await desk();
    expect(await frontDesk.visit(request)).toEqual(notRecognized);
  });

  it('does not confuse two NPCs whose names differ by one letter', async () => {
    const { frontDesk } = await desk();
    const marta = await frontDesk.visit('Marta Ilse Quenby');
    expect(marta).toMatchObject({ ok: true, npc: { npcId: 'npc-marta-quenby' }, whereabouts: [] });
  });

  it('follows the NPC as it moves, and can be asked about one game', async () => {
    const { engine, frontDesk, gameId } = await desk();
    const other = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    expectOk(engine.act(ann, gameId, { type: 'move', direction: 'north' }));
    expectOk(engine.proposeNpcAction(gameId, MARA, { type: 'move', direction: 'south' }));
    const everywhere = await frontDesk.visit('Mara Ilse Quenby');
    expect(everywhere.ok && everywhere.whereabouts).toEqual([
      { gameId, roomId: 'foyer' },
      { gameId: other, roomId: 'reading-room' },
    ]);
    const inOther = await frontDesk.visit('Mara Ilse Quenby', { gameId: other });
    expect(inOther.ok && inOther.whereabouts).toEqual([{ gameId: other, roomId: 'reading-room' }]);
  });

  describe('through the registry\'s HTTP API', () => {
    it('resolves and refuses exactly as in process', async () => {
      const app = await buildRegistryApp({ registry });
      const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
      afterAll(() => app.close());
      const { engine } = makeEngine();
      await engine.createGame(sample);
      const frontDesk = new FrontDesk(new HttpRegistryClient({ baseUrl }), engine);
      expect((await frontDesk.visit('Wren Adaeze Callow')).ok).toBe(true);
      expect(await frontDesk.visit('Wren Callow')).toEqual(notRecognized);
      expect(await frontDesk.visit('wren adaeze callow')).toEqual(notRecognized);
    });
  });
});
