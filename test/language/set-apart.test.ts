import { describe, expect, it } from 'vitest';
import { withoutSetApart } from '../../src/language/topics.js';

describe('what a question sets apart', () => {
  it('is left out of what the question asks about ("what keeps me busy outside of my job?")', () => {
    expect(withoutSetApart('what keeps me busy outside of my job?')).toBe('what keeps me busy?');
    expect(withoutSetApart('hi there! what do I like other than canary pie?')).toBe('hi there! what do I like?');
    expect(withoutSetApart('so, what do I do except work lol')).toBe('so, what do I do lol');
  });

  it('is kept in a statement, and a question that sets nothing apart is left as it is', () => {
    expect(withoutSetApart('I paint, besides my job.')).toBe('I paint, besides my job.');
    expect(withoutSetApart('where do I live these days?')).toBe('where do I live these days?');
  });
});
