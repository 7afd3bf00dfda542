import { describe, expect, it } from 'vitest';
import { contentStems } from '../../src/language/index.js';

describe('content stems', () => {
  it('give a noun and a verb of one word the same stem, and leave out filler and function words', () => {
    expect(contentStems('lol gave up the swimming')).toContain('swim');
    expect(contentStems('you swim every morning before work')).toEqual(expect.arrayContaining(['swim', 'work']));
    expect(contentStems('no more running')).toContain('run');
    expect(contentStems('ok so the')).toEqual([]);
  });
});
