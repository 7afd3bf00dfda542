/**
 * Topics of a life by meaning: which slot of the memory design (DESIGN section 5) a sentence is
 * about, from its embedding, when none of its words names one ("who keeps me company when I come
 * home?" is about a pet; "can't be in the same room as a spider" is about a fear).
 *
 * A sentence's topic is read from its nearest neighbours among labelled examples
 * (`topic-examples.json`: statements and questions for each slot, and for `other`, what a player
 * says that belongs to no slot: the room, small talk, facts of a life no slot holds). The
 * examples were written for this, apart from the evaluation data and without reading the
 * extractor, so the evaluation's dev split measures how well they carry over. Statements are
 * compared with statements and questions with questions. The examples' vectors in the sentence
 * encoder's space ship beside them (`topic-examples.vectors.json`, `npm run memory --
 * topic-vectors` rewrites it); in a space without a calibration (feature hashing, a remote model)
 * no topic is read from meaning.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Slot } from '../../language/topics.js';
import type { Embedder } from './types.js';

/** A name is said in so many ways that only its words tell it ("call me Ada"): not a topic here. */
export type Topic = Exclude<Slot, 'open' | 'name'>;
export type SentenceKind = 'statement' | 'question';

const EXAMPLES_FILE = new URL('./topic-examples.json', import.meta.url);
export const TOPIC_VECTORS_FILE = new URL('./topic-examples.vectors.json', import.meta.url);

/** How many neighbours vote, and how near the nearest must be for a topic to be read at all. */
const NEIGHBOURS = 7;
export function topicFloor(embedderId: string): number | undefined {
  return embedderId.startsWith('use-lite') ? 0.3 : undefined;
}

/** What the meaning of a sentence says it is about, and the share of its neighbours' vote. */
export interface TopicReading {
  topic: Topic | 'other';
  confidence: number;
}

/**
 * The share of the vote at which meaning overrides what the words named. Measured on the examples
 * (each classified by the others) and on the dev split: the word lists name a topic for two
 * thirds of the examples and are right for 70% (statements) and 78% (questions) of those, while a
 * reading with 60% of the vote or more is right more often; below that the words are.
 */
export const CONFIDENT = 0.6;

/**
 * The share of the vote at which a question's meaning alone (no word of it names a topic) says
 * what it asks about ("who's my other half?": family; "what can't my body handle?": health).
 * Lower than CONFIDENT, which is the bar for overriding what the words named: a reading with
 * 50-60% of the vote picks the asked topic's facts right more often than a bar of the answer
 * threshold over all of them does (calibrated on the dev split and on phrasings written apart
 * from it; docs/eval, "The round of 34eb7db, 1ce6772, fee16ad and 7b95a8a").
 */
export const MEANING_ALONE = 0.5;

/**
 * The topic of a sentence from what its words name (`named`) and what its meaning reads: a
 * confident reading of another topic wins; else the words; else the reading, whatever its share.
 */
export function chooseTopic(named: Topic | undefined, read: TopicReading | undefined, same: (a: string, b: string) => boolean): { topic: Topic | 'other'; from: 'words' | 'meaning' } | undefined {
  const toldApartByWords = named && read && ALIKE.some((topics) => topics.has(named) && topics.has(read.topic));
  if (read && read.topic !== 'other' && read.confidence >= CONFIDENT && !(named && same(named, read.topic)) && !toldApartByWords) return { topic: read.topic, from: 'meaning' };
  if (named) return { topic: named, from: 'words' };
  return read ? { topic: read.topic, from: 'meaning' } : undefined;
}

/**
 * Topics the sentence encoder cannot tell apart, which sit side by side in its space: those of a
 * place ("I live in Oslo", "I grew up in Oslo" and "I'm flying to Oslo" differ by a verb and a
 * tense, not by what they are about); a liking and a dislike ("which dish do I never get tired
 * of?" is read as a dislike: the encoder hears the food, not the polarity); a fear and an allergy
 * ("what gives me a reaction?" is read as a fear). Between them the words decide. (Not a dislike
 * and a fear: "I hate spiders" is a fear, whatever word says it.)
 */
const ALIKE: readonly ReadonlySet<string>[] = [new Set<Topic>(['home', 'origin', 'trip']), new Set<Topic>(['likes', 'dislikes']), new Set<Topic>(['fear', 'allergy'])];

export interface TopicExample {
  topic: Topic | 'other';
  kind: SentenceKind;
  text: string;
}

/** The labelled examples, in file order (statements, then questions, topic by topic). */
export function topicExamples(): { examples: TopicExample[]; sha256: string } {
  const raw = readFileSync(EXAMPLES_FILE);
  const parsed = JSON.parse(raw.toString('utf8')) as Record<string, { statements: string[]; questions: string[] }>;
  const examples = Object.entries(parsed).flatMap(([topic, { statements, questions }]) => [
    ...statements.map((text) => ({ topic: topic as Topic | 'other', kind: 'statement' as const, text })),
    ...questions.map((text) => ({ topic: topic as Topic | 'other', kind: 'question' as const, text })),
  ]);
  return { examples, sha256: createHash('sha256').update(raw).digest('hex') };
}

export interface TopicVectorsFile {
  embedder: string;
  examplesSha256: string;
  count: number;
  dimensions: number;
  /** Float32, little-endian, example after example, base64. */
  data: string;
}

/** The shipped vectors of the examples, when they were made by this embedder from these examples. */
function shippedVectors(embedderId: string, sha256: string, count: number): Float32Array[] | undefined {
  let file: TopicVectorsFile;
  try {
    file = JSON.parse(readFileSync(TOPIC_VECTORS_FILE, 'utf8')) as TopicVectorsFile;
  } catch {
    return undefined;
  }
  if (file.embedder !== embedderId || file.examplesSha256 !== sha256 || file.count !== count) return undefined;
  const bytes = Buffer.from(file.data, 'base64');
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return Array.from({ length: count }, (_, i) => all.slice(i * file.dimensions, (i + 1) * file.dimensions));
}

export function encodeTopicVectors(embedderId: string, sha256: string, vectors: readonly Float32Array[]): TopicVectorsFile {
  const dimensions = vectors[0]?.length ?? 0;
  const all = new Float32Array(vectors.length * dimensions);
  vectors.forEach((v, i) => all.set(v, i * dimensions));
  return { embedder: embedderId, examplesSha256: sha256, count: vectors.length, dimensions, data: Buffer.from(all.buffer).toString('base64') };
}

export class TopicClassifier {
  private examples?: Promise<Record<SentenceKind, Labelled[]>>;
  private readonly floor: number | undefined;

  constructor(private readonly embedder: Embedder) {
    this.floor = topicFloor(embedder.id);
  }

  /** Whether topics are read from meaning in this embedding space at all. */
  get enabled(): boolean {
    return this.floor !== undefined;
  }

  /**
   * The topic of each vector (from this classifier's embedder) of a statement or a question:
   * the topic its nearest examples of that kind vote for, weighted by their similarity (`other`:
   * about something no slot holds), with the share of the vote it won; undefined when no example
   * is near enough.
   */
  async classify(vectors: readonly Float32Array[], kind: SentenceKind): Promise<(TopicReading | undefined)[]> {
    const floor = this.floor;
    if (floor === undefined || vectors.length === 0) return vectors.map(() => undefined);
    const pool = (await this.load())[kind];
    return vectors.map((v) => {
      const nearest = nearestOf(v, pool);
      if (!nearest[0] || nearest[0].similarity < floor) return undefined;
      const votes = new Map<Topic | 'other', number>();
      for (const n of nearest) votes.set(n.topic, (votes.get(n.topic) ?? 0) + n.similarity);
      const total = [...votes.values()].reduce((a, b) => a + b, 0);
      const [topic, weight] = [...votes].sort((a, b) => b[1] - a[1])[0]!;
      return { topic, confidence: weight / total };
    });
  }

  /** The examples of each kind, their vectors scaled to unit length (a dot product is their cosine). */
  private load() {
    this.examples ??= (async () => {
      const { examples, sha256 } = topicExamples();
      const vectors = shippedVectors(this.embedder.id, sha256, examples.length) ?? (await this.embedder.embed(examples.map((e) => e.text)));
      const of = (kind: SentenceKind) => examples.flatMap((example, i) => (example.kind === kind ? [{ topic: example.topic, vector: unit(vectors[i]!) }] : []));
      return { statement: of('statement'), question: of('question') };
    })();
    return this.examples;
  }
}

type Labelled = { topic: Topic | 'other'; vector: Float32Array };

/** The NEIGHBOURS examples nearest to `v`, nearest first (one pass, no sort of the whole pool). */
function nearestOf(v: Float32Array, pool: readonly Labelled[]): { topic: Topic | 'other'; similarity: number }[] {
  const q = unit(v);
  const best: { topic: Topic | 'other'; similarity: number }[] = [];
  for (const e of pool) {
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += q[i]! * e.vector[i]!;
    if (best.length === NEIGHBOURS && dot <= best[NEIGHBOURS - 1]!.similarity) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.similarity < dot) at--;
    best.splice(at, 0, { topic: e.topic, similarity: dot });
    if (best.length > NEIGHBOURS) best.pop();
  }
  return best;
}

function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  return norm === 0 ? v : v.map((x) => x / norm);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
