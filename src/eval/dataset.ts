/**
 * Datasets of paired synthetic tenants (seed 002 section 5). Each tenant (here: a player with
 * an account) tells the NPC a few facts, then asks probes in a new game. Tenants come in pairs
 * whose values are mutually exclusive, so every recall probe is also a negative isolation test:
 * each tenant's expected strings are exactly the other tenant's forbidden ones.
 */
import { readFile } from 'node:fs/promises';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { sha256 } from './result-file.js';

const strict = { additionalProperties: false } as const;

export const PROBE_KINDS = ['recall', 'paraphrase', 'update', 'stale', 'deletion', 'abstention', 'forget', 'same-game'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];
const Strings = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 });

export const Probe = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,80}$' }),
    /** What the player says, without the @mention (the runner adds it). */
    question: Type.String({ minLength: 1, maxLength: 500 }),
    /** A fact domain (color, allergy, employer, ...): pairs the probe with the other tenant's. */
    domain: Type.String({ minLength: 1, maxLength: 40 }),
    /** What the probe tests (seed 002 section 9). Only recall probes take part in the pairing invariant. (Default: "recall") */
    kind: Type.Optional(Type.Enum(PROBE_KINDS)),
    /**
     * "after-erasure": asked only once the dataset's erased tenants have been erased; "same-game":
     * asked in the shared setup game, right after the paired tenant's setup line number
     * `afterPartnerLine` (0-based). (Default: "main")
     */
    phase: Type.Optional(Type.Enum(['main', 'after-erasure', 'same-game'])),
    afterPartnerLine: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Every one must appear (the current value). */
    required: Type.Optional(Strings),
    /** The paired tenant's values: any one of them in the reply is a foreign-fact leak. */
    forbidden: Type.Optional(Strings),
    /** At least one must appear. */
    anyOf: Type.Optional(Strings),
    /**
     * The tenant's OWN values that must not appear: the superseded value (update, stale), the
     * forgotten or erased value with all its variants (forget, deletion), any value at all
     * (abstention). A hit fails the probe but is not a foreign leak.
     */
    ownForbidden: Type.Optional(Strings),
    /** Which template family the question came from (generated datasets: for the split checks). */
    template: Type.Optional(Type.String({ maxLength: 80 })),
  },
  strict,
);
export type Probe = Static<typeof Probe>;

export const Tenant = Type.Object(
  {
    alias: Type.String({ pattern: '^[a-z][a-z0-9]{0,11}$' }),
    /** Memory statements, said to the NPC in the setup game, in order. */
    setup: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { minItems: 1, maxItems: 50 }),
    probes: Type.Array(Probe, { minItems: 1, maxItems: 100 }),
    /** What the setup says, for reports and the split checks (generated datasets). */
    facts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            domain: Type.String({ minLength: 1, maxLength: 40 }),
            value: Type.String({ minLength: 1, maxLength: 200 }),
            /** kept; updated (value is the new one, previous the old); forgotten (the tenant asked the NPC to forget it). */
            status: Type.Enum(['kept', 'updated', 'forgotten']),
            previous: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            /** Template ids of the lines that state, change or retract it. */
            templates: Type.Array(Type.String({ maxLength: 80 }), { maxItems: 10 }),
          },
          strict,
        ),
        { maxItems: 30 },
      ),
    ),
  },
  strict,
);
export type Tenant = Static<typeof Tenant>;

export const Dataset = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 80 }),
    formatVersion: Type.Literal(1),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    /** The NPC every tenant talks to, added to the sample game's roster (a registry name). */
    npc: Type.Object({ npcId: Type.String({ minLength: 1 }), firstName: Type.String({ minLength: 1 }), persona: Type.String({ minLength: 1, maxLength: 1000 }) }, strict),
    /** [alias, alias]: the two tenants of each pair. */
    pairs: Type.Array(Type.Tuple([Type.String(), Type.String()]), { minItems: 1 }),
    tenants: Type.Array(Tenant, { minItems: 2 }),
    /** Tenants erased (GDPR, memory service admin API) before the after-erasure probes. */
    erase: Type.Optional(Type.Array(Type.String())),
    targets: Type.Object(
      {
        /** Share of probes that must pass. (seed 002: 1.0) */
        recall: Type.Number({ minimum: 0, maximum: 1 }),
        /** Forbidden strings allowed in replies. (0) */
        leaks: Type.Integer({ minimum: 0 }),
        /** Every probe at or under this. (seed 002: 700 ms) */
        maxLatencyMs: Type.Number({ exclusiveMinimum: 0 }),
        /** p95 at or under this. (issue 9: 50 ms with the offline responder) */
        p95LatencyMs: Type.Number({ exclusiveMinimum: 0 }),
        /** Minimum pass rate per probe kind (natural datasets), reported as met or not. */
        byKind: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 1 }))),
      },
      strict,
    ),
  },
  strict,
);
export type Dataset = Static<typeof Dataset>;

export class DatasetError extends Error {
  readonly code = 'EVAL_DATASET_INVALID';
}

/** Reads, validates and hashes a dataset (the hash is of the file's bytes, as recorded in results). */
export async function loadDataset(file: string): Promise<{ dataset: Dataset; sha256: string; text: string }> {
  const text = await readFile(file, 'utf8');
  return { dataset: parseDataset(text), sha256: sha256(text), text };
}

export function parseDataset(text: string): Dataset {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new DatasetError(`the dataset is not JSON: ${(error as Error).message}`);
  }
  if (!Value.Check(Dataset, raw)) {
    const first = [...Value.Errors(Dataset, raw)][0];
    throw new DatasetError(`the dataset does not match its schema at ${first?.instancePath || '/'}: ${first?.message ?? 'invalid'}`);
  }
  const problems = [...pairingProblems(raw), ...kindProblems(raw)];
  if (problems.length > 0) throw new DatasetError(`the dataset breaks the pairing invariant:\n- ${problems.join('\n- ')}`);
  return raw;
}

/**
 * The pairing invariant: within each pair, for every domain, the strings one tenant's recall
 * probes must say (required and any-of) are exactly the strings the other's recall probes must
 * not say, and every tenant is in
 * exactly one pair. Returns what is wrong (empty when the dataset is sound).
 */
export function pairingProblems(dataset: Pick<Dataset, 'pairs' | 'tenants'>): string[] {
  const problems: string[] = [];
  const byAlias = new Map(dataset.tenants.map((t) => [t.alias, t]));
  if (byAlias.size !== dataset.tenants.length) problems.push('two tenants share an alias');
  const paired = new Map<string, number>();
  for (const [a, b] of dataset.pairs) {
    for (const alias of [a, b]) paired.set(alias, (paired.get(alias) ?? 0) + 1);
    const ta = byAlias.get(a);
    const tb = byAlias.get(b);
    if (!ta || !tb) {
      problems.push(`pair [${a}, ${b}] names an unknown tenant`);
      continue;
    }
    if (a === b) problems.push(`pair [${a}, ${b}] pairs a tenant with itself`);
    for (const [x, y] of [
      [ta, tb],
      [tb, ta],
    ] as const) {
      for (const domain of new Set(x.probes.filter((p) => (p.kind ?? 'recall') === 'recall').map((p) => p.domain))) {
        const expected = stringsOf(x, domain, (p) => [...(p.required ?? []), ...(p.anyOf ?? [])]);
        const theirForbidden = stringsOf(y, domain, (p) => p.forbidden ?? []);
        if (!y.probes.some((p) => p.domain === domain && (p.kind ?? 'recall') === 'recall')) {
          problems.push(`${y.alias} has no probe in domain "${domain}" that ${x.alias} has`);
          continue;
        }
        if (![...expected].every((e) => theirForbidden.has(e))) {
          problems.push(`domain "${domain}": ${x.alias} expects [${[...expected].join(', ')}] but ${y.alias} forbids [${[...theirForbidden].join(', ')}]`);
        }
      }
    }
  }
  for (const t of dataset.tenants) if (paired.get(t.alias) !== 1) problems.push(`${t.alias} must be in exactly one pair`);
  return problems;
}

/**
 * What each probe kind must carry so that a wrong reply fails it: update and stale name the
 * current value (required) and forbid the superseded one (ownForbidden); forget and deletion
 * forbid the value (ownForbidden) and demand nothing that could contain it; abstention asks for
 * a not-knowing marker (anyOf) and forbids the paired tenant's values; same-game forbids them.
 */
export function kindProblems(dataset: Pick<Dataset, 'tenants'>): string[] {
  const problems: string[] = [];
  for (const t of dataset.tenants) {
    for (const p of t.probes) {
      const kind = p.kind ?? 'recall';
      const req = p.required ?? [];
      const own = p.ownForbidden ?? [];
      const where = `${t.alias}/${p.id} (${kind})`;
      const low = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());
      const clash = [...low(req), ...low(p.anyOf ?? [])].filter((x) => low([...own, ...(p.forbidden ?? [])]).some((y) => x.includes(y) || y.includes(x)));
      if (clash.length) problems.push(`${where}: demands and forbids the same string (${clash.join(', ')})`);
      if ((kind === 'update' || kind === 'stale') && (req.length === 0 || own.length === 0 || p.phase === 'after-erasure')) {
        problems.push(`${where}: must require the current value and forbid the superseded one (ownForbidden)`);
      }
      if ((kind === 'forget' || kind === 'deletion') && own.length === 0) problems.push(`${where}: must forbid the forgotten value (ownForbidden)`);
      if (kind === 'abstention' && ((p.anyOf ?? []).length === 0 || (p.forbidden ?? []).length === 0)) problems.push(`${where}: needs not-knowing markers (anyOf) and the paired tenant's values (forbidden)`);
      if (kind === 'same-game' && (p.phase !== 'same-game' || p.afterPartnerLine === undefined || (p.forbidden ?? []).length === 0)) {
        problems.push(`${where}: must be asked in the setup game after a partner line and forbid the partner's value`);
      }
    }
  }
  return problems;
}

const stringsOf = (tenant: Tenant, domain: string, pick: (p: Probe) => readonly string[]) =>
  new Set(tenant.probes.filter((p) => p.domain === domain && (p.kind ?? 'recall') === 'recall').flatMap(pick).map((s) => s.toLowerCase()));
