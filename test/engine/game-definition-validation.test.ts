import { describe, expect, it } from 'vitest';
import { GameDefinitionError, loadGameDefinition, parseGameDefinition } from '../../src/engine/game-definition/validate.js';
import type { GameDefinition } from '../../src/engine/game-definition/schema.js';
import { registry, sample, sampleCopy } from './support/engine-fixture.js';

/** The problems a definition is refused with; fails the test if it is accepted. */
function problemsOf(def: unknown) {
  try {
    parseGameDefinition(def);
  } catch (e) {
    expect(e).toBeInstanceOf(GameDefinitionError);
    expect((e as GameDefinitionError).code).toBe('INVALID_GAME_DEFINITION');
    return (e as GameDefinitionError).problems;
  }
  throw new Error('the definition was accepted');
}

function bent(change: (def: GameDefinition) => void): GameDefinition {
  const def = sampleCopy();
  change(def);
  return def;
}

const extraNpc = (n: number, startRoom = 'archive') => ({ npcId: `npc-extra-${n}`, startRoom, persona: 'An extra.' });

describe('the sample game', () => {
  it('loads and is valid', () => {
    expect(parseGameDefinition(sampleCopy())).toEqual(sample);
  });

  it('has four or more rooms, a locked door, a safe with a code and a secret passage out of the library', () => {
    expect(sample.rooms.length).toBeGreaterThanOrEqual(4);
    expect(sample.doors.some((d) => d.locked && d.opensWith && 'item' in d.opensWith)).toBe(true);
    const safe = sample.puzzles.find((p) => p.id === 'study-safe');
    expect(safe).toMatchObject({ kind: 'code', solution: expect.stringMatching(/^\d+$/) });
    const passage = sample.doors.find((d) => d.hidden);
    const library = sample.rooms.find((r) => r.id === 'reading-room');
    expect(library?.exits.some((e) => e.door === passage?.id)).toBe(true);
  });

  it('casts three or more NPCs with personas, every one of them in the name registry', () => {
    expect(sample.npcs.length).toBeGreaterThanOrEqual(3);
    for (const npc of sample.npcs) {
      expect(npc.persona.length).toBeGreaterThan(40);
      expect(registry.getNpc(npc.npcId)).toBeDefined();
    }
  });
});

describe('a malformed game definition is refused with a pointer to the field', () => {
  it.each<[string, unknown, string]>([
    ['not an object', 42, ''],
    ['an unknown top-level field', { ...sampleCopy(), difficulty: 'hard' }, ''],
    ['a wrong format version', { ...sampleCopy(), formatVersion: 2 }, '/formatVersion'],
    ['a room id with capitals', bent((d) => (d.rooms[1]!.id = 'Cloakroom')), '/rooms/1/id'],
    ['a misspelt exit field', bent((d) => Object.assign(d.rooms[0]!.exits[0]!, { too: 'x' })), '/rooms/0/exits/0'],
    ['an item that is not portable-or-not', bent((d) => Object.assign(d.items[0]!, { portable: 'yes' })), '/items/0/portable'],
    ['an empty persona', bent((d) => (d.npcs[0]!.persona = '')), '/npcs/0/persona'],
  ])('refuses %s', (_kind, def, path) => {
    expect(problemsOf(def).map((p) => p.path)).toContain(path);
  });

  it.each<[string, (d: GameDefinition) => void, string, RegExp]>([
    ['an exit to an unknown room', (d) => (d.rooms[0]!.exits[0]!.to = 'kitchen'), '/rooms/0/exits/0/to', /unknown room "kitchen"/],
    ['an exit through an unknown door', (d) => (d.rooms[2]!.exits[1]!.door = 'oak-door'), '/rooms/2/exits/1/door', /unknown door/],
    ['two exits the same way', (d) => (d.rooms[0]!.exits[1]!.direction = 'north'), '/rooms/0/exits/1/direction', /duplicate direction/],
    ['a duplicate room id', (d) => (d.rooms[5]!.id = 'foyer'), '/rooms/5/id', /duplicate room id "foyer"/],
    ['a duplicate item id', (d) => (d.items[1]!.id = 'brass-key'), '/items/1/id', /duplicate item id/],
    ['a duplicate NPC', (d) => (d.npcs[1]!.npcId = d.npcs[0]!.npcId), '/npcs/1/npcId', /duplicate npc id/],
    ['an unknown start room', (d) => (d.startRoom = 'attic'), '/startRoom', /unknown room/],
    ['an NPC start room that does not exist', (d) => (d.npcs[2]!.startRoom = 'attic'), '/npcs/2/startRoom', /NPC start room "attic" is unknown/],
    ['a locked door with no way to open it', (d) => delete d.doors[0]!.opensWith, '/doors/0/opensWith', /needs a key item or a puzzle/],
    ['a door opened by an unknown key', (d) => (d.doors[0]!.opensWith = { item: 'silver-key' }), '/doors/0/opensWith/item', /unknown item/],
    ['a door opened by an immovable key', (d) => (d.doors[0]!.opensWith = { item: 'greatcoat' }), '/doors/0/opensWith/item', /must be portable/],
    ['a door opened by an unknown puzzle', (d) => (d.doors[1]!.opensWith = { puzzle: 'sphinx' }), '/doors/1/opensWith/puzzle', /unknown puzzle/],
    ['a hidden door that starts open', (d) => (d.doors[1]!.locked = false), '/doors/1/hidden', /must start locked/],
    ['an item hidden in an unknown puzzle', (d) => (d.items[3]!.location = { hiddenIn: 'sphinx' }), '/items/3/location/hiddenIn', /unknown puzzle/],
    ['an item in an unknown room', (d) => (d.items[0]!.location = { room: 'attic' }), '/items/0/location/room', /unknown room/],
    ['a puzzle in an unknown room', (d) => (d.puzzles[0]!.room = 'attic'), '/puzzles/0/room', /unknown room/],
    ['a safe code that is not digits', (d) => (d.puzzles[0]!.solution = 'eighteen'), '/puzzles/0/solution', /digits/],
    ['an escape room no exit leads to', (d) => (d.rooms[4]!.exits = d.rooms[4]!.exits.filter((e) => e.to !== 'courtyard')), '/escapeRoom', /no chain of exits/],
    ['a door on no exit', (d) => d.doors.push({ id: 'spare-door', name: 'a spare door', locked: false }), '/doors/3', /on no exit/],
    ['more than 6 NPCs starting in one room', (d) => d.npcs.push(...[1, 2, 3, 4, 5].map((n) => extraNpc(n, 'reading-room'))), '/npcs/8/startRoom', /more than 6 NPCs start in room "reading-room"/],
  ])('refuses %s', (_kind, change, path, message) => {
    const problems = problemsOf(bent(change));
    expect(problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('refuses a roster of more than 10 NPCs', () => {
    const problems = problemsOf(bent((d) => d.npcs.push(...[1, 2, 3, 4, 5, 6, 7].map((n) => extraNpc(n, n % 2 ? 'study' : 'archive')))));
    expect(problems).toContainEqual({ path: '/npcs', message: expect.stringMatching(/10/) });
  });

  it('accepts a roster of exactly 10 with 6 in one room', () => {
    expect(() => parseGameDefinition(bent((d) => d.npcs.push(...[1, 2, 3, 4].map((n) => extraNpc(n, 'reading-room')), extraNpc(5), extraNpc(6))))).not.toThrow();
  });

  it('lists every problem at once, not only the first', () => {
    const problems = problemsOf(bent((d) => {
      d.startRoom = 'attic';
      d.npcs[0]!.startRoom = 'attic';
    }));
    expect(problems.map((p) => p.path)).toEqual(expect.arrayContaining(['/startRoom', '/npcs/0/startRoom']));
  });

  it('refuses a file that is not JSON', async () => {
    await expect(loadGameDefinition(new URL('./game-definition-validation.test.ts', import.meta.url))).rejects.toThrowError(
      GameDefinitionError,
    );
  });
});
