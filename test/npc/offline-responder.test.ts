import { describe, expect, it } from 'vitest';
import { respond } from '../../src/npc/offline-responder.js';
import type { ContextFact, ContextWindow } from '../../src/boundary/context.js';
import type { ModelInput } from '../../src/npc/types.js';

const npc = { npcId: 'npc-elias', firstName: 'Elias' };
const fact = (key: string, value: string, summary: string, extra: Partial<ContextFact> = {}): ContextFact => ({
  id: `id-${key}`, key, value, summary, standing: 'claim', confidence: 0.9, score: 0.5, ...extra,
});
function window(parts: Partial<ContextWindow> = {}): ContextWindow {
  return {
    contextId: 'c1', npcId: 'npc-elias', gameId: 'g', roomId: 'hall', clues: [], participants: {}, lore: [], episodes: [],
    transcript: { summary: null, turns: [] }, directives: [],
    pinned: { procedural: { version: 1, persona: 'Elias Vance, the archivist. Warm and precise.', directives: [] }, state: { version: 1, facts: {} } },
    tokens: { budget: 2000, total: 0, sections: {} }, timingsMs: { retrieve: 0, build: 0 },
    ...parts,
  };
}
const input = (text: string, parts: Partial<ContextWindow> = {}, extra: Partial<ModelInput> = {}): ModelInput => ({
  npc, window: window(parts), trigger: { participantId: 'p1', anonymous: false, text, targeted: true }, ...extra,
});

describe('the offline responder', () => {
  it('greets a returning player by what it remembers of them', () => {
    const reply = respond(input('Hello again, Elias!', { participants: { p1: { anonymous: false, facts: [fact('occupation', 'aerospace engineer', 'works as an aerospace engineer')] } } }));
    expect(reply.text).toBe('Welcome back! It has been a while. How are things holding up in your work as an aerospace engineer?');
  });

  it('answers from this game\'s clues, and says it does not know when there are none', () => {
    const clues = [fact('safe.code', '7492', 'the safe code is 7492', { standing: 'known' })];
    expect(respond(input('What is the safe code?', { clues })).text).toBe('From what we have found in this game: The safe code is 7492.');
    expect(respond(input('What is the safe code?')).text).toBe("I don't know the code; we haven't found any clues yet.");
  });

  it('uses the coincidence phrasing when the context carries the directive, and confirms nothing', () => {
    const directives = [{ kind: 'uncertain_reconstruction' as const, text: 'Someone ... (about: 1967 mustang restoring). ...' }];
    expect(respond(input('I am restoring a 1967 Mustang', { directives })).text).toBe(
      'What a coincidence. I recently heard a similar story from someone else, about 1967 mustang restoring.',
    );
  });

  it('proposes a move in the engine\'s action form, and acknowledges a refusal on the second try', () => {
    expect(respond(input('Elias, please go west through the iron door'))).toEqual({ text: 'Very well, I will go west.', actions: [{ type: 'move', direction: 'west' }] });
    expect(respond(input('Elias, please go west', {}, { physicalFailure: 'The iron door is locked.' }))).toEqual({
      text: "I tried, but I can't: the iron door is locked.",
      actions: [],
    });
  });

  it('moves only when asked to, not when told where someone walked', () => {
    expect(respond(input('walked back through Turin in the snow earlier, kinda magical!!')).actions).toEqual([]);
    expect(respond(input('we went out for dinner after work')).actions).toEqual([]);
    expect(respond(input("let's go north")).actions).toEqual([{ type: 'move', direction: 'north' }]);
  });

  it('treats a weak claim as a claim and a contradicted memory as a memory', () => {
    const participants = { p1: { anonymous: false, facts: [
      fact('claimed_title', 'emperor', 'claims to be the emperor', { confidence: 0.2 }),
      fact('inventory.thermal_cloak', 'true', 'Elias sold you a thermal cloak', { standing: 'memory_contradicted_by_state', stateSays: false }),
    ] } };
    expect(respond(input('Bow to your emperor!', { participants })).text).toBe('You say so: claims to be the emperor. Sure.');
    expect(respond(input('Do you have a cloak for me?', { participants })).text).toBe('I remember that elias sold you a thermal cloak, but that is not how things stand now.');
  });

  it('gives the same reply to the same input', () => {
    expect(respond(input('Tell me about the tower'))).toEqual(respond(input('Tell me about the tower')));
  });

  it('answers a question about a topic from that topic\'s fact at a lower bar, health and allergies being one topic, and abstains when the topic has none', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const facts = [
      fact('speaker.allergy.allergic-canarynut', 'allergic to canarynuts', 'You are allergic to canarynuts.', { standing: 'known', match: 0.2 }),
      fact('speaker.pet.dog', 'dog Kiko', 'Your dog Kiko.', { standing: 'known', match: 0.25 }),
    ];
    const ask = (text: string, topic?: string) => respond(input(text, { participants: { p1: { anonymous: false, facts } }, retrieval: { ...retrieval, ...(topic ? { topic } : {}) } })).text;
    expect(ask('what should I avoid for medical reasons?', 'health')).toBe('You told me you are allergic to canarynuts.');
    expect(ask('what is my allergy?')).toBe('You told me you are allergic to canarynuts.');
    // A topic with no fact: a fact of another topic answers only when plainly what was asked (not at 0.25).
    expect(ask('where am I off to next?', 'trip')).toMatch(/I don't know; you haven't told me that/);
  });

  it('answers a question naming a topic of a life and no one ("where\'s home now?") from the asker\'s facts, never from the clues', () => {
    const facts = [fact('speaker.home', 'Canaryville', 'You moved to Canaryville last month.', { standing: 'known', match: 0.2 })];
    const clues = [fact('safe.code', '7492', 'the safe code is 7492', { standing: 'known' })];
    const ask = (text: string, topic?: string) =>
      respond(input(text, { clues, participants: { p1: { anonymous: false, facts } }, retrieval: { embedder: 'use-lite-512', answerThreshold: 0.3, ...(topic ? { topic, topicFrom: 'meaning' as const } : {}) } })).text;
    expect(ask("where's home now?", 'home')).toBe('You told me you moved to Canaryville last month.');
    // "Where is" alone asks about no code, key or hiding place; a question that names one goes to
    // the clues, whatever topic its meaning was read as.
    expect(ask('where is the lamp?')).not.toMatch(/code|clue/);
    expect(ask("where's the safe code?", 'home')).toBe('From what we have found in this game: The safe code is 7492.');
  });

  it('answers from a fact that shares a word of content with the question ("what do I drive?", "drove here in my Canarymobile") at the lower bar, and not from one far from it', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const ask = (text: string, facts: ContextFact[]) => respond(input(text, { participants: { p1: { anonymous: false, facts } }, retrieval })).text;
    const drove = fact('speaker.fact.drive-canarymobile', 'drove here in my Canarymobile', 'You drove here in your Canarymobile.', { standing: 'known', match: 0.18 });
    expect(ask('what do I drive?', [drove])).toBe('You told me you drove here in your Canarymobile.');
    // The same nearness without a shared word, or a shared word far from the question: no answer.
    expect(ask('what do I drive?', [{ ...drove, summary: 'You keep canarybees.' }])).toMatch(/I don't know; you haven't told me that/);
    expect(ask('what do I drive?', [{ ...drove, match: 0.05 }])).toMatch(/I don't know; you haven't told me that/);
  });

  it('answers "who am I dating?" from a partner, never from a sibling, and a question whose words name a topic from that topic\'s nearest fact', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const ask = (text: string, facts: ContextFact[]) => respond(input(text, { participants: { p1: { anonymous: false, facts } }, retrieval })).text;
    const sister = fact('speaker.family.sister', 'Your sister Vey', 'Your sister Vey would love this.', { standing: 'known', match: 0.3 });
    const husband = fact('speaker.family.husband', 'Your husband Oren', 'Your husband Oren is making dinner.', { standing: 'known', match: 0.05 });
    expect(ask('who am I dating?', [sister])).toMatch(/I don't know; you haven't told me that/);
    expect(ask('who am I dating?', [sister, husband])).toBe('You told me your husband Oren is making dinner.');
    expect(ask('anything about my family?', [sister, husband])).toBe('You told me your sister Vey would love this.');
  });

  it('answers a topic of several sides asked without naming one ("what do I like to drink?") only from a fact near enough, not from any fact of the topic', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const team = fact('speaker.likes.canaries-lose', 'the Canaries', "You can't believe the Canaries lost again.", { standing: 'known', match: 0.1 });
    const dish = fact('speaker.likes.canary-pie', 'canary pie', 'You could eat canary pie every day.', { standing: 'known', match: 0.1 });
    const ask = (text: string, facts: ContextFact[]) => respond(input(text, { participants: { p1: { anonymous: false, facts } }, retrieval })).text;
    expect(ask('what do I like to drink?', [team])).toMatch(/I don't know; you haven't told me that/);
    // Naming the side, the topic's fact of that side answers whatever its score.
    expect(ask("what's my favourite dish?", [team, dish])).toBe('You told me you could eat canary pie every day.');
    const near = { ...team, match: 0.2 };
    expect(ask('what am I into?', [near])).toBe("You told me you can't believe the Canaries lost again.");
  });

  it('does not take a topic word set apart ("outside of my job") for the topic asked', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const job = fact('speaker.occupation', 'cartographer', 'You are a cartographer.', { standing: 'known', match: 0.1 });
    const ask = (text: string) => respond(input(text, { participants: { p1: { anonymous: false, facts: [job] } }, retrieval })).text;
    expect(ask('what is my job?')).toBe('You told me you are a cartographer.');
    expect(ask('what keeps me busy outside of my job?')).toMatch(/I don't know; you haven't told me that/);
  });
  it('says a changed fact as it is now, without what it replaced ("Lisbon got cancelled, so it\'s Tokyo now")', () => {
    const facts = [fact('speaker.trip.lisbon-cancel-tokyo', "Lisbon got cancelled, so it's Tokyo now", "Lisbon got cancelled, so it's Tokyo now.", { match: 0.2 })];
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3, topic: 'trip' };
    expect(respond(input('where am I flying to?', { participants: { p1: { anonymous: false, facts } }, retrieval })).text).toBe("You told me it's Tokyo now.");
    const sold = [fact('speaker.fact.sell-volvo-saab', 'sold the Volvo, got a Saab now', 'You sold the Volvo, got a Saab now.', { match: 0.2 })];
    expect(respond(input('what am I driving these days?', { participants: { p1: { anonymous: false, facts: sold } }, retrieval: { ...retrieval, topic: 'fact' } })).text).toBe('You told me you got a Saab now.');
  });

  it('answers a question about something no slot holds from the facts kept under the open key, not from a slot\'s', () => {
    const facts = [
      fact('speaker.hobby.paint', 'paint watercolours', 'You paint watercolours.', { match: 0.22 }),
      fact('speaker.fact.left-hand-smudge', "are left-handed, always smudging your notes", "You are left-handed, always smudging your notes.", { match: 0.2 }),
    ];
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3, topic: 'fact' };
    expect(respond(input('which hand do I write with?', { participants: { p1: { anonymous: false, facts } }, retrieval })).text).toBe('You told me you are left-handed, always smudging your notes.');
    // Being kept under the open key does not make a fact near a question read as about it: below
    // the threshold, and standing clear of nothing, it does not answer.
    const chatter = [fact('speaker.fact.sorry-slow', 'sorry slow tonight', 'Sorry you are slow tonight.', { match: 0.17 }), fact('speaker.fact.evening', 'evening all', 'You are evening all.', { match: 0.12 })];
    expect(respond(input('what car do I drive?', { participants: { p1: { anonymous: false, facts: chatter } }, retrieval: { ...retrieval, topicFrom: 'meaning' } })).text).toMatch(/I don't know; you haven't told me that/);
  });

  it('answers below the threshold from a fact that stands clear of all the others, and not when none does, when it is too far, or when it is filed under another topic than the question names', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    const team = fact('speaker.fact.canaryfc-win', 'Canary FC won last night so you are in a great mood', 'Canary FC won last night so you are in a great mood.', { match: 0.27 });
    const tea = fact('speaker.likes.tea', 'go-to order is always a canary tea', 'Your go-to order is always a canary tea.', { match: 0.05 });
    const ask = (text: string, facts: ContextFact[], extra = {}) => respond(input(text, { participants: { p1: { anonymous: false, facts } }, retrieval: { ...retrieval, ...extra } })).text;
    expect(ask('who do I cheer for?', [team, tea])).toBe('You told me canary FC won last night so you are in a great mood.');
    expect(ask('who do I cheer for?', [team, { ...tea, match: 0.2 }])).toMatch(/I don't know; you haven't told me that/);
    expect(ask('who do I cheer for?', [{ ...team, match: 0.15 }])).toMatch(/I don't know; you haven't told me that/);
    const mum = fact('speaker.family.mum', 'greeting your mum', 'You are greeting your mum.', { match: 0.34 });
    expect(ask('do I have pets?', [mum, tea], { topic: 'pet', topicFrom: 'words' })).toMatch(/I don't know; you haven't told me that/);
  });

  it('lets a fact filed under another topic only by a reading of its meaning answer from standing clear ("been with Vey since uni" read as an upbringing answers "who\'s my sweetheart?")', () => {
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3, topic: 'family', topicFrom: 'words' as const };
    const vey = fact('speaker.origin.vey-uni', 'been with Vey since uni', 'You have been with Vey since uni.', { match: 0.3 });
    const tea = fact('speaker.likes.tea', 'go-to order is always a canary tea', 'Your go-to order is always a canary tea.', { match: 0.05 });
    const ask = (facts: ContextFact[]) => respond(input("who's my sweetheart?", { participants: { p1: { anonymous: false, facts } }, retrieval })).text;
    expect(ask([vey, tea])).toBe('You told me you have been with Vey since uni.');
    // Filed there by its own words ("grew up in"), it is about an upbringing, and does not answer.
    const grew = fact('speaker.origin', 'grew up with Vey in Canaryville', 'You grew up with Vey in Canaryville.', { match: 0.3 });
    expect(ask([grew, tea])).toMatch(/I don't know; you haven't told me that/);
  });

  it('answers a question for a kind of thing from the fact that names one, whatever topic the fact was filed under, and never from a fact far from the question', () => {
    const facts = [
      fact('speaker.hobby.go-climb', 'go climbing every weekend at the gym here in Canaryville', 'You go climbing every weekend at the gym here in Canaryville.', { match: 0.2, names: 'Canaryville' }),
      fact('speaker.home.flat-cold', 'your flat is freezing', 'Your flat is freezing.', { match: 0.35 }),
    ];
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3, topic: 'home', topicFrom: 'words' as const, asksFor: 'city' };
    expect(respond(input('which city do I live in?', { participants: { p1: { anonymous: false, facts } }, retrieval })).text).toBe('You told me you go climbing every weekend at the gym here in Canaryville.');
    // Below half the answer threshold, naming the kind is not enough: the topic's fact answers.
    const far = [{ ...facts[0]!, match: 0.1 }, facts[1]!];
    expect(respond(input('which city do I live in?', { participants: { p1: { anonymous: false, facts: far } }, retrieval })).text).toBe('You told me your flat is freezing.');
  });
  it('answers a question about the asker\'s life from their facts even when what qualifies it speaks of the room ("what do I do when I\'m not stuck in here?"), and still describes the room when that is what is asked', () => {
    const facts = [fact('speaker.hobby.pottery', 'pottery', 'You throw pots on a wheel in your garage.', { match: 0.5 })];
    const participants = { p1: { anonymous: false, facts } };
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    for (const q of ["@Elias what do I do when I'm not stuck in here?", '@Elias if we win, what am I doing to celebrate?', '@Elias who do I hang out with on weekends?', '@Elias where do I go out on friday nights?']) {
      expect(respond(input(q, { participants, retrieval })).text, q).toMatch(/^You told me|haven't told me/);
    }
    for (const q of ['@Elias where am I?', '@Elias how do I get out?', '@Elias can I leave?', '@Elias how do I open this door?', '@Elias what is this place?']) {
      expect(respond(input(q, { participants, retrieval })).text, q).toMatch(/^We are in/);
    }
  });

  it('takes a question put as not knowing ("bet you don\'t remember where I grew up", "I forget what my cat is called") or after the NPC\'s name for a question about the asker', () => {
    const facts = [fact('speaker.origin', 'Cork', 'You grew up in Cork.', { match: 0.5 })];
    const participants = { p1: { anonymous: false, facts } };
    const retrieval = { embedder: 'use-lite-512', answerThreshold: 0.3 };
    for (const q of ["@Elias bet you don't remember where I grew up", '@Elias I forget what my cat is called', '@Elias wonder if you remember my job', '@Elias do you know what I do', 'hey Elias where did I grow up', "@Elias while we're stuck in here, remind me where I grew up"]) {
      expect(respond(input(q, { participants, retrieval })).text, q).toMatch(/^You told me you grew up in Cork|haven't told me/);
    }
  });
});
