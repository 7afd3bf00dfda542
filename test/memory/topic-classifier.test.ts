/**
 * Topics read from meaning: the labelled examples and their shipped vectors, and what the
 * classifier reads from sentences that are not among the examples.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SentenceEncoderEmbedder, shutdownSentenceEncoder } from '../../src/memory/embeddings/sentence-encoder.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { CONFIDENT, TOPIC_VECTORS_FILE, TopicClassifier, chooseTopic, cosine, topicExamples, type TopicVectorsFile } from '../../src/memory/embeddings/topics.js';
import { sameTopic } from '../../src/language/topics.js';

const embedder = new SentenceEncoderEmbedder();
const classifier = new TopicClassifier(embedder);
const { examples, sha256 } = topicExamples();
const known = new Set(examples.map((e) => e.text.toLowerCase()));

afterAll(async () => {
  await shutdownSentenceEncoder();
});

/** The topics of sentences that are not examples themselves (else the nearest example is the sentence). */
async function topics(texts: string[], kind: 'statement' | 'question') {
  for (const t of texts) expect(known.has(t.toLowerCase()), `"${t}" is one of the examples`).toBe(false);
  return classifier.classify(await embedder.embed(texts), kind);
}

describe('topics read from meaning', () => {
  it('ships the sentence encoder\'s vectors of the examples as they are now', async () => {
    const file = JSON.parse(readFileSync(TOPIC_VECTORS_FILE, 'utf8')) as TopicVectorsFile;
    expect({ embedder: file.embedder, examplesSha256: file.examplesSha256, count: file.count, dimensions: file.dimensions }).toEqual({
      embedder: embedder.id,
      examplesSha256: sha256,
      count: examples.length,
      dimensions: 512,
    });
    const bytes = Buffer.from(file.data, 'base64');
    const shipped = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const sample = [0, 101, 457, examples.length - 1];
    const fresh = await embedder.embed(sample.map((i) => examples[i]!.text));
    sample.forEach((i, n) => expect(cosine(fresh[n]!, shipped.slice(i * 512, (i + 1) * 512))).toBeGreaterThan(0.999));
  });

  it('has statements and questions for every slot it can read and for what no slot holds', () => {
    const slots = ['occupation', 'home', 'origin', 'pet', 'family', 'health', 'allergy', 'likes', 'dislikes', 'fear', 'trip', 'hobby', 'other'];
    for (const topic of slots) {
      expect(examples.filter((e) => e.topic === topic && e.kind === 'statement').length, topic).toBeGreaterThanOrEqual(40);
      expect(examples.filter((e) => e.topic === topic && e.kind === 'question').length, topic).toBeGreaterThanOrEqual(25);
    }
    expect(new Set(examples.map((e) => e.topic))).toEqual(new Set(slots));
  });

  it('places statements no word of which names their topic', async () => {
    expect(
      (await topics(
        [
          'the night shifts at the warehouse are wearing me down',
          "spent every summer as a kid on my gran's farm near Cork",
          'Speedy the tortoise ate my lettuce again',
          'ever since the lift got stuck I take the stairs everywhere',
          'booked two weeks in Crete for August',
        ],
        'statement',
      )).map((r) => r?.topic)).toEqual(['occupation', 'origin', 'pet', 'fear', 'trip']);
  });

  it('reads what a question asks about, and says when it is about something no slot holds', async () => {
    expect(
      (await topics(['what do I do to pay the bills?', "what's waiting for me at home with four legs?", 'what am I jumpy about?', 'where am I jetting off to?', 'what size shoes do I wear?'], 'question')).map((r) => r?.topic),
    ).toEqual(['occupation', 'pet', 'fear', 'trip', 'other']);
  });

  it('lets a confident reading of meaning override the topic the words named, and the words decide otherwise', () => {
    const read = (topic: 'occupation' | 'home' | 'origin' | 'trip' | 'health' | 'other', confidence: number) => ({ topic, confidence });
    // "being a paramedic pays the rent": "rent" names a home, the meaning is a line of work.
    expect(chooseTopic('home', read('occupation', CONFIDENT), sameTopic)).toEqual({ topic: 'occupation', from: 'meaning' });
    expect(chooseTopic('home', read('occupation', CONFIDENT - 0.01), sameTopic)).toEqual({ topic: 'home', from: 'words' });
    // Something no slot holds never overrides a topic the words named; with no word, it is the answer.
    expect(chooseTopic('home', read('other', 1), sameTopic)).toEqual({ topic: 'home', from: 'words' });
    expect(chooseTopic(undefined, read('other', 0.4), sameTopic)).toEqual({ topic: 'other', from: 'meaning' });
    expect(chooseTopic(undefined, read('home', 0.3), sameTopic)).toEqual({ topic: 'home', from: 'meaning' });
    // Health and allergies are one topic: a reading of the other one changes nothing.
    expect(chooseTopic('allergy', read('health', 1), sameTopic)).toEqual({ topic: 'allergy', from: 'words' });
    expect(chooseTopic(undefined, undefined, sameTopic)).toBeUndefined();
    // Places the encoder cannot tell apart ("I live in Oslo" reads as an origin): between them the words decide.
    expect(chooseTopic('home', read('origin', 1), sameTopic)).toEqual({ topic: 'home', from: 'words' });
    expect(chooseTopic('origin', read('trip', 1), sameTopic)).toEqual({ topic: 'origin', from: 'words' });
    expect(chooseTopic(undefined, read('origin', 0.7), sameTopic)).toEqual({ topic: 'origin', from: 'meaning' });
  });

  it('lets the words, not a confident reading, tell a liking from a dislike and a fear from an allergy', () => {
    const read = (topic: 'likes' | 'dislikes' | 'fear' | 'allergy' | 'occupation', confidence: number) => ({ topic, confidence });
    // "which dish do I never get tired of?" reads as a dislike; "what gives me a reaction?" as a fear.
    expect(chooseTopic('likes', read('dislikes', 1), sameTopic)).toEqual({ topic: 'likes', from: 'words' });
    expect(chooseTopic('allergy', read('fear', 1), sameTopic)).toEqual({ topic: 'allergy', from: 'words' });
    // (A dislike and a fear are not alike: "I hate spiders" is a fear.)
    expect(chooseTopic('dislikes', read('fear', CONFIDENT), sameTopic)).toEqual({ topic: 'fear', from: 'meaning' });
    // Not a liking read as a fear, nor one of them read as something else entirely.
    expect(chooseTopic('likes', read('fear', CONFIDENT), sameTopic)).toEqual({ topic: 'fear', from: 'meaning' });
    expect(chooseTopic('dislikes', read('occupation', CONFIDENT), sameTopic)).toEqual({ topic: 'occupation', from: 'meaning' });
    expect(chooseTopic(undefined, read('dislikes', 0.7), sameTopic)).toEqual({ topic: 'dislikes', from: 'meaning' });
  });

  it('reads no topic in an embedding space it has no calibration for', async () => {
    const hashing = new LocalHashEmbedder();
    const uncalibrated = new TopicClassifier(hashing);
    expect(uncalibrated.enabled).toBe(false);
    expect(await uncalibrated.classify(await hashing.embed(['booked two weeks in Crete for August']), 'statement')).toEqual([undefined]);
  });
});
