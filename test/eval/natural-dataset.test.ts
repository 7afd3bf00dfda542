import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { kindProblems, loadDataset, pairingProblems, type Dataset } from '../../src/eval/dataset.js';
import { DOMAINS, FORGET, NOT_KNOWING, SAME_GAME } from '../../src/eval/natural/domains.js';
import { naturalFiles, sizesOf } from '../../src/eval/natural/files.js';
import { generateNatural, partition } from '../../src/eval/natural/generate.js';
import { contentWords, sharedContentWords } from '../../src/eval/natural/lexical.js';
import { sha256 } from '../../src/eval/result-file.js';
import { normalize } from '../../src/eval/scoring.js';

const load = async () => ({ dev: (await loadDataset(naturalFiles.dev)).dataset, test: (await loadDataset(naturalFiles.test)).dataset });
const values = (d: Dataset) => d.tenants.flatMap((t) => (t.facts ?? []).flatMap((f) => [f.value, ...(f.previous ? [f.previous] : [])]));
const has = (text: string, s: string) => normalize(text).includes(normalize(s));

describe('the natural-phrasing datasets', () => {
  it('are what the generator writes, byte for byte, with the hashes of the manifest', async () => {
    const manifest = JSON.parse(await readFile(naturalFiles.manifest, 'utf8')) as { files: Record<string, { sha256: string }> };
    for (const split of ['dev', 'test'] as const) {
      const text = await readFile(naturalFiles[split], 'utf8');
      expect(`${JSON.stringify(generateNatural({ split }), null, 2)}\n`).toBe(text);
      expect(sha256(text)).toBe(manifest.files[split]!.sha256);
    }
  });

  it('have at least 20 pairs per split, the pairing invariant, and every probe kind built to fail a wrong reply', async () => {
    for (const d of Object.values(await load())) {
      expect(d.pairs.length).toBeGreaterThanOrEqual(20);
      expect(pairingProblems(d)).toEqual([]);
      expect(kindProblems(d)).toEqual([]);
      const sizes = sizesOf(d).probes;
      for (const kind of ['recall', 'paraphrase', 'update', 'stale', 'abstention', 'forget', 'same-game', 'deletion', 'control']) expect(sizes[kind], kind).toBeGreaterThanOrEqual(40);
    }
  });

  it('include two splits written by hand apart from the generator (val, val2), that load, keep the pairing invariant and let every probe fail a wrong reply', async () => {
    for (const [split, players, recall, abstention] of [['val', 30, 200, 70], ['val2', 32, 180, 60]] as const) {
      const { dataset } = await loadDataset(naturalFiles[split]);
      expect(pairingProblems(dataset), split).toEqual([]);
      expect(kindProblems(dataset), split).toEqual([]);
      const sizes = sizesOf(dataset);
      expect(sizes.tenants, split).toBe(players);
      expect(sizes.probes.recall, split).toBeGreaterThanOrEqual(recall);
      expect(sizes.probes.abstention, split).toBeGreaterThanOrEqual(abstention);
      // Every value a probe asks for was said in that player's own lines.
      for (const t of dataset.tenants) for (const p of t.probes) for (const r of p.required ?? []) expect(t.setup.some((line) => has(line, r)), `${p.id}: ${r}`).toBe(true);
    }
  });

  it('include hand-written tuning sets (dev-extra) that load, keep the pairing invariant and let every probe fail a wrong reply', async () => {
    for (const name of ['partners-allergies', 'life', 'open-topics', 'updates', 'changes', 'updates2', 'updates3']) {
      const { dataset } = await loadDataset(`eval/datasets/dev-extra/${name}.json`);
      expect(pairingProblems(dataset), name).toEqual([]);
      expect(kindProblems(dataset), name).toEqual([]);
      for (const t of dataset.tenants) for (const p of t.probes) for (const r of p.required ?? []) expect(t.setup.some((line) => has(line, r)), `${p.id}: ${r}`).toBe(true);
    }
  });

  it('has enough material: at least 12 domains, 8 statements and 6 questions each, short generic not-knowing markers', () => {
    expect(DOMAINS.length).toBeGreaterThanOrEqual(12);
    for (const d of DOMAINS) {
      expect(d.statements.length, d.name).toBeGreaterThanOrEqual(8);
      expect(d.questions.length, d.name).toBeGreaterThanOrEqual(6);
      expect(new Set(d.statements).size).toBe(d.statements.length);
      expect(new Set(d.questions).size).toBe(d.questions.length);
      expect(d.values.length).toBeGreaterThanOrEqual(8);
      for (const v of d.values) expect(normalize(v.say ?? v.value)).toContain(normalize(v.value));
    }
    expect(NOT_KNOWING.length).toBeLessThanOrEqual(8);
  });

  it('no value is a substring of another value or of any template (a substring check would confuse them)', () => {
    const all = DOMAINS.flatMap((d) => d.values.map((v) => normalize(v.value)));
    expect(new Set(all).size).toBe(all.length);
    for (const a of all) for (const b of all) if (a !== b) expect(b.includes(a), `${a} in ${b}`).toBe(false);
    const templates = [...DOMAINS.flatMap((d) => [...d.statements, ...d.questions, ...(d.updates ?? []), d.selfTopic, d.theirTopic]), ...FORGET, ...SAME_GAME, ...NOT_KNOWING].map(normalize);
    for (const v of all) for (const t of templates) expect(new RegExp(`\\b${v}`).test(t), `${v} in "${t}"`).toBe(false);
  });

  it('splits by domain and by template: test has domains dev lacks, and no template or value is in both', async () => {
    const parts = partition();
    const testOnly = Object.keys(parts.test.domains).filter((d) => !(d in parts.dev.domains));
    expect(testOnly.length).toBeGreaterThanOrEqual(3);
    for (const d of Object.keys(parts.dev.domains)) {
      const [dev, test] = [parts.dev.domains[d]!, parts.test.domains[d]!];
      for (const k of ['statements', 'questions', 'updates'] as const) {
        const ids = new Set(dev[k].map((t) => t.text));
        expect(test[k].filter((t) => ids.has(t.text)), `${d} ${k}`).toEqual([]);
      }
      expect(test.values.filter((v) => dev.values.includes(v))).toEqual([]);
    }
    expect(parts.test.forget.filter((t) => parts.dev.forget.includes(t))).toEqual([]);
    expect(parts.test.sameGame.filter((t) => parts.dev.sameGame.includes(t))).toEqual([]);

    // And in the committed files: the template ids used, the domains present, the values.
    const { dev, test } = await load();
    const used = (d: Dataset) => new Set([...d.tenants.flatMap((t) => (t.facts ?? []).flatMap((f) => f.templates)), ...d.tenants.flatMap((t) => t.probes.map((p) => p.template!))]);
    const [u1, u2] = [used(dev), used(test)];
    expect([...u1].filter((x) => u2.has(x))).toEqual([]);
    const domains = (d: Dataset) => new Set(d.tenants.flatMap((t) => (t.facts ?? []).map((f) => f.domain)));
    for (const d of testOnly) {
      expect(domains(test).has(d), d).toBe(true);
      expect(domains(dev).has(d), d).toBe(false);
      expect(dev.tenants.flatMap((t) => t.probes).some((p) => p.domain === d)).toBe(false);
    }
    const devValues = new Set(values(dev));
    expect(values(test).filter((v) => devValues.has(v))).toEqual([]);
  });

  it('asks questions that never contain a value and share no content word with what the tenant said about it', async () => {
    expect(sharedContentWords('where do I live?', 'I live in Lisbon')).toEqual(['liv']);
    expect(sharedContentWords('what am I allergic to?', 'my allergy again')).toHaveLength(1);
    expect(contentWords('what do I do in my spare time?')).toEqual(['spar', 'tim']);
    for (const d of Object.values(await load())) {
      const pairValues = new Map(d.pairs.flatMap(([a, b]) => {
        const both = d.tenants.filter((t) => t.alias === a || t.alias === b).flatMap((t) => (t.facts ?? []).flatMap((f) => [f.value, ...(f.previous ? [f.previous] : [])]));
        return [[a, both], [b, both]] as const;
      }));
      for (const t of d.tenants) {
        for (const p of t.probes) {
          for (const v of pairValues.get(t.alias)!) expect(has(p.question, v), `${p.id}: "${p.question}" names ${v}`).toBe(false);
          if (p.kind === 'same-game' || p.kind === 'abstention') continue;
          const fact = t.facts!.find((f) => f.domain === p.domain)!;
          const lines = t.setup.filter((l) => has(l, fact.value) || (fact.previous !== undefined && has(l, fact.previous)));
          expect(lines.length, p.id).toBeGreaterThan(0);
          for (const line of lines) expect(sharedContentWords(p.question, line), `${p.id}: "${p.question}" vs "${line}"`).toEqual([]);
        }
      }
    }
  });

  it('talks like a chat: two facts in one line, filler, the @mention not always in front, update and forget lines', async () => {
    for (const d of Object.values(await load())) {
      const lines = d.tenants.flatMap((t) => t.setup);
      const twoFacts = d.tenants.flatMap((t) => t.setup.filter((l) => (t.facts ?? []).filter((f) => f.status !== 'updated' && has(l, f.value)).length >= 2));
      expect(twoFacts.length).toBeGreaterThanOrEqual(10);
      expect(lines.filter((l) => !l.startsWith('@Elias')).length).toBeGreaterThanOrEqual(30);
      expect(lines.filter((l) => /\b(lol|haha|tbh|hmm|btw)\b/.test(l)).length).toBeGreaterThanOrEqual(60);
      for (const t of d.tenants) {
        const updated = t.facts!.find((f) => f.status === 'updated')!;
        const first = t.setup.findIndex((l) => has(l, updated.previous!));
        const change = t.setup.findIndex((l) => has(l, updated.value));
        expect(first, t.alias).toBeGreaterThanOrEqual(0);
        expect(change, t.alias).toBeGreaterThan(first);
        const forgotten = t.facts!.find((f) => f.status === 'forgotten')!;
        expect(t.setup.findIndex((l) => has(l, forgotten.value))).toBeLessThan(t.setup.length - 1);
        expect(t.setup.at(-1)).toMatch(/forget|delete|erase/i);
      }
    }
  });

  it('gives each paired tenant different values in the same domains, so every probe is also a leak probe', async () => {
    for (const d of Object.values(await load())) {
      for (const [a, b] of d.pairs) {
        const [ta, tb] = [a, b].map((x) => d.tenants.find((t) => t.alias === x)!);
        expect(ta!.facts!.map((f) => f.domain)).toEqual(tb!.facts!.map((f) => f.domain));
        const va = new Set(values({ ...d, tenants: [ta!] }));
        expect(values({ ...d, tenants: [tb!] }).filter((v) => va.has(v))).toEqual([]);
        for (const p of [...ta!.probes, ...tb!.probes]) expect((p.forbidden ?? []).length, p.id).toBeGreaterThan(0);
      }
    }
  });
});
