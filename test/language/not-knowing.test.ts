import { describe, expect, it } from 'vitest';
import { clauses, forgetRequest, person } from '../../src/language/index.js';

const asked = (text: string) => clauses(text).map((c) => c.question);

describe('questions put as not knowing', () => {
  it('reads not knowing before what is not known as a question', () => {
    expect(asked('I forget what my cat is called')).toEqual([true]);
    expect(asked("bet you don't remember where I grew up")).toEqual([true]);
    expect(asked("can't recall if I told you what I'm allergic to")).toEqual([true]);
    expect(asked('you remember what I do for work')).toEqual([true]);
    expect(asked('wonder if you know my job')).toEqual([true]);
  });

  it('does not read knowing of one\'s own, or a request to forget, as a question', () => {
    expect(asked('I know what I want')).toEqual([false]);
    expect(asked('I remember my grandmother\'s garden in Cork')).toEqual([false]);
    expect(forgetRequest('forget what I said about my job')?.about).toBe('my job');
  });

  it('reads a question after the NPC\'s name, and a request to be reminded after a comma', () => {
    expect(asked('Elias what do I do for work')).toEqual([true]);
    expect(asked("while we're stuck in here, remind me what I do for a living")).toEqual([false, true]);
  });

  it('takes a question to the listener about what they know as being about what is to be known', () => {
    expect(person(clauses('do you know what I do')[0]!)).toBe('first');
    expect(person(clauses('bet you forgot my sister\'s name')[0]!)).toBe('first');
    expect(person(clauses('what do you do here?')[0]!)).toBe('second');
    expect(person(clauses('do you know your way around?')[0]!)).toBe('second');
  });
});
