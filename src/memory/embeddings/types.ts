/** Turns text into vectors for similarity search. Dimensions are fixed by the schema (vector(512), migration 0005). */
export interface Embedder {
  /**
   * Identifies the model (e.g. "use-lite-512", "local-hash-v2", "openai:text-embedding-3-small"),
   * stored beside each vector (the `embedder` column) so `memory reembed` knows what to redo.
   */
  readonly id: string;
  readonly dimensions: number;
  /**
   * Cosine similarity at which two texts count as "very similar" in this embedding space (the
   * trigger of uncertain reconstruction). Spaces differ: lexical hashing scores lower than a model.
   */
  readonly similarityThreshold: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export const EMBEDDING_DIMENSIONS = 512;

/**
 * The text of an utterance as it is embedded: without @mentions, which name who is addressed and
 * carry nothing of what is said. Ingest, context assembly and re-embedding all use it, so the
 * line embedded when it is stored is the one the query finds in the embedder's cache.
 */
export function embeddingText(text: string): string {
  return text.replace(/@[\p{L}\p{N}_-]+/gu, ' ').trim() || text;
}

/** The normalized mean of unit vectors: what several lines are about together. */
export function meanVector(vectors: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(vectors[0]?.length ?? 0);
  for (const v of vectors) for (let i = 0; i < out.length; i++) out[i]! += v[i]!;
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += out[i]! * out[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/** pgvector's text form, passed as a parameter and cast with `::vector` (6 significant digits). */
export function toVectorLiteral(v: Float32Array): string {
  // A plain loop: this runs once per stored row and per query, and Array.from + toFixed was 10x slower.
  let out = '[';
  for (let i = 0; i < v.length; i++) {
    if (i > 0) out += ',';
    const x = v[i]!;
    out += x === 0 ? '0' : x.toPrecision(6);
  }
  return `${out}]`;
}

export class EmbeddingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}
