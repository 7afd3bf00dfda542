import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, msg } from './harness.js';

/** Seed 000, "Operational Recall Scenarios", end to end over HTTP. */
describe('the seed recall scenarios', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
    await h.persona('npc-elias', 'Elias Vance, archivist of the old bank. Warm, precise, curious about people.');
  });
  afterAll(() => h?.stop());

  it('lets Elias Vance recall the aerospace career in a new game, without the vault code of the old one', async () => {
    const player = 'acct-elias-fan-0001';
    await h.say('game-bank-heist', 'npc-elias', player, 'I work as an aerospace engineer, mostly on satellite thrusters.');
    await h.fact('game-bank-heist', 'npc-elias', {
      tier: 'social', participantId: player, key: 'occupation', value: 'aerospace engineer', summary: 'works as an aerospace engineer (satellite thrusters)',
    });
    await h.fact('game-bank-heist', 'npc-elias', { tier: 'clue', key: 'vault.combination', value: '31-41-59', summary: 'the vault combination is 31-41-59' });

    const window = await h.context('game-lighthouse', 'npc-elias', {
      participants: [{ participantId: player, anonymous: false }],
      messages: [msg(1, player, 'Hello again, Elias!', true)],
    });
    expect(window.participants[player]!.facts.map((f) => f.value)).toContain('aerospace engineer');
    expect(window.clues).toEqual([]);
    const text = JSON.stringify(window);
    expect(text).not.toContain('31-41-59');
    expect(text).not.toContain('game-bank-heist');
    expect(text).not.toContain('satellite thrusters.'); // the old game's episode stays in the old game
  });

  it('gives anon_419 the coincidence directive for a 1967 Mustang story, and nothing of anon_882', async () => {
    const anon882 = 'anon-882-session-x1';
    const anon419 = 'anon-419-session-y2';
    const story = 'I spent two winters restoring a 1967 Mustang with my grandfather in his barn in Ohio';
    await h.say('game-monday', 'npc-elias', anon882, story, { anonymous: true });
    // Consolidation keeps anonymous chatter only as a generalized fragment: no id, no names, no game.
    await h.fact('game-monday', 'npc-elias', {
      tier: 'fragment', key: 'anecdote.car_restoration', value: 'restoring a 1967 Mustang', summary: 'someone restored a 1967 Mustang',
    });

    const window = await h.context('game-tuesday', 'npc-elias', {
      participants: [{ participantId: anon419, anonymous: true }],
      messages: [msg(1, anon419, 'Have you ever seen a 1967 Mustang? I am restoring one.', true)],
    });
    const directive = window.directives.find((d) => d.kind === 'uncertain_reconstruction');
    expect(directive?.text).toMatch(/heard a similar story from someone else/);
    expect(directive?.text).toMatch(/must not say or imply that it was this person/);
    const text = JSON.stringify(window);
    for (const trace of [anon882, 'game-monday', 'grandfather', 'barn', 'Ohio', 'two winters']) expect(text).not.toContain(trace);
    expect(Object.keys(window.participants)).toEqual([anon419]);
  });

  it('gives no coincidence directive when the anonymous speaker talks about something else', async () => {
    const window = await h.context('game-tuesday', 'npc-elias', {
      participants: [{ participantId: 'anon-500-session-z3', anonymous: true }],
      messages: [msg(1, 'anon-500-session-z3', 'Where is the lighthouse key?', true)],
    });
    expect(window.directives.map((d) => d.kind)).not.toContain('uncertain_reconstruction');
  });

  it('never applies uncertain reconstruction to a speaker with a stable id', async () => {
    const window = await h.context('game-tuesday', 'npc-elias', {
      participants: [{ participantId: 'acct-mustang-owner', anonymous: false }],
      messages: [msg(1, 'acct-mustang-owner', 'Have you ever seen a 1967 Mustang? I am restoring one.', true)],
    });
    expect(window.directives.map((d) => d.kind)).not.toContain('uncertain_reconstruction');
  });
});
