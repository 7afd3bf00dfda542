import { describe, expect, it } from 'vitest';
import { tokens, unqualified } from '../../src/language/index.js';

const main = (text: string) => unqualified(tokens(text)).map((t) => t.text).join(' ');

describe('what qualifies a clause', () => {
  it('is left out up to the next comma or the end, before or after what the clause says', () => {
    expect(main("I've been fencing since I was a kid")).toBe("I 've been fencing");
    expect(main('if we win, who am I calling first?')).toBe('who am I calling first ?');
    expect(main("what do I do when I'm not stuck in here?")).toBe('what do I do');
    expect(main('I moved in with my sister because the rent went up')).toBe('I moved in with my sister');
  });

  it('leaves a clause that nothing qualifies as it is', () => {
    expect(main('my sister lives in Leeds')).toBe('my sister lives in Leeds');
  });
});
