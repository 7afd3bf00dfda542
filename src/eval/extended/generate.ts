/**
 * The extended dataset of seed 002 section 9, generated deterministically from a seed:
 * tenant pairs with semantically related but mutually exclusive values in five fact domains,
 * and probes for recall, paraphrase, update, stale facts, deletion and abstention.
 *
 * Leakage between development and evaluation sets is prevented the way the seed asks: the base
 * question templates are split into dev and eval FIRST (seeded shuffle), and paraphrases are
 * generated afterwards from each split's own templates only. A run uses one split.
 *
 * Domains are those the embedded default's rule extractor can store (src/memory/consolidation/
 * extract/rules.ts); seed 002's "allergy" is measured by the seed-002 dataset, where it fails
 * for want of a rule (docs/eval/README.md).
 */
import type { Dataset, Probe, Tenant } from '../dataset.js';
import { rng } from '../stats.js';

interface Domain {
  name: string;
  /** Mutually exclusive values; a pair draws two different ones. */
  values: string[];
  statement: (v: string) => string;
  /** Base question templates (split dev/eval before paraphrasing). */
  questions: string[];
}

export const DOMAINS: Domain[] = [
  {
    name: 'color',
    values: ['teal', 'crimson', 'amber', 'violet', 'ochre', 'indigo', 'scarlet', 'turquoise', 'magenta', 'olive', 'cobalt', 'saffron'],
    statement: (v) => `My favorite color is ${v}.`,
    questions: ['What is my favorite color?', 'Which color is my favorite?', 'Tell me my favorite color.', 'Do you know my favorite color?'],
  },
  {
    name: 'food',
    values: ['sushi', 'lasagna', 'paella', 'ramen', 'goulash', 'tacos', 'risotto', 'dumplings', 'moussaka', 'falafel', 'pierogi', 'curry'],
    statement: (v) => `My favorite food is ${v}.`,
    questions: ['What is my favorite food?', 'Which food is my favorite?', 'Tell me my favorite food.', 'Do you know my favorite food?'],
  },
  {
    name: 'employer',
    values: ['Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Soylent', 'Cyberdyne', 'Tyrell', 'Wonka', 'Stark', 'Wayne', 'Acme'],
    statement: (v) => `I work at ${v}.`,
    questions: ['Where do I work?', 'Do you know where I work?', 'Which company do I work at?', 'Tell me where I work.'],
  },
  {
    name: 'home',
    values: ['Lisbon', 'Oslo', 'Krakow', 'Dublin', 'Porto', 'Bergen', 'Tallinn', 'Ghent', 'Lyon', 'Graz', 'Turin', 'Aarhus'],
    statement: (v) => `I live in ${v}.`,
    questions: ['Where is my home?', 'Which town is my home?', 'Tell me about my home.', 'Do you know my home town?'],
  },
  {
    name: 'pet',
    values: ['Biscuit', 'Pepper', 'Juniper', 'Mango', 'Pickles', 'Waffles', 'Noodle', 'Clover', 'Pretzel', 'Marble', 'Tofu', 'Ziggy'],
    statement: (v) => `My dog is called ${v}.`,
    questions: ['What is my dog called?', 'What is the name of my dog?', 'Tell me what my dog is called.', 'Do you know what my dog is called?'],
  },
];

/** Questions about things never said: the NPC should admit not knowing. */
const ABSTENTION = ['What car do I drive?', 'Which instrument do I play?', 'What is my shoe size?', 'Which team do I support?', 'How old is my sister?', 'What did I study?'];

/** Deterministic paraphrase operators, applied to a split's own templates only. */
const PARAPHRASES: ((q: string) => string)[] = [
  (q) => `Do you still remember this: ${lowerFirst(q)}`,
  (q) => `Quick question, ${lowerFirst(q)}`,
  (q) => q.replace(/\bfavorite\b/g, 'favourite').replace(/\bcolor\b/g, 'colour'),
  (q) => `${q.replace(/[?.]$/, '')}, if you recall?`,
  (q) => q.replace(/^What is\b/, "What's").replace(/^Where is\b/, "Where's").replace(/^Tell me\b/, 'Remind me'),
];

export interface Split {
  dev: Record<string, string[]>;
  eval: Record<string, string[]>;
}

/** The template split, before any paraphrase exists. */
export function splitTemplates(seed: number): Split {
  const next = rng(seed);
  const split: Split = { dev: {}, eval: {} };
  for (const d of [...DOMAINS.map((x) => ({ name: x.name, questions: x.questions })), { name: 'abstention', questions: ABSTENTION }]) {
    const shuffled = shuffle(d.questions, next);
    const half = Math.ceil(shuffled.length / 2);
    split.eval[d.name] = shuffled.slice(0, half);
    split.dev[d.name] = shuffled.slice(half);
  }
  return split;
}

export function generateExtended(options: { seed?: number; pairs?: number; split?: 'dev' | 'eval' } = {}): Dataset {
  const seed = options.seed ?? 2002;
  const pairCount = options.pairs ?? 20;
  const which = options.split ?? 'eval';
  const templates = splitTemplates(seed)[which];
  const next = rng(seed * 31 + (which === 'eval' ? 1 : 2));
  const paraphrase = (q: string) => {
    for (let i = 0; i < PARAPHRASES.length; i++) {
      const out = PARAPHRASES[Math.floor(next() * PARAPHRASES.length)]!(q);
      if (out !== q) return out;
    }
    return `Quick question, ${lowerFirst(q)}`;
  };
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;

  const tenants: Tenant[] = [];
  const pairs: [string, string][] = [];
  for (let i = 0; i < pairCount; i++) {
    const [a, b] = [`p${i}a`, `p${i}b`];
    pairs.push([a, b]);
    // Per domain, two different values; food also gets each tenant's earlier favorite (the update).
    const values = Object.fromEntries(DOMAINS.map((d) => [d.name, shuffle(d.values, next).slice(0, 4)]));
    const own = (t: 0 | 1) => Object.fromEntries(DOMAINS.map((d) => [d.name, values[d.name]![t]!]));
    const old = (t: 0 | 1) => values.food![2 + t]!;
    for (const t of [0, 1] as const) {
      const mine = own(t);
      const theirs = own(t === 0 ? 1 : 0);
      const allValues = [...Object.values(mine), ...Object.values(theirs), old(0), old(1)];
      const forbiddenFor = (domain: string) => [theirs[domain]!, ...(domain === 'food' ? [old(t === 0 ? 1 : 0)] : [])];
      const setup = [`My favorite food is ${old(t)}.`, ...DOMAINS.map((d) => d.statement(mine[d.name]!)).filter((s) => !s.startsWith('My favorite food')), `My favorite food is ${mine.food!} now.`];
      const probes: Probe[] = [];
      for (const d of DOMAINS) {
        const [q1, q2] = [templates[d.name]![0]!, pick(templates[d.name]!)];
        const forbidden = forbiddenFor(d.name);
        probes.push({ id: `${[a, b][t]}-${d.name}-recall`, domain: d.name, kind: 'recall', question: q1, required: [mine[d.name]!], forbidden });
        probes.push({ id: `${[a, b][t]}-${d.name}-paraphrase`, domain: d.name, kind: 'paraphrase', question: paraphrase(q2), required: [mine[d.name]!], forbidden });
      }
      probes.push({ id: `${[a, b][t]}-food-update`, domain: 'food', kind: 'update', question: 'What is my favorite food now?', required: [mine.food!], forbidden: forbiddenFor('food') });
      probes.push({ id: `${[a, b][t]}-food-stale`, domain: 'food', kind: 'stale', question: pick(templates.food!), forbidden: [old(t), ...forbiddenFor('food')] });
      for (const q of shuffle(templates.abstention!, next).slice(0, 2)) {
        probes.push({ id: `${[a, b][t]}-abstain-${slug(q)}`, domain: 'abstention', kind: 'abstention', question: q, anyOf: ["don't know"], forbidden: allValues });
      }
      // Asked after the first tenant of the pair is erased (the second is the control: still recalled).
      for (const d of DOMAINS) {
        probes.push(
          t === 0
            ? { id: `${a}-${d.name}-deletion`, domain: d.name, kind: 'deletion', phase: 'after-erasure', question: templates[d.name]![0]!, forbidden: [mine[d.name]!, ...forbiddenFor(d.name), ...(d.name === 'food' ? [old(0)] : [])] }
            : { id: `${b}-${d.name}-after-erasure`, domain: d.name, kind: 'recall', phase: 'after-erasure', question: templates[d.name]![0]!, required: [mine[d.name]!], forbidden: forbiddenFor(d.name) },
        );
      }
      tenants.push({ alias: [a, b][t]!, setup, probes });
    }
  }
  return {
    name: `extended-${which}`,
    formatVersion: 1,
    description: `Seed 002 section 9, generated (seed ${seed}, ${pairCount} pairs, ${which} split of the templates): five domains; recall, paraphrase, update, stale, abstention; deletion after erasing the first tenant of each pair (the second is the control).`,
    npc: { npcId: 'npc-elias-vance', firstName: 'Elias', persona: 'Elias Vance, the archivist. Warm, precise, curious about people.' },
    pairs,
    tenants,
    erase: pairs.map(([first]) => first),
    targets: { recall: 1, leaks: 0, maxLatencyMs: 700, p95LatencyMs: 50 },
  };
}

function shuffle<T>(list: readonly T[], next: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 30);
