/**
 * Content words, for the check that a question shares no content word with the statement it
 * asks about: lower case, accents and typographic apostrophes folded, contractions cut, stop
 * words dropped, a light stemmer (plural, -ed, -ing, -ly, a few irregular verbs). Two words
 * "share" when their stems are equal or both are at least five letters long and begin with the
 * same five (allergic/allergy, supporter/support): deliberately stricter than a stemmer alone.
 */
import { normalize } from '../scoring.js';

export const STOP_WORDS = new Set(
  `a about above after again against all also am an and any anything are aren as at be because been before being below between both but by can cannot could did didn do does doesn doing don done down during each else even ever every few for from further get gets getting gonna got had has have having he her here hers herself him himself his how i if in into is isn it its itself just know let like lol haha hmm ok okay me more most much must my myself no nor not now of off on once only or other ought our ours ourselves out over own please pls really rn right same she should so some still such tbh than that the their theirs them themselves then there these they this those through to too under until up upon us very want was we well were what whats when where which while who whom whose why will with would yeah yes yet you your yours yourself yourselves again way thing things stuff one btw oh wait elias hey tell remind remember recall say said`.split(/\s+/),
);

const IRREGULAR: Record<string, string> = {
  grew: 'grow', grown: 'grow', went: 'go', gone: 'go', ate: 'eat', eaten: 'eat', flew: 'fly', flown: 'fly', kept: 'keep',
  spent: 'spend', told: 'tell', sold: 'sell', bought: 'buy', made: 'make', left: 'leave', felt: 'feel', thought: 'think',
  met: 'meet', brought: 'bring', taught: 'teach', drove: 'drive', driven: 'drive', wore: 'wear', worn: 'wear', lost: 'lose',
  saw: 'see', seen: 'see', took: 'take', taken: 'take', gave: 'give', given: 'give', born: 'bear', paid: 'pay', ran: 'run',
  lives: 'live', living: 'live', lived: 'live', sis: 'sister', bro: 'brother', kids: 'kid', fav: 'favourite', favorite: 'favourite', fave: 'favourite',
};

export function stem(word: string): string {
  if (IRREGULAR[word]) return stem(IRREGULAR[word]!);
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('ly')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('es')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 3 && w.at(-1) === w.at(-2) && !'lsz'.includes(w.at(-1)!)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** The content words of a text (stems), stop words and words shorter than three letters dropped. */
export function contentWords(text: string): string[] {
  const words = normalize(text)
    .replace(/'(s|re|ve|ll|d|m|t)\b/g, ' ')
    .replace(/n't\b/g, ' ')
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
  return [...new Set(words.map(stem))];
}

const same = (a: string, b: string) => a === b || (a.length >= 5 && b.length >= 5 && a.slice(0, 5) === b.slice(0, 5));

/** Content words the two texts share (as stems of the first text). */
export function sharedContentWords(a: string, b: string): string[] {
  const theirs = contentWords(b);
  return contentWords(a).filter((x) => theirs.some((y) => same(x, y)));
}
