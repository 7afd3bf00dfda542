/**
 * A linear reader of topics: multinomial logistic regression over unit-length sentence vectors,
 * trained on the labelled topic examples (statements and questions together). On the examples,
 * each fifth classified by a model trained on the other four, it reads the topic of 80% of the
 * questions where a vote of the seven nearest examples read 74% (docs/eval): a vote follows the
 * wording of the few examples nearest, a weight per topic learns what all of a topic's examples
 * share. It reads what a question asks about; statements are still filed by the vote
 * (`topics.ts` says why).
 *
 * Training is deterministic (zero start, full batches, a fixed number of Adam steps), so the
 * shipped weights (`topic-model.json`, written by `npm run memory -- topic-vectors`) are what
 * training on the shipped examples gives.
 */

export interface TopicWeights {
  topics: string[];
  /** One row per topic: a weight per dimension, then the topic's bias. */
  rows: Float32Array[];
}

/** The L2 penalty and the number of steps, chosen by cross-validation on the examples. */
export const TRAINING = { lambda: 1e-4, steps: 300, rate: 0.05 } as const;

/** Fits one weight row and one bias per topic to `vectors` (unit length) labelled `labels`. */
export function trainTopicWeights(vectors: readonly Float32Array[], labels: readonly string[], training = TRAINING): TopicWeights {
  const topics = [...new Set(labels)].sort();
  const k = topics.length;
  const d = vectors[0]?.length ?? 0;
  const n = vectors.length;
  const label = labels.map((l) => topics.indexOf(l));
  // Parameters and Adam's moments, a topic's weights then its bias, in one flat array per topic.
  const params = Array.from({ length: k }, () => new Float64Array(d + 1));
  const first = params.map(() => new Float64Array(d + 1));
  const second = params.map(() => new Float64Array(d + 1));
  const grad = params.map(() => new Float64Array(d + 1));
  const p = new Float64Array(k);
  for (let step = 1; step <= training.steps; step++) {
    for (const g of grad) g.fill(0);
    for (let i = 0; i < n; i++) {
      const x = vectors[i]!;
      softmax(params, x, p);
      p[label[i]!]! -= 1;
      for (let t = 0; t < k; t++) {
        const share = p[t]! / n;
        const g = grad[t]!;
        for (let j = 0; j < d; j++) g[j]! += share * x[j]!;
        g[d]! += share;
      }
    }
    const fix1 = 1 - 0.9 ** step;
    const fix2 = 1 - 0.999 ** step;
    for (let t = 0; t < k; t++) {
      const [w, g, m, v] = [params[t]!, grad[t]!, first[t]!, second[t]!];
      for (let j = 0; j <= d; j++) {
        const gj = g[j]! + (j < d ? training.lambda * w[j]! : 0);
        m[j] = 0.9 * m[j]! + 0.1 * gj;
        v[j] = 0.999 * v[j]! + 0.001 * gj * gj;
        w[j]! -= (training.rate * (m[j]! / fix1)) / (Math.sqrt(v[j]! / fix2) + 1e-8);
      }
    }
  }
  return { topics, rows: params.map((w) => Float32Array.from(w)) };
}

/** The probability of each topic (in `model.topics` order) for a unit-length vector. */
export function topicProbabilities(model: TopicWeights, x: Float32Array): Float64Array {
  return softmax(model.rows, x, new Float64Array(model.topics.length));
}

/** Softmax of each row's dot product with `x` (the row's last entry is its bias), into `out`. */
function softmax(rows: readonly (Float32Array | Float64Array)[], x: Float32Array, out: Float64Array): Float64Array {
  let max = -Infinity;
  for (let t = 0; t < rows.length; t++) {
    const w = rows[t]!;
    let z = w[x.length]!;
    for (let j = 0; j < x.length; j++) z += w[j]! * x[j]!;
    out[t] = z;
    if (z > max) max = z;
  }
  let sum = 0;
  for (let t = 0; t < rows.length; t++) sum += out[t] = Math.exp(out[t]! - max);
  for (let t = 0; t < rows.length; t++) out[t]! /= sum;
  return out;
}

/** `v` scaled to unit length (a dot product of two is their cosine). */
export function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  return norm === 0 ? v : v.map((x) => x / norm);
}
