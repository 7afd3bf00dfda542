import { RecentVectors } from './recent.js';
import { EMBEDDING_DIMENSIONS, EmbeddingError, type Embedder } from './types.js';

export interface OpenAIEmbedderOptions {
  /** Base URL up to and including `/v1`, e.g. `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** (Default: 10000) */
  timeoutMs?: number;
  /** Cosine similarity that counts as "very similar" for this model. (Default: 0.75) */
  similarityThreshold?: number;
  /** Recently embedded texts kept, so a line ingested and then asked about is sent once. (Default: 4096) */
  cacheSize?: number;
}

/**
 * Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM, Ollama, LM Studio, TEI).
 * Asks for 512 dimensions (honoured by text-embedding-3-*); a model that answers with another
 * size is refused with a clear error rather than stored. Recent vectors are kept by text, and a
 * text already asked for waits for that answer: a line ingested and then asked about in an NPC's
 * context request is sent once.
 */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions = EMBEDDING_DIMENSIONS;
  readonly similarityThreshold: number;

  /** Texts sent and not answered yet: a second caller waits for the same answer. */
  private readonly inFlight = new Map<string, Promise<Float32Array>>();
  private readonly recent: RecentVectors;

  constructor(private readonly options: OpenAIEmbedderOptions) {
    this.id = `openai:${options.model}`;
    this.similarityThreshold = options.similarityThreshold ?? 0.75;
    this.recent = new RecentVectors(options.cacheSize ?? 4096);
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    const known = texts.map((text) => this.recent.get(text));
    const ask = [...new Set(texts.filter((text, i) => !known[i] && !this.inFlight.has(text)))];
    if (ask.length > 0) {
      const asked = this.request(ask);
      ask.forEach((text, i) => this.inFlight.set(text, asked.then((vectors) => vectors[i]!)));
      void asked
        .then((vectors) => ask.forEach((text, i) => this.recent.remember(text, vectors[i]!)), () => undefined)
        .finally(() => ask.forEach((text) => this.inFlight.delete(text)));
    }
    return Promise.all(texts.map((text, i) => known[i] ?? this.inFlight.get(text)!.then((v) => v.slice())));
  }

  private async request(texts: readonly string[]): Promise<Float32Array[]> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/embeddings`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.options.model, input: texts, dimensions: this.dimensions }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (cause) {
      throw new EmbeddingError(`embedding endpoint ${url} is unreachable; check EMBEDDINGS_URL`, { cause });
    }
    if (!response.ok) {
      throw new EmbeddingError(`embedding endpoint ${url} answered ${response.status}; check the model name and key`);
    }
    let body: { data?: { index?: number; embedding?: unknown }[] };
    try {
      body = (await response.json()) as typeof body;
    } catch (cause) {
      throw new EmbeddingError(`embedding endpoint ${url} answered something that is not JSON`, { cause });
    }
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw new EmbeddingError(`embedding endpoint returned ${data?.length ?? 'no'} vectors for ${texts.length} inputs`);
    }
    const out = new Array<Float32Array>(texts.length);
    data.forEach((item, i) => {
      const e = item.embedding;
      if (!Array.isArray(e) || e.length !== this.dimensions || !e.every((x) => typeof x === 'number')) {
        throw new EmbeddingError(
          `model ${this.options.model} returned ${Array.isArray(e) ? e.length : 'no'} dimensions; this store needs ${this.dimensions}`,
        );
      }
      const at = item.index ?? i;
      if (!Number.isInteger(at) || at < 0 || at >= texts.length || out[at] !== undefined) {
        throw new EmbeddingError(`embedding endpoint returned a missing, repeated or out-of-range index ${String(item.index)}`);
      }
      out[at] = Float32Array.from(e as number[]);
    });
    return out;
  }
}
