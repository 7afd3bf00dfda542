import { describe, expect, it } from 'vitest';
import { clauses, withoutMentions } from '../../src/language/index.js';

describe('@mentions', () => {
  it('are taken out with the punctuation that only closed the address, and leave the punctuation that parts two clauses', () => {
    expect(withoutMentions("@Elias, I'm from Cork")).toBe("I'm from Cork");
    expect(withoutMentions('hey @Elias, im from Glasgow btw')).toBe('hey, im from Glasgow btw');
    expect(withoutMentions('quit deloitte @Elias, spotify offered me more money')).toBe('quit deloitte, spotify offered me more money');
    expect(withoutMentions('hi! @Elias, where do I live?')).toBe('hi! where do I live?');
    expect(withoutMentions('traded in the fiesta for a tesla, @Elias, second hand')).toBe('traded in the fiesta for a tesla, second hand');
    expect(clauses('scrapped the corsa @Elias, zipping round on a Vespa now').map((c) => c.text)).toEqual(['scrapped the corsa', 'zipping round on a Vespa now']);
  });
});
