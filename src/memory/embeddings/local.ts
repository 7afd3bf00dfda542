import { EMBEDDING_DIMENSIONS, type Embedder } from './types.js';

/**
 * The deterministic local embedder: signed feature hashing of words, word pairs and character
 * trigrams into 512 dimensions, L2-normalized. No model, no download, same vector everywhere.
 *
 * What it matches: shared words after case, accent and plural folding ("Safe code" ~ "the
 * safe's codes"), shared word pairs (stronger), and misspellings through shared trigrams.
 * What it cannot match: synonyms and paraphrase without shared words ("I fix teeth" is not
 * near "I am a dentist"). The default embedder (sentence-encoder.ts) or an OpenAI-compatible
 * model does. Kept as the fast, dependency-free choice (EMBEDDINGS=hash; tests and benchmarks).
 */
export class LocalHashEmbedder implements Embedder {
  readonly id = 'local-hash-v2';
  readonly dimensions = EMBEDDING_DIMENSIONS;
  /**
   * Calibrated on retold anecdotes: the same story told again scores 0.28-0.75 (lower when one
   * telling is much longer), a different remark on the same topic ("I love old cars") about
   * 0.2, unrelated text below 0.1.
   */
  readonly similarityThreshold = 0.28;

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => embedOne(t, this.dimensions));
  }
}

const STOP_WORDS = new Set(
  'a an the and or but of to in on at for with is are was were be been am i you he she it we they me my your his her its our their this that there here do does did so as by from'.split(
    ' ',
  ),
);

export function tokenize(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && !STOP_WORDS.has(w))
    .map(stem);
}

/** Folds the commonest English inflections so "codes", "code's" and "code" meet. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function embedOne(text: string, dims: number): Float32Array {
  const v = new Float32Array(dims);
  const words = tokenize(text);
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    const sign = h & 0x80000000 ? -1 : 1;
    v[h % dims]! += sign * weight;
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    add(`w:${w}`, 1);
    if (i + 1 < words.length) add(`b:${w} ${words[i + 1]}`, 0.7);
    const padded = `^${w}$`;
    for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.25);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dims; i++) v[i]! /= norm;
  return v;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
