import { describe, expect, it } from 'vitest';
import { currentPart } from '../../src/language/index.js';

describe('what a statement says is the case now', () => {
  it('keeps what follows a turn to now ("Canaryland fell through so it\'s Canaryville now")', () => {
    expect(currentPart("Canaryland fell through so it's Canaryville now.")).toBe("it's Canaryville now.");
  });

  it('keeps what is now without what did not last ("a canarysmith now, the other thing didn\'t work out")', () => {
    expect(currentPart("You are a canarysmith now, the plumber thing didn't work out.")).toBe('You are a canarysmith now');
  });

  it('keeps what is now after a state denied from now on ("not in Canaryville anymore, Canarytown since March")', () => {
    expect(currentPart('Not in Canaryville anymore btw, Canarytown since march.')).toBe('Canarytown since march.');
    expect(currentPart('No more Canarymobile for you, you drive a Canarycar now.')).toBe('you drive a Canarycar now.');
  });

  it('hears "these days" as now, and a pastime named by its gerund as a thing ("picked up canaryball instead")', () => {
    expect(currentPart('You got rid of the Canarymobile, drive a Canarycar these days.')).toBe('drive a Canarycar these days.');
    expect(currentPart('You dropped canarying, picked up skating instead.')).toBe('picked up skating instead.');
    // Nothing named after the turn: the whole statement, so what it is about is not lost.
    expect(currentPart('You love Canaryville, still live there now.')).toBe('You love Canaryville, still live there now.');
  });

  it('says a change from one thing to another as what it is now, and leaves a "from" that is no such change alone', () => {
    expect(currentPart('You relocated from Canaryville to Canarytown over the summer.')).toBe('You relocated to Canarytown over the summer.');
    expect(currentPart('You are from Canaryville and moved to Canarytown.')).toBe('You are from Canaryville and moved to Canarytown.');
    expect(currentPart('You got a text from your mum to say hi.')).toBe('You got a text from your mum to say hi.');
  });
  it('says one thing given for another as a switch to the other ("swapped canarying for skating", "replaced the Canarymobile with a Canarycar")', () => {
    expect(currentPart('You swapped canarying for skating, much more fun.')).toBe('You switched to skating, much more fun.');
    expect(currentPart('You traded in the Canarymobile for a Canarycar.')).toBe('You switched to a Canarycar.');
    expect(currentPart('You replaced the old Canarymobile with a Canarycar.')).toBe('You switched to a Canarycar.');
  });

  it('leaves an exchange that gives nothing up as said ("you trade stocks for a living", "swapped shifts with Tom")', () => {
    expect(currentPart('You trade stocks for a living.')).toBe('You trade stocks for a living.');
    expect(currentPart('You swapped shifts with Tom.')).toBe('You swapped shifts with Tom.');
  });
});
