import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { OpenAIEmbedder } from '../../src/memory/embeddings/openai.js';
import { EMBEDDING_DIMENSIONS, EmbeddingError } from '../../src/memory/embeddings/types.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { createTenant } from '../../src/memory/credentials.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { fakeVector, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};
const norm = (v: Float32Array) => Math.sqrt(cosine(v, v));

describe('the deterministic local embedder', () => {
  const embedder = new LocalHashEmbedder();

  it('gives the same vector for the same text, from any instance', async () => {
    const [a] = await embedder.embed(['The safe code is hidden behind the clock']);
    const [b] = await new LocalHashEmbedder().embed(['The safe code is hidden behind the clock']);
    expect(a!.length).toBe(EMBEDDING_DIMENSIONS);
    expect(Array.from(b!)).toEqual(Array.from(a!));
  });

  it('answers unit-length vectors, one per input, in input order', async () => {
    const texts = ['the safe code', 'a blue bird sings', 'Élodie hid the key under the rug'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    const [single] = await embedder.embed([texts[1]!]);
    expect(Array.from(vectors[1]!)).toEqual(Array.from(single!));
  });

  it('puts texts that share words, plurals, case and accents closer than unrelated text', async () => {
    const [query, plural, unrelated] = await embedder.embed(['the safe code', 'Safe codes', 'a blue bird']);
    expect(cosine(query!, plural!)).toBeGreaterThan(0.5);
    expect(cosine(query!, plural!)).toBeGreaterThan(cosine(query!, unrelated!) + 0.4);
    const [accented, plain] = await embedder.embed(['Le café est fermé', 'le cafe est ferme']);
    expect(cosine(accented!, plain!)).toBeCloseTo(1, 5);
  });

  it('does not match a synonym-only paraphrase as well as a lexical match (its documented limit)', async () => {
    // "I fix teeth" and "I am a dentist" mean nearly the same; a hashing embedder cannot know.
    const [query, paraphrase, lexical] = await embedder.embed(['I am a dentist', 'I fix teeth for a living', 'the dentist is here']);
    expect(cosine(query!, lexical!)).toBeGreaterThan(0.3);
    expect(cosine(query!, paraphrase!)).toBeLessThan(0.15);
    expect(cosine(query!, paraphrase!)).toBeLessThan(cosine(query!, lexical!));
  });
});

describe('the OpenAI-compatible embedder, against a local fake server', () => {
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.behave({ kind: 'ok' });
    fake.shuffle = true;
  });

  it('sends the model, the inputs, dimensions=512 and the bearer key to POST /v1/embeddings', async () => {
    const embedder = new OpenAIEmbedder({ baseUrl: `${fake.baseUrl}/`, model: 'fake-embed', apiKey: 'sk-test-123' });
    await embedder.embed(['one', 'two']);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/v1/embeddings');
    expect(request!.headers.authorization).toBe('Bearer sk-test-123');
    expect(request!.headers['content-type']).toMatch(/^application\/json/);
    expect(request!.body).toEqual({ model: 'fake-embed', input: ['one', 'two'], dimensions: 512 });
  });

  it('sends no Authorization header when no key is configured', async () => {
    await new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one']);
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('returns vectors in input order even when the server answers them shuffled', async () => {
    const texts = ['alpha apple', 'beta banana', 'gamma grape', 'delta date', 'epsilon elder'];
    const vectors = await new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(texts);
    expect(vectors).toHaveLength(texts.length);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(Array.from(v)).toEqual(Array.from(Float32Array.from(fakeVector(texts[i]!, 512))));
    });
  });

  it('makes no request for an empty list of texts', async () => {
    expect(await new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed([])).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a model that answers another dimension with an EmbeddingError naming both sizes', async () => {
    fake.behave({ kind: 'wrong-dimension', dimensions: 1536 });
    const failure = new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one']);
    await expect(failure).rejects.toBeInstanceOf(EmbeddingError);
    await expect(failure).rejects.toThrow(/fake-embed returned 1536 dimensions; this store needs 512/);
  });

  it('turns a 500 from the endpoint into an EmbeddingError with the status', async () => {
    fake.behave({ kind: 'fail', status: 500 });
    const failure = new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one']);
    await expect(failure).rejects.toBeInstanceOf(EmbeddingError);
    await expect(failure).rejects.toThrow(/answered 500/);
  });

  it('turns a 401 (bad key) into an EmbeddingError with the status', async () => {
    fake.behave({ kind: 'fail', status: 401 });
    await expect(new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one'])).rejects.toThrow(/answered 401/);
  });

  it('turns an unreachable endpoint into an EmbeddingError naming the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failure = new OpenAIEmbedder({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'fake-embed', timeoutMs: 2000 }).embed(['one']);
    await expect(failure).rejects.toBeInstanceOf(EmbeddingError);
    await expect(failure).rejects.toThrow(new RegExp(`127\\.0\\.0\\.1:${port}/v1/embeddings is unreachable`));
  });

  it('refuses an answer with the wrong number of vectors', async () => {
    fake.behave({ kind: 'raw', status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: fakeVector('x', 512) }] }) });
    await expect(new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one', 'two'])).rejects.toThrow(
      /returned 1 vectors for 2 inputs/,
    );
  });

  it('refuses an answer whose index fields repeat or fall out of range, rather than returning holes', async () => {
    const v = fakeVector('x', 512);
    const embedder = new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' });
    fake.behave({ kind: 'raw', status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: v }, { index: 0, embedding: v }] }) });
    await expect(embedder.embed(['one', 'two'])).rejects.toBeInstanceOf(EmbeddingError);
    fake.behave({ kind: 'raw', status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: v }, { index: 7, embedding: v }] }) });
    await expect(embedder.embed(['one', 'two'])).rejects.toBeInstanceOf(EmbeddingError);
  });

  it('sends a text once: a line ingested and then asked about, or asked for twice at once, costs one request', async () => {
    const embedder = new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' });
    const [first, again] = await Promise.all([embedder.embed(['I keep bees', 'I keep bees']), embedder.embed(['I keep bees'])]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body).toMatchObject({ input: ['I keep bees'] });
    const later = await embedder.embed(['where do I live?', 'I keep bees']);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body).toMatchObject({ input: ['where do I live?'] });
    for (const v of [first[1]!, again[0]!, later[1]!]) expect(Array.from(v)).toEqual(Array.from(first[0]!));
    // Callers get copies: changing one does not change what the next caller gets.
    later[1]!.fill(0);
    expect(Array.from((await embedder.embed(['I keep bees']))[0]!)).toEqual(Array.from(first[0]!));
  });

  it('asks again after a failure instead of remembering it', async () => {
    const embedder = new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' });
    fake.behave({ kind: 'fail', status: 500 });
    await expect(embedder.embed(['one'])).rejects.toBeInstanceOf(EmbeddingError);
    fake.behave({ kind: 'ok' });
    expect(await embedder.embed(['one'])).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it('turns a 200 whose body is not JSON into an EmbeddingError', async () => {
    fake.behave({ kind: 'raw', status: 200, body: '<html>proxy login</html>' });
    await expect(new OpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed' }).embed(['one'])).rejects.toBeInstanceOf(EmbeddingError);
  });
});

describe('a memory system assembled with the OpenAI-compatible embedder', () => {
  let database: TestDatabase;
  let fake: FakeOpenAI;
  let system: MemorySystem;
  let keys: { dir: string; remove(): Promise<void> };
  let tenant: { tenantId: string; runtimeKey: string };

  beforeAll(async () => {
    database = await openTestDatabase();
    fake = await startFakeOpenAI();
    keys = await tempDir('keyring');
    system = await buildMemorySystem(database.db, {
      keyringDir: keys.dir,
      logger: false,
      embeddings: { baseUrl: fake.baseUrl, model: 'fake-embed', apiKey: 'sk-system' },
    });
    tenant = await createTenant(database.db, 'embedding-studio');
  });
  afterAll(async () => {
    await system?.app.close();
    await fake?.close();
    await keys?.remove();
    await database?.drop();
  });

  it('uses the configured endpoint and model', () => {
    expect(system.embedder.id).toBe('openai:fake-embed');
  });

  it('prefers the endpoint to config.embedder, which comes before the default sentence encoder', async () => {
    const both = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embeddings: { baseUrl: fake.baseUrl, model: 'fake-embed' }, embedder: new LocalHashEmbedder() });
    const hash = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
    const plain = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false });
    try {
      expect([both.embedder.id, hash.embedder.id, plain.embedder.id]).toEqual(['openai:fake-embed', 'local-hash-v2', 'use-lite-512']);
      expect(plain.embedder.dimensions).toBe(EMBEDDING_DIMENSIONS);
    } finally {
      await Promise.all([both.app.close(), hash.app.close(), plain.app.close()]);
    }
  });

  it('ingests and searches end to end through the fake endpoint', async () => {
    const { token } = await system.credentials.issueGameToken(tenant.tenantId, 'game-emb', ['part-aaaa1111'], 600);
    const auth = { authorization: `Bearer ${token}` };
    const texts = ['the safe code is 7492', 'a blue bird sang in the garden', 'the lamp in the hall flickers'];
    fake.requests.length = 0;
    const ingest = await system.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: auth,
      payload: {
        idempotencyKey: 'emb-batch-0001',
        events: texts.map((text, i) => ({
          gameId: 'game-emb',
          roomId: 'library',
          npcId: 'npc-mara',
          participantId: 'part-aaaa1111',
          ts: 1_700_000_000 + i,
          text,
          targeted: false,
        })),
      },
    });
    expect(ingest.statusCode).toBe(200);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body).toEqual({ model: 'fake-embed', input: texts, dimensions: 512 });
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-system');

    const search = await system.app.inject({
      method: 'POST',
      url: '/v1/npcs/npc-mara/search',
      headers: auth,
      payload: { text: 'what is the safe code', k: 3, tiers: ['episodic'] },
    });
    expect(search.statusCode).toBe(200);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body.input).toEqual(['what is the safe code']);
    const found = search.json<{ memories: { text: string; distance: number }[] }>().memories;
    expect(found.map((m) => m.text)).toHaveLength(3);
    expect(found[0]!.text).toBe('the safe code is 7492');
    // The stored vectors are the fake's: the nearest one's distance is what the fake's vectors give.
    const q = fakeVector('what is the safe code', 512);
    const d = fakeVector('the safe code is 7492', 512);
    expect(found[0]!.distance).toBeCloseTo(1 - q.reduce((s, x, i) => s + x * d[i]!, 0), 4);
    // Each row records the embedder that made its vector (what `memory reembed` compares).
    const { rows } = await database.db.query<{ embedder: string }>("SELECT DISTINCT embedder FROM memory.episodic WHERE game_id = 'game-emb'");
    expect(rows).toEqual([{ embedder: 'openai:fake-embed' }]);
  });

  it('stores nothing and answers 503 EMBEDDINGS_UNAVAILABLE when the endpoint fails during ingest', async () => {
    const { token } = await system.credentials.issueGameToken(tenant.tenantId, 'game-emb-down', [], 600);
    fake.behave({ kind: 'fail', status: 503 });
    try {
      const response = await system.app.inject({
        method: 'POST',
        url: '/v1/events',
        headers: { authorization: `Bearer ${token}` },
        payload: {
          idempotencyKey: 'emb-batch-down1',
          events: [{ gameId: 'game-emb-down', roomId: 'r', npcId: 'npc-mara', participantId: 'part-aaaa1111', ts: 1, text: 'unstored words', targeted: false }],
        },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('EMBEDDINGS_UNAVAILABLE');
      expect(response.body).not.toContain('unstored words');
    } finally {
      fake.behave({ kind: 'ok' });
    }
    const { rows } = await database.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory.episodic WHERE game_id = 'game-emb-down'",
    );
    expect(rows[0]!.n).toBe(0);
    expect((await system.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});

describe('what is embedded, and when', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;
  const seen: string[] = [];
  class Recording extends LocalHashEmbedder {
    override async embed(texts: readonly string[]): Promise<Float32Array[]> {
      seen.push(...texts);
      return super.embed(texts);
    }
  }

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new Recording() });
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  it('embeds a line for the context exactly as ingest embedded it, without its @mention, and the room as the mean of its last lines', async () => {
    const { tenantId } = await createTenant(database.db, `studio-${Math.random().toString(36).slice(2)}`);
    const P = 'part-embed0001';
    const scope = { tenantId, gameId: 'embed-game', npcId: 'npc-mara', participantIds: [P], role: 'runtime' as const };
    const lines = ['@Mara I keep bees on a rooftop in Lyon', 'my sister Ada lives in Oslo @Mara', '@Mara what do I do for fun?'];
    await system.service.ingest(scope, { idempotencyKey: 'embed-1', events: lines.map((text, i) => ({ gameId: 'embed-game', roomId: 'hall', npcId: 'npc-mara', participantId: P, ts: 1_764_000_000 + i, targeted: true, text })) });
    const ingested = seen.splice(0);
    expect(ingested).toEqual(['I keep bees on a rooftop in Lyon', 'my sister Ada lives in Oslo', 'what do I do for fun?']);
    const { ContextAssembler } = await import('../../src/memory/context/assemble.js');
    await new ContextAssembler(system.service).assemble(scope, {
      roomId: 'hall',
      participants: [{ participantId: P, anonymous: false }],
      messages: lines.map((text, i) => ({ seq: i, speaker: { participantId: P }, text, targeted: true, ts: 1_764_000_000 + i })),
      state: { version: 1, facts: {} },
    });
    // Nothing new to the model: every text the assembly embeds is a line ingest already embedded.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((t) => !ingested.includes(t))).toEqual([]);
  });
});
