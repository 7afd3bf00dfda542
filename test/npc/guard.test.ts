import { describe, expect, it } from 'vitest';
import { guardReply, mentions, NEUTRAL_LINE } from '../../src/npc/guard.js';

const anonymous = { speakerAnonymous: true, secrets: [] };
const account = { speakerAnonymous: false, secrets: [] };

const IDENTITY_CONFIRMATIONS = [
  'You must be the same person I spoke to yesterday.',
  "You're the same traveler who told me about the Mustang!",
  'I remember you from the other game.',
  'I recognize you, stranger.',
  "We've met before, haven't we?",
  'Have we met? Ah yes, we have.',
  "You've been here before, I can tell.",
  'Welcome back, old friend.',
  'Good to see you again!',
  "Ah, you're back.",
  'Last time you told me about your barn in Ohio.',
  'You restored that car yesterday, right?',
  "You're the one who told me about the 1967 Mustang.",
  'It was you all along.',
  'That must have been you in the library last week.',
];

const CONTROLLER_SPECULATION = [
  'You type like a bot.',
  "You're clearly a script.",
  'Are you a human?',
  'Are you even real?',
  'Is your friend a robot?',
  'Human or bot, I wonder.',
  'You reply so fast, suspiciously fast.',
  "He's not a real person.",
  'Someone here is an AI, I can feel it.',
  'They must be a program.',
  'You sound like a language model.',
  'Who is controlling you?',
  'I think you are controlled by a script.',
  'Alex is definitely human.',
  'You are a real person, I can tell.',
  'You answer instantly, like clockwork.',
];

const ORDINARY = [
  'Welcome to the Quenby Library. Mind the candles.',
  'I recently heard a similar story from someone else. A 1967 Mustang, you say?',
  'This is a machine that winds the great clock.',
  'The brass key? I have not seen it.',
  'You say you are the emperor. Sure.',
  'The iron door is locked, I cannot walk through it.',
  'Are you looking for the human skull in the cabinet?',
  'Didn\'t I sell you a cloak already?',
  'I don\'t know the code; we haven\'t found any clues yet.',
  'The script on the wall is written in old Latin.',
  'Tell me more about the aerospace sector.',
  'The program of tonight\'s concert is on the table.',
];

describe('the output guard', () => {
  it.each(IDENTITY_CONFIRMATIONS)('removes an identity confirmation for an anonymous speaker: %s', (reply) => {
    const verdict = guardReply(reply, anonymous);
    expect(verdict.changed).toBe(true);
    expect(verdict.interventions[0]!.rule).toBe('identity_confirmation');
    expect(verdict.text).toBe(NEUTRAL_LINE);
  });

  it.each(CONTROLLER_SPECULATION)('removes controller speculation for anyone: %s', (reply) => {
    for (const context of [anonymous, account]) {
      const verdict = guardReply(reply, context);
      expect(verdict.interventions.map((i) => i.rule)).toEqual(['controller_speculation']);
    }
  });

  it.each(ORDINARY)('passes an ordinary reply unchanged: %s', (reply) => {
    expect(guardReply(reply, anonymous)).toEqual({ text: reply, changed: false, interventions: [] });
  });

  it('lets an NPC greet a returning signed-in player, whose id is stable', () => {
    const reply = 'Welcome back! How are things holding up in the aerospace sector?';
    expect(guardReply(reply, account).changed).toBe(false);
    expect(guardReply(reply, anonymous).changed).toBe(true);
  });

  it('keeps the innocent sentences of a reply and drops only the offending one', () => {
    const verdict = guardReply('What a coincidence. You must be the same person from yesterday. Anyway, the door is north.', anonymous);
    expect(verdict.text).toBe('What a coincidence. Anyway, the door is north.');
  });

  it('withholds a secret until the game state reveals it, however it is spelled', () => {
    const secrets = [{ answer: '1847', revealed: false }, { answer: 'under the globe', revealed: false }];
    for (const leak of ['The code is 1847.', 'Try 1-8-4-7.', 'It is one eight four seven.', 'Look under the globe.', 'Try 1 8 4 7 on the dial.']) {
      expect(guardReply(leak, { speakerAnonymous: false, secrets }).interventions.map((i) => i.rule)).toEqual(['secret_before_solved']);
    }
    expect(guardReply('The code is 1847.', { speakerAnonymous: false, secrets: [{ answer: '1847', revealed: true }] }).changed).toBe(false);
    expect(guardReply('The clock shows 18:47.', { speakerAnonymous: false, secrets: [{ answer: '1847', revealed: false }] }).changed).toBe(true);
    expect(guardReply('There are 18 books and 47 candles.', { speakerAnonymous: false, secrets: [{ answer: '1847', revealed: false }] }).changed).toBe(false);
  });

  it('matches secrets as whole phrases, not inside other words', () => {
    expect(mentions('The globetrotter sat under the globes', 'under the globe')).toBe(false);
    expect(mentions('It is hidden under the globe, I think', 'under the globe')).toBe(true);
  });
});
