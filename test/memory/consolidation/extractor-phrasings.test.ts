import { describe, expect, it } from 'vitest';
import { extractFrom } from '../../../src/memory/consolidation/extract/rules.js';
import { plan } from '../../../src/memory/consolidation/classify.js';
import { secretIn } from '../../../src/memory/consolidation/firewall.js';
import type { EpisodeInput } from '../../../src/memory/consolidation/extract/types.js';

const episode = (text: string, extra: Partial<EpisodeInput> = {}): EpisodeInput => ({
  id: '00000000-0000-4000-8000-000000000001',
  gameId: 'alpha',
  npcId: 'npc-mara',
  roomId: 'library',
  participantId: 'part-aaaa1111',
  anonymous: false,
  kind: 'utterance',
  ts: 1,
  targeted: true,
  text,
  ...extra,
});

const kinds = (text: string) => extractFrom(episode(text)).map((c) => `${c.kind}:${c.key}=${c.value}`);
const social = (text: string) => plan(extractFrom(episode(text)), { episodes: [episode(text)], secrets: [], core: {} }).facts;

describe('the rule extractor, in varied phrasings', () => {
  it('learns nothing from a question, which states nothing', () => {
    for (const question of ['What is my dog called?', 'Remember my dog, if you recall?', 'Am I allergic to anything?', 'Do I work at Globex?']) {
      expect(kinds(question), question).toEqual([]);
    }
  });

  const cases: [string, string][] = [
    ["I'm Alex.", 'name:speaker.name=Alex'],
    ['my name is alex', 'name:speaker.name=Alex'],
    ['Call me Ishmael', 'name:speaker.name=Ishmael'],
    ['They call me Bo, by the way', 'name:speaker.name=Bo'],
    ["I'm a nurse", 'occupation:speaker.occupation=nurse'],
    ['I work as a software engineer', 'occupation:speaker.occupation=software engineer'],
    ['By trade I am a carpenter', 'occupation:speaker.occupation=carpenter'],
    ['I usually carry a pulse rifle.', 'preference:speaker.carries=a pulse rifle'],
    ['Now I carry a shotgun', 'preference:speaker.carries=a shotgun'],
    ['My favorite color is teal', 'preference:speaker.favorite.color=teal'],
    ['I am allergic to peanuts.', 'preference:speaker.allergy.peanuts=peanuts'],
    ["I'm severely allergic to shellfish", 'preference:speaker.allergy.shellfish=shellfish'],
    ['I have an allergy to cats', 'preference:speaker.allergy.cats=cats'],
    ['In my spare time I restore old clocks', 'hobby:speaker.hobby.restore-old-clocks=restore old clocks'],
    ["I've been restoring a 1967 Mustang", 'hobby:speaker.hobby.restoring-1967-mustang=restoring a 1967 Mustang'],
    ['I love climbing', 'hobby:speaker.hobby.climbing=climbing'],
    ["I'm really into chess", 'hobby:speaker.hobby.chess=chess'],
    ['I hate spiders', 'dislike:speaker.opinion.spiders=dislikes spiders'],
    ["I can't stand jazz", 'dislike:speaker.opinion.jazz=dislikes jazz'],
    ["I'm terrified of heights", 'dislike:speaker.opinion.heights=dislikes heights'],
    ['I prefer tea over coffee', 'preference:speaker.opinion.tea=likes tea'],
    ['My sister Anna lives in Oslo', 'relationship:speaker.relationship.sister=sister: Anna'],
    ['Bob is my best friend', 'relationship:speaker.relationship.best-friend=best friend: Bob'],
    ['I have two kids', 'relationship:speaker.family.kids=two kids'],
    ["I promise I'll bring you a lantern", "promise:speaker.promise.bring-you-lantern=bring you a lantern"],
    ["I'll come back tomorrow", 'promise:speaker.promise.come-back-tomorrow=come back tomorrow'],
    ['I just lost my job at the mill', 'event:speaker.event.lost-job-at=lost my job at the mill'],
    ["I'm from Lisbon", 'event:speaker.home=Lisbon'],
    ['Did you know the lighthouse was built in 1820?', 'world_fact:world.lighthouse=the lighthouse was built in 1820'],
    ["I'm the emperor", 'claim:speaker.claimed_title=emperor'],
  ];
  for (const [text, expected] of cases) {
    it(`"${text}" -> ${expected}`, () => {
      expect(kinds(text)).toContain(expected);
    });
  }

  it('finds several facts in one message', () => {
    const found = kinds("Hi! I'm Alex, and I work as a nurse. I hate spiders.");
    expect(found).toEqual(expect.arrayContaining(['name:speaker.name=Alex', 'occupation:speaker.occupation=nurse', 'dislike:speaker.opinion.spiders=dislikes spiders']));
  });

  it('drops trivia: greetings, thanks and small talk yield no fact', () => {
    for (const text of ['hello', 'Hi there!', 'thanks', 'ok', 'lol', 'yes', 'Good morning', 'how are you?', 'see you', "I'm fine", 'nice weather today']) {
      expect(social(text), text).toEqual([]);
    }
  });

  it('keeps "I am the emperor" a low-confidence claim', () => {
    const [f] = social("I'm the emperor of everything");
    expect(f).toMatchObject({ tier: 'social', key: 'speaker.claimed_title' });
    expect(f!.confidence).toBeLessThanOrEqual(0.3);
  });

  it('scores a name above a hobby, and a message addressed to the NPC above one that was not', () => {
    const name = social("I'm Alex")[0]!;
    const hobby = social('I love climbing')[0]!;
    expect(name.importance).toBeGreaterThan(hobby.importance);
    const loud = plan(extractFrom(episode('I love climbing')), { episodes: [episode('I love climbing')], secrets: [], core: {} }).facts[0]!;
    const quiet = plan(extractFrom(episode('I love climbing', { targeted: false })), { episodes: [episode('I love climbing', { targeted: false })], secrets: [], core: {} }).facts[0]!;
    expect(loud.importance).toBeGreaterThan(quiet.importance);
  });

  it('assigns retention classes: names permanent, preferences slow decay, clues session only', () => {
    expect(social("I'm Alex")[0]!.retention).toBe('permanent');
    expect(social('I hate spiders')[0]!.retention).toBe('slow_decay');
    expect(social('the code is 4792')[0]!).toMatchObject({ tier: 'clue', retention: 'session_only' });
  });

  it('turns an anonymous speaker\'s chatter into a generalized fragment only, never a social fact', () => {
    const e = episode("I'm Dana and I've been restoring a 1967 Mustang", { anonymous: true });
    const facts = plan(extractFrom(e), { episodes: [e], secrets: [], core: {} }).facts;
    expect(facts.filter((f) => f.tier === 'social')).toEqual([]);
    const fragments = facts.filter((f) => f.tier === 'fragment');
    expect(fragments).toHaveLength(1);
    expect(fragments[0]!.summary).toBe("someone told me they've been restoring a 1967 Mustang");
    expect(JSON.stringify(fragments)).not.toMatch(/Dana|part-aaaa1111|alpha|library/);
  });

  it('tells years from codes', () => {
    expect(secretIn("I've been restoring a 1967 Mustang")).toBeUndefined();
    expect(secretIn('the lighthouse was built in 1820')).toBeUndefined();
    expect(secretIn('try 1820 on the keypad')).toBe('code');
    expect(secretIn('four seven nine two')).toBe('code');
  });
});
