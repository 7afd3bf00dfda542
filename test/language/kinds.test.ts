/**
 * Kinds of things (WordNet hypernyms): what a question asks for, and what a remembered noun is.
 */
import { describe, expect, it } from 'vitest';
import { askedKind, askedTopic, fillsSlot, slotOf } from '../../src/language/topics.js';
import { ends, kindsOf, nounSenses } from '../../src/language/senses.js';
import { tokens } from '../../src/language/index.js';

describe('kinds of things', () => {
  it('reads the kind a question asks for from the noun after "what" or "which", past adjectives, compounds and "kind of"', () => {
    expect(askedKind('what language do i speak?')).toBe('language');
    expect(askedKind('@Elias what other language do i speak besides english')).toBe('language');
    expect(askedKind('which football club do i support @Elias')).toBe('club');
    expect(askedKind('what kind of company do i work for?')).toBe('company');
    expect(askedKind('what month was i born')).toBe('month');
    for (const q of ["what's my dog's name?", 'where do i live?', 'what do i drive?', 'who am I dating?']) expect(askedKind(q), q).toBeUndefined();
    expect(askedKind('I speak Swahili')).toBeUndefined();
  });

  it('knows a noun for what it is a kind of, in any of its senses, lower-case names included', async () => {
    expect((await kindsOf('swahili')).has('language')).toBe(true);
    expect((await kindsOf('denver')).has('city')).toBe(true);
    expect((await kindsOf('sax')).has('musical_instrument')).toBe(true);
    expect((await kindsOf('basil')).has('herb')).toBe(true);
    expect((await kindsOf('denver')).has('language')).toBe(false);
    expect((await kindsOf('canaryzzq')).size).toBe(0);
  });

  it('lets only a place fill home and origin, and only a line of work fill an occupation', async () => {
    const check = async (slot: 'home' | 'origin' | 'occupation', text: string) => {
      const toks = tokens(text);
      return fillsSlot(slot, toks, await nounSenses(toks.map((t) => t.lemma.toLowerCase())));
    };
    expect(await check('home', 'we just moved to geneva')).toBe(true);
    expect(await check('home', 'my flat is freezing, the heating died')).toBe(false);
    // A sentence's capital makes no name.
    expect(await check('origin', 'Undskyld, danish keyboard, everywhere')).toBe(false);
    expect(await check('origin', 'i grew up in nairobi')).toBe(true);
    expect(await check('occupation', 'being a paramedic pays the rent')).toBe(true);
    expect(await check('occupation', 'I work as an aerospace engineer')).toBe(true);
    expect(await check('occupation', 'my 6yo fights sleep like its his job')).toBe(false);
  });

  it('reads growing tomatoes as no upbringing, and being named a worker as a line of work whatever else the words name', async () => {
    const slot = async (text: string) => {
      const toks = tokens(text);
      return slotOf(toks, await nounSenses(toks.map((t) => t.lemma.toLowerCase()))).slot;
    };
    expect(await slot('i grow tomatoes on my windowsill')).not.toBe('origin');
    expect(await slot('i grew up in nairobi')).toBe('origin');
    expect(await slot('being a paramedic pays the rent')).toBe('occupation');
    expect(await slot('my sister is a nurse')).toBe('family');
  });

  it('reads an animal that only names another noun as no pet ("chicken tikka"), and an architect, a farmer or a student as a line of work', async () => {
    const slot = async (text: string) => {
      const toks = tokens(text);
      return slotOf(toks, await nounSenses(toks.map((t) => t.lemma.toLowerCase()))).slot;
    };
    expect(await slot('chicken tikka masala after this, best food on earth')).toBe('likes');
    expect(await slot('my dog biscuit is a beagle')).toBe('pet');
    expect(await slot('architect here, the floorplan on the wall is wrong')).toBe('occupation');
    expect(await slot('farmer by trade')).toBe('occupation');
    expect(await slot("I'm a student at McGill")).toBe('occupation');
  });

  it('reads a likeness ("feels like forever") as no liking, and liking something as one', async () => {
    const slot = async (text: string) => {
      const toks = tokens(text);
      return slotOf(toks, await nounSenses(toks.map((t) => t.lemma.toLowerCase()))).slot;
    };
    expect(await slot("been with Yusuf since uni, feels like forever")).not.toBe('likes');
    expect(await slot('I like tacos')).toBe('likes');
  });

  it('knows someone of the family from WordNet, partner or relative, whatever else the clause names', async () => {
    const senses = await nounSenses(['hubby', 'grandson', 'roommate']);
    expect([senses.get('hubby')?.kin, senses.get('grandson')?.kin, senses.get('roommate')?.kin]).toEqual(['partner', 'relative', undefined]);
    const slot = async (text: string) => {
      const toks = tokens(text);
      return slotOf(toks, await nounSenses(toks.map((t) => t.lemma.toLowerCase()))).slot;
    };
    expect(await slot('my grandson colt took me fishing last weekend')).toBe('family');
    expect(await slot('my roommate took me fishing last weekend')).toBe('hobby');
  });

  it('knows from WordNet a verb that puts an end to something (quit, give up, sell, call off, die, split up) and one that does not', async () => {
    const verbs = ['quit', 'give_up', 'sell', 'cancel', 'die', 'ditch', 'split_up', 'break_up', 'divorce', 'love', 'pick', 'move', 'start', 'leave', 'split', 'separate'];
    const ending = await Promise.all(verbs.map((v) => ends(v)));
    expect(Object.fromEntries(verbs.map((v, i) => [v, ending[i]]))).toEqual({ quit: true, give_up: true, sell: true, cancel: true, die: true, ditch: true, split_up: true, break_up: true, divorce: true, love: false, pick: false, move: false, start: false, leave: false, split: false, separate: false });
  });

  it('reads a question about what the speaker must not eat as one about health, and one about what they do not like as a taste', () => {
    expect(askedTopic("Anything I shouldn't eat?")).toBe('allergy');
    expect(askedTopic("anything i can't eat?")).toBe('allergy');
    expect(askedTopic('what do i have to avoid eating?')).toBe('allergy');
    expect(askedTopic("what don't I like to eat?")).toBe('likes');
    expect(askedTopic('what do I like to eat?')).toBe('likes');
  });

  it('reads "my roots" as an upbringing and "which side do I root for?" as no question about one', () => {
    expect(askedTopic('where do my roots lie?')).toBe('origin');
    expect(askedTopic('which side do i root for?')).not.toBe('origin');
  });
});
