/** Turns text into vectors for similarity search. Dimensions are fixed by the schema (vector(384)). */
export interface Embedder {
  /** Identifies the model, recorded with results (e.g. "local-hash-v1", "openai:text-embedding-3-small"). */
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export const EMBEDDING_DIMENSIONS = 384;

/** pgvector's text form, passed as a parameter and cast with `::vector`. */
export const toVectorLiteral = (v: Float32Array): string => `[${Array.from(v, (x) => +x.toFixed(6)).join(',')}]`;

export class EmbeddingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}
