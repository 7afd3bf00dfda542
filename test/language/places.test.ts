/** Places as chat writes them: lower case, in greetings, as what a remark is about. */
import { describe, expect, it } from 'vitest';
import { speakerPlace } from '../../src/language/topics.js';
import { nounSenses, withPlaceNames } from '../../src/language/senses.js';
import { clauses, tokens, withSubject } from '../../src/language/index.js';

async function read(line: string): Promise<{ text: string; place: string | undefined }> {
  const senses = await nounSenses(tokens(line).filter((t) => t.pos === 'NOUN' || t.pos === 'PROPN').map((t) => t.lemma));
  const text = withPlaceNames(line, senses);
  return { text, place: speakerPlace(withSubject(clauses(text)[0]!), senses) };
}

describe('places', () => {
  it('capitalizes a place typed in lower case when that is what the word usually names, or when a word of place comes before it', async () => {
    expect((await read('edinburgh is freezing tonight')).text).toBe('Edinburgh is freezing tonight');
    expect((await read('grew up in manila')).text).toBe('grew up in Manila');
    // "manila" is a paper first: alone it stays a word.
    expect((await read('a manila envelope')).text).toBe('a manila envelope');
    expect((await read('turkey for dinner')).text).toBe('turkey for dinner');
  });

  it('takes a word that is a name in every sense, one of them a place, for the place, possessive included', async () => {
    // Vancouver is a city and a navigator, Wisconsin a state and a river: no common noun either way.
    expect((await read('vancouver rain is nonstop')).text).toBe('Vancouver rain is nonstop');
    expect((await read('wisconsin winters are brutal')).place).toBe('Wisconsin');
    expect((await read("tulsa's got nothing like this")).text).toBe("Tulsa's got nothing like this");
    expect((await read("tulsa's got nothing like this")).place).toBe('Tulsa');
  });

  it('reads where the speaker is from a greeting, a remark about the place or a line of work there', async () => {
    expect((await read('good evening from lagos')).place).toBe('Lagos');
    expect((await read('dentist by day in dublin')).place).toBe('Dublin');
    expect((await read('edinburgh is freezing tonight')).place).toBe('Edinburgh');
    expect((await read('cardiff boy checking in')).place).toBe('Cardiff');
  });

  it('does not place the speaker where they were, will be, or where someone else is', async () => {
    expect((await read('I studied in oxford')).place).toBeUndefined();
    expect((await read("I'll be in rome tomorrow")).place).toBeUndefined();
    expect((await read("she's in dublin this week")).place).toBeUndefined();
    expect((await read('Mexico fell through')).place).toBeUndefined();
    expect((await read('Portugal in the autumn, it is official')).place).toBeUndefined();
    // A name that is also a city's, standing for someone of the speaker's.
    expect((await read('florence is my sister')).place).toBeUndefined();
  });
});
