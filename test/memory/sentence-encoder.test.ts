import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SentenceEncoderEmbedder, SIMILARITY_THRESHOLD } from '../../src/memory/embeddings/sentence-encoder.js';
import { EmbeddingError } from '../../src/memory/embeddings/types.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};

// The same story told again in other words: "very similar" (uncertain reconstruction must fire).
const RETOLD: [string, string][] = [
  ["I rebuilt my grandmother's 1958 Vespa", "I'm fixing up an old Vespa"],
  ['My dog Biscuit ran away during the thunderstorm last night', 'Our puppy bolted when the storm hit yesterday evening'],
  ['I used to be a dentist before I retired', 'I fixed teeth for a living for thirty years'],
  ['I grew up on a sheep farm in Wales', 'As a kid I lived on a farm in Wales raising sheep'],
  ['I once climbed Mount Kilimanjaro with my brother', 'My brother and I hiked up Kilimanjaro years ago'],
  ["I'm terrified of spiders, ever since I was little", 'Spiders have scared me since childhood'],
  ['My sister just had twins in March', 'My sister gave birth to twin babies this spring'],
  ['I broke my leg skiing in the Alps', 'I fractured my leg on a ski trip in the Alps'],
  // A stored fragment (consolidation's generalized third person) against a new speaker's line.
  ["someone told me they rebuilt their grandmother's 1958 Vespa", "I'm fixing up an old Vespa"],
  ['someone restored a 1967 Mustang', 'Have you ever seen a 1967 Mustang? I am restoring one.'],
  ['someone told me they climbed Kilimanjaro', 'My brother and I hiked up Kilimanjaro years ago'],
];

// Unrelated pairs (USE gives these up to about 0.3) and neighbouring remarks (same topic,
// another story: 0.4-0.5): neither may count as "very similar".
const NOT_SIMILAR: [string, string][] = [
  ["I rebuilt my grandmother's 1958 Vespa", 'The safe code is hidden behind the clock'],
  ['My dog Biscuit ran away during the thunderstorm last night', 'I prefer tea with milk in the morning'],
  ['I used to be a dentist before I retired', 'The train to Paris was delayed again'],
  ['I grew up on a sheep farm in Wales', 'She plays the violin in an orchestra'],
  ['I once climbed Mount Kilimanjaro with my brother', 'The printer on the second floor is out of toner'],
  ["I'm terrified of spiders, ever since I was little", 'We painted the kitchen yellow last weekend'],
  ['I broke my leg skiing in the Alps', 'I am learning to bake sourdough bread'],
  ['I work as a nurse at night', 'My favourite colour is green'],
  ['I moved to Lisbon last year', 'I broke my leg skiing in the Alps'],
  ['I used to be a dentist before I retired', "I'm terrified of spiders, ever since I was little"],
  ['someone restored a 1967 Mustang', 'Where is the lighthouse key?'],
  ["someone told me they rebuilt their grandmother's 1958 Vespa", 'I love old cars'],
  ['someone told me they climbed Kilimanjaro', 'I have never been to Africa'],
  ['My dog Biscuit ran away during the thunderstorm last night', 'I have a cat called Pepper'],
];

describe('the sentence encoder (Universal Sentence Encoder Lite in a worker thread)', () => {
  const embedder = new SentenceEncoderEmbedder();

  it('answers 512-dimensional unit vectors, one per input, in input order, with its id', async () => {
    expect(embedder.id).toBe('use-lite-512');
    expect(embedder.dimensions).toBe(512);
    const texts = ['the safe code', 'a blue bird sings', 'Élodie hid the key under the rug', ''];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(512);
      expect(v.every(Number.isFinite)).toBe(true);
      expect(Math.sqrt(cosine(v, v))).toBeCloseTo(1, 4);
    }
    expect(await embedder.embed([])).toEqual([]);
  });

  it('scores paraphrases (no shared words needed) above unrelated text', async () => {
    const [dentist, teeth, lexical, unrelated] = await embedder.embed(['I am a dentist', 'I fix teeth for a living', 'the dentist is here', 'the train was late']);
    expect(cosine(dentist!, teeth!)).toBeGreaterThan(cosine(dentist!, unrelated!) + 0.2);
    expect(cosine(dentist!, lexical!)).toBeGreaterThan(cosine(dentist!, unrelated!));
    for (let i = 0; i < 8; i++) {
      const [a, b] = await embedder.embed(RETOLD[i]!);
      const [c, d] = await embedder.embed(NOT_SIMILAR[i]!);
      expect(cosine(a!, b!), `${RETOLD[i]} vs ${NOT_SIMILAR[i]}`).toBeGreaterThan(cosine(c!, d!));
    }
  });

  it(`is calibrated: a retold story passes similarityThreshold (${SIMILARITY_THRESHOLD}), unrelated and neighbouring remarks do not`, async () => {
    expect(embedder.similarityThreshold).toBe(SIMILARITY_THRESHOLD);
    for (const pair of RETOLD) {
      const [a, b] = await embedder.embed(pair);
      expect(cosine(a!, b!), pair.join(' ~ ')).toBeGreaterThanOrEqual(embedder.similarityThreshold);
    }
    for (const pair of NOT_SIMILAR) {
      const [a, b] = await embedder.embed(pair);
      expect(cosine(a!, b!), pair.join(' ~ ')).toBeLessThan(embedder.similarityThreshold);
    }
  });

  it('answers many concurrent callers in shared batches, each with what a single embed gives', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `caller ${i} asks whether the lamp in room ${i % 7} still flickers`);
    const solo = new SentenceEncoderEmbedder({ cacheSize: 0 });
    try {
      const alone: Float32Array[] = [];
      for (const t of texts.slice(0, 6)) alone.push((await solo.embed([t]))[0]!);
      const before = solo.stats();
      const together = await Promise.all(texts.map((t) => solo.embed([t, 'and a shared question'])));
      const after = solo.stats();
      expect(together).toHaveLength(texts.length);
      // Texts that arrived while a batch ran joined the next one; the repeated text went once per batch.
      expect(after.batches - before.batches).toBeLessThanOrEqual(4);
      expect(after.embedded - before.embedded).toBeLessThan(texts.length * 2);
      for (let i = 0; i < alone.length; i++) {
        const pair = together[i]!;
        expect(cosine(pair[0]!, alone[i]!)).toBeCloseTo(1, 4);
      }
      expect(cosine(together[0]![1]!, together[39]![1]!)).toBeCloseTo(1, 5);
    } finally {
      await solo.close();
    }
  });

  it('answers a repeated text from its cache: the same vector, no model call', async () => {
    const text = 'the brass key is under the third floorboard';
    const [first] = await embedder.embed([text]);
    const before = embedder.stats();
    const [again] = await embedder.embed([text]);
    const after = embedder.stats();
    expect(Array.from(again!)).toEqual(Array.from(first!));
    expect(after.hits).toBe(before.hits + 1);
    expect(after.batches).toBe(before.batches);
    // A caller that changes its copy does not change the cache.
    again!.fill(0);
    expect(Array.from((await embedder.embed([text]))[0]!)).toEqual(Array.from(first!));
  });

  it('embeds a text once when it is asked for again while the model is working on it', async () => {
    const own = new SentenceEncoderEmbedder({ cacheSize: 0 });
    try {
      await own.ready();
      const text = 'a line ingested and asked about a moment later';
      const first = own.embed([text]);
      // Let the batch go out, then ask again before it is answered.
      await new Promise((r) => setImmediate(r));
      const second = own.embed([text]);
      const [[a], [b]] = await Promise.all([first, second]);
      expect(own.stats()).toMatchObject({ embedded: 1, batches: 1, joined: 1 });
      expect(Array.from(b!)).toEqual(Array.from(a!));
      // Each caller has its own copy.
      a!.fill(0);
      expect(b!.some((x) => x !== 0)).toBe(true);
    } finally {
      await own.close();
    }
  });

  it('evicts the least recently used entry past its capacity', async () => {
    const small = new SentenceEncoderEmbedder({ cacheSize: 2 });
    try {
      await small.embed(['one text']);
      await small.embed(['two text']);
      await small.embed(['one text']); // hit: now the most recent
      await small.embed(['three text']); // evicts "two text"
      const before = small.stats();
      await small.embed(['one text']);
      expect(small.stats().hits).toBe(before.hits + 1);
      await small.embed(['two text']);
      expect(small.stats().embedded).toBe(before.embedded + 1);
      expect(small.stats().cached).toBe(2);
    } finally {
      await small.close();
    }
  });

  it('keeps the event loop free while the model works', async () => {
    const texts = Array.from({ length: 64 }, (_, i) => `a long sentence number ${i} about the weather over the harbour and the boats`);
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 5);
    const cold = new SentenceEncoderEmbedder({ cacheSize: 0 });
    try {
      await cold.ready();
      last = performance.now();
      longest = 0;
      await cold.embed(texts);
    } finally {
      clearInterval(timer);
      await cold.close();
    }
    // A batch of 64 takes about a second of model time; the loop never waited for it.
    expect(longest).toBeLessThan(200);
  });

  it('fails with a clear EmbeddingError when the model cannot be loaded', async () => {
    const broken = new SentenceEncoderEmbedder({ modelPackage: '@energetic-ai/no-such-model' });
    try {
      const failure = broken.embed(['anything']);
      await expect(failure).rejects.toBeInstanceOf(EmbeddingError);
      await expect(failure).rejects.toThrow(/sentence encoder .* could not be loaded/);
      // And again on the next call, not a hang.
      await expect(broken.embed(['anything else'])).rejects.toBeInstanceOf(EmbeddingError);
    } finally {
      await broken.close();
    }
  });

  it('does not keep the process alive: a script that embeds and returns exits by itself', () => {
    const module = fileURLToPath(new URL('../../src/memory/embeddings/sentence-encoder.ts', import.meta.url));
    const script = `
      import { SentenceEncoderEmbedder } from ${JSON.stringify(module)};
      const [v] = await new SentenceEncoderEmbedder().embed(['hello there']);
      console.log('dims', v.length);
    `;
    const dir = mkdtempSync(path.join(tmpdir(), 'encoder-exit-'));
    const file = path.join(dir, 'embed-once.mts');
    writeFileSync(file, script);
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 30_000, cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    rmSync(dir, { recursive: true, force: true });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('dims 512');
    expect(child.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
