import { describe, expect, it } from 'vitest';
import { NameRegistry, NamesFileError } from '../../src/registry/name-registry.js';

const registry = await NameRegistry.load();

describe('the name registry resolves only exact canonical names', () => {
  it('resolves an exact first, middle and last name to its NPC id', () => {
    const result = registry.resolve({ first: 'Mara', middle: 'Ilse', last: 'Quenby' });
    expect(result).toEqual({
      ok: true,
      npc: { npcId: 'npc-mara-quenby', first: 'Mara', middle: 'Ilse', last: 'Quenby', fullName: 'Mara Ilse Quenby' },
    });
  });

  it('resolves an exact full name given as one string', () => {
    const result = registry.resolve({ fullName: 'Osric Bellamy Thorne' });
    expect(result.ok && result.npc.npcId).toBe('npc-osric-thorne');
  });

  it('keeps a near-namesake apart: "Marta Ilse Quenby" is a different NPC from "Mara Ilse Quenby"', () => {
    const marta = registry.resolve({ fullName: 'Marta Ilse Quenby' });
    expect(marta.ok && marta.npc.npcId).toBe('npc-marta-quenby');
  });

  it.each([
    ['a first name alone', 'Mara'],
    ['first and last without the middle name', 'Mara Quenby'],
    ['a misspelling', 'Mara Ilse Quenbey'],
    ['a different case', 'mara ilse quenby'],
    ['all capitals', 'MARA ILSE QUENBY'],
    ['a phonetic spelling', 'Marah Ilsa Kwenby'],
    ['a leading space', ' Mara Ilse Quenby'],
    ['a trailing space', 'Mara Ilse Quenby '],
    ['a double space', 'Mara  Ilse Quenby'],
    ['a decomposed accent where none exists', 'Mara Ilse Quenby\u0301'],
    ['the empty string', ''],
  ])('answers "Character not recognized" for %s', (_kind, fullName) => {
    expect(registry.resolve({ fullName })).toEqual({
      ok: false,
      code: 'CHARACTER_NOT_RECOGNIZED',
      message: 'Character not recognized',
    });
  });

  it('does not let name parts containing spaces join into someone else\'s full name', () => {
    expect(registry.resolve({ first: 'Mara Ilse', middle: 'Quenby', last: '' }).ok).toBe(false);
    expect(registry.resolve({ first: 'Mara', middle: 'Ilse Quenby', last: '' }).ok).toBe(false);
  });

  it('looks an NPC up by its id', () => {
    expect(registry.getNpc('npc-wren-callow')?.fullName).toBe('Wren Adaeze Callow');
    expect(registry.getNpc('npc-nobody')).toBeUndefined();
  });
});

describe('the names file is validated when loaded', () => {
  const entry = { npcId: 'npc-a', first: 'Ada', middle: 'B', last: 'Cole' };

  it('refuses a duplicate npc id and names the field', () => {
    const bad = { formatVersion: 1, names: [entry, { ...entry, first: 'Other' }] };
    expect(() => NameRegistry.fromJson(bad)).toThrowError(NamesFileError);
    try {
      NameRegistry.fromJson(bad);
    } catch (e) {
      expect((e as NamesFileError).problems).toEqual([{ path: '/names/1/npcId', message: 'duplicate npc id "npc-a"' }]);
    }
  });

  it('refuses a duplicate full name', () => {
    const bad = { formatVersion: 1, names: [entry, { ...entry, npcId: 'npc-b' }] };
    expect(() => NameRegistry.fromJson(bad)).toThrowError(/duplicate full name "Ada B Cole"/);
  });

  it('refuses a name part with whitespace, pointing at the field', () => {
    const bad = { formatVersion: 1, names: [{ ...entry, middle: 'B C' }] };
    try {
      NameRegistry.fromJson(bad);
      expect.unreachable();
    } catch (e) {
      expect((e as NamesFileError).problems.map((p) => p.path)).toContain('/names/0/middle');
    }
  });

  it('refuses unknown fields', () => {
    const bad = { formatVersion: 1, names: [{ ...entry, nickname: 'Addy' }] };
    expect(() => NameRegistry.fromJson(bad)).toThrowError(NamesFileError);
  });
});
