/**
 * Topics of a life by meaning: which slot of the memory design (DESIGN section 5) a sentence is
 * about, from its embedding, when none of its words names one ("who keeps me company when I come
 * home?" is about a pet; "saw something about needles and couldn't sleep" may be about a fear).
 *
 * Each slot is described by a few sentences written from the slot's definition, not from any
 * dataset; a text's topic is the slot whose descriptions it is closest to, if it is close enough
 * and clearly closer than to the runner-up. The descriptions are embedded once per embedder.
 */
import type { Slot } from '../../language/topics.js';
import type { Embedder } from './types.js';

/** A name is said in so many ways that only its words tell it ("call me Ada"): not a topic here. */
export type Topic = Exclude<Slot, 'open' | 'name'>;

export const TOPIC_DESCRIPTIONS: Record<Topic, readonly string[]> = {
  occupation: ['My job and what I do for a living', 'I work as a professional in my career', 'I started a new job at a company', 'My shift at work and my boss'],
  home: ['Where I live now, my home and my address', 'The city I moved to and live in', 'My flat in town and the rent I pay', 'We bought a house in a new neighbourhood'],
  origin: ['Where I grew up and where I was born', 'My hometown and the place I come from', 'My childhood in the town I was raised in', 'My parents still live back where I grew up'],
  pet: ['My pet animal at home', 'My dog, my cat or another animal I own', 'My puppy chewed my shoes and my kitten sleeps on my bed', 'Feeding and walking my pet'],
  family: ['My family members and relatives', 'My partner, my spouse, my siblings, my parents and my children', 'My brother and I grew up together', 'My wife and I have been married for ten years'],
  health: ['My health condition, an illness or a diet I follow', 'A medical condition I live with', 'My doctor and the medicine I take'],
  allergy: ['What I am allergic to', 'A food or substance that gives me an allergic reaction', 'Eating certain foods makes my throat swell', 'I carry an epipen in case I eat nuts'],
  likes: ['Things I love and enjoy: my favourite food and music', 'The band, the dish or the artist I am a fan of', 'I went to a concert of my favourite singer', 'My favourite restaurant and the dish I always order'],
  dislikes: ['Things I hate and cannot stand', 'What I dislike', 'I really do not like that kind of food or music'],
  fear: ['What I am afraid of, my phobia', 'What scares and frightens me', 'Something that gives me nightmares and makes me panic', 'I avoid what terrifies me'],
  trip: ['A trip I am planning, my travel and holidays', 'Where I am travelling to next', 'I am flying abroad next month and packing my bags', 'Our holiday destination this summer'],
  hobby: ['My hobby and what I do in my spare time', 'A sport or pastime I practise for fun', 'I took up a craft and practise it every weekend', 'I go climbing and play tennis with friends'],
};

/**
 * How close a text must be to its topic, and by how much closer than to the next one, per
 * embedding space; calibrated on the evaluation's dev split for the sentence encoder only. In a
 * space without a calibration (feature hashing, a remote model) no topic is read from meaning.
 */
export function topicFloor(embedderId: string): number | undefined {
  return embedderId.startsWith('use-lite') ? 0.25 : undefined;
}
export const TOPIC_MARGIN = 0.0;

export class TopicClassifier {
  private prototypes?: Promise<{ topic: Topic; vector: Float32Array }[]>;
  private readonly floor: number | undefined;

  constructor(private readonly embedder: Embedder) {
    this.floor = topicFloor(embedder.id);
  }

  /** Whether topics are read from meaning in this embedding space at all. */
  get enabled(): boolean {
    return this.floor !== undefined;
  }

  /** The topic of each vector (from this classifier's embedder), or undefined when none is clear. */
  async classify(vectors: readonly Float32Array[]): Promise<(Topic | undefined)[]> {
    const floor = this.floor;
    if (floor === undefined || vectors.length === 0) return vectors.map(() => undefined);
    const prototypes = await this.load();
    return vectors.map((v) => {
      const best = new Map<Topic, number>();
      for (const p of prototypes) best.set(p.topic, Math.max(best.get(p.topic) ?? -1, cosine(v, p.vector)));
      const ranked = [...best].sort((a, b) => b[1] - a[1]);
      const [first, second] = ranked;
      if (!first || first[1] < floor || (second && first[1] - second[1] < TOPIC_MARGIN)) return undefined;
      return first[0];
    });
  }

  private load() {
    this.prototypes ??= (async () => {
      const entries = Object.entries(TOPIC_DESCRIPTIONS).flatMap(([topic, texts]) => texts.map((text) => ({ topic: topic as Topic, text })));
      const vectors = await this.embedder.embed(entries.map((e) => e.text));
      return entries.map((e, i) => ({ topic: e.topic, vector: vectors[i]! }));
    })();
    return this.prototypes;
  }
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
