/**
 * The natural-phrasing dataset: paired tenants tell the NPC things the way people type in a game
 * chat (many statement templates per domain, two facts in one message, filler, slang, light
 * typos, the @mention anywhere in the line), then ask questions that share no content word with
 * what they said. Deterministic from a seed.
 *
 * Splits: the dev and test splits are separated BEFORE generation, by domain (some domains exist
 * only in test) and, for the shared domains, by template: statement, question, update, forget
 * and same-game templates, and the values themselves, are shuffled with the seed and partitioned
 * (`partition`), so no template and no value appears in both splits.
 *
 * Per pair: six domains; both tenants get different (mutually exclusive) values in each, so every
 * probe doubles as a leak probe: the partner's values are `forbidden`. Four facts are kept
 * (recall + paraphrase), one is changed later in the chat (update + stale), one is retracted
 * ("forget what I said about ...": forget). Two abstention probes ask about domains never
 * mentioned. One same-game probe: in the shared setup game, right after the partner said
 * something, the tenant asks the NPC what the partner said. After the erasure of the pair's first
 * tenant (memory service admin API), deletion probes for it and control recall probes for the
 * second.
 */
import type { Dataset, Probe, Tenant } from '../dataset.js';
import { rng } from '../stats.js';
import { normalize } from '../scoring.js';
import { DOMAINS, FORGET, JOINERS, NOT_KNOWING, PREFIXES, SAME_GAME, SLANG, SMALL_TALK, SUFFIXES, type Value } from './domains.js';
import { sharedContentWords } from './lexical.js';

export type SplitName = 'dev' | 'test';
export const DEFAULT_SEED = 2025;
export const NPC = { npcId: 'npc-elias-vance', firstName: 'Elias', persona: 'Elias Vance, the archivist. Warm, precise, curious about people.' };

export interface Template {
  id: string;
  text: string;
}

export interface DomainPart {
  statements: Template[];
  questions: Template[];
  updates: Template[];
  values: Value[];
  selfTopic: string;
  theirTopic: string;
}

export interface SplitPart {
  domains: Record<string, DomainPart>;
  forget: Template[];
  sameGame: Template[];
}

/** The template (and value) partition, decided before any line is generated. */
export function partition(seed = DEFAULT_SEED): Record<SplitName, SplitPart> {
  const next = rng(seed);
  const out: Record<SplitName, SplitPart> = { dev: { domains: {}, forget: [], sameGame: [] }, test: { domains: {}, forget: [], sameGame: [] } };
  const halve = <T>(list: readonly T[]): [T[], T[]] => {
    const s = shuffle(list, next);
    const half = Math.ceil(s.length / 2);
    return [s.slice(half), s.slice(0, half)]; // [dev, test]: test gets the odd one
  };
  const ids = (prefix: string, list: readonly string[]) => list.map((text, i) => ({ id: `${prefix}${i}`, text }));
  for (const d of DOMAINS) {
    const all = {
      statements: ids(`${d.name}.s`, d.statements),
      questions: ids(`${d.name}.q`, d.questions),
      updates: ids(`${d.name}.u`, d.updates ?? []),
      values: d.values,
    };
    if (d.testOnly) {
      out.test.domains[d.name] = { ...all, selfTopic: d.selfTopic, theirTopic: d.theirTopic };
      continue;
    }
    const [sd, st] = halve(all.statements);
    const [qd, qt] = halve(all.questions);
    const [ud, ut] = halve(all.updates);
    const [vd, vt] = halve(all.values);
    out.dev.domains[d.name] = { statements: sd, questions: qd, updates: ud, values: vd, selfTopic: d.selfTopic, theirTopic: d.theirTopic };
    out.test.domains[d.name] = { statements: st, questions: qt, updates: ut, values: vt, selfTopic: d.selfTopic, theirTopic: d.theirTopic };
  }
  [out.dev.forget, out.test.forget] = halve(ids('forget.', FORGET));
  [out.dev.sameGame, out.test.sameGame] = halve(ids('same-game.', SAME_GAME));
  return out;
}

interface Fact {
  domain: string;
  value: Value;
  /** Updated facts: the earlier value. */
  old?: Value;
  status: 'kept' | 'updated' | 'forgotten';
  statement: Template;
  update?: Template;
}

export interface GenerateOptions {
  seed?: number;
  split: SplitName;
  pairs?: number;
}

const DOMAINS_PER_PAIR = 6;

export function generateNatural(options: GenerateOptions): Dataset {
  const seed = options.seed ?? DEFAULT_SEED;
  const part = partition(seed)[options.split];
  const pairCount = options.pairs ?? 20;
  const next = rng(seed * 7919 + (options.split === 'dev' ? 11 : 13));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const chance = (p: number) => next() < p;
  const domainNames = Object.keys(part.domains);
  const tenants: Tenant[] = [];
  const pairs: [string, string][] = [];

  for (let i = 0; i < pairCount; i++) {
    const aliases = [`${options.split[0]}${i}a`, `${options.split[0]}${i}b`] as const;
    pairs.push([aliases[0], aliases[1]]);
    // Six domains; one with update lines is changed, another is retracted.
    let chosen = shuffle(domainNames, next).slice(0, DOMAINS_PER_PAIR);
    if (!chosen.some((d) => part.domains[d]!.updates.length > 0)) chosen = [shuffle(domainNames.filter((d) => part.domains[d]!.updates.length > 0), next)[0]!, ...chosen.slice(1)];
    const updated = chosen.find((d) => part.domains[d]!.updates.length > 0)!;
    const forgotten = chosen.filter((d) => d !== updated).at(-1)!;
    const kept = chosen.filter((d) => d !== updated && d !== forgotten);
    const unused = domainNames.filter((d) => !chosen.includes(d));
    // Values: two per domain (four for the changed one), all different.
    const drawn = Object.fromEntries(chosen.map((d) => [d, shuffle(part.domains[d]!.values, next).slice(0, 4)]));
    const facts: [Fact[], Fact[]] = [[], []];
    for (const t of [0, 1] as const) {
      for (const d of chosen) {
        const statements = shuffle(part.domains[d]!.statements, next);
        const statement = statements[t % statements.length]!;
        if (d === updated) facts[t].push({ domain: d, value: drawn[d]![2 + t]!, old: drawn[d]![t]!, status: 'updated', statement, update: pick(part.domains[d]!.updates) });
        else facts[t].push({ domain: d, value: drawn[d]![t]!, status: d === forgotten ? 'forgotten' : 'kept', statement });
      }
    }
    const valuesOf = (fs: Fact[]) => fs.flatMap((f) => [f.value.value, ...(f.old ? [f.old.value] : [])]);

    const rendered = [0, 1].map((t) => renderTenant(facts[t as 0 | 1], part, { pick, chance, next, kept }));
    for (const t of [0, 1] as const) {
      const alias = aliases[t];
      const other = (1 - t) as 0 | 1;
      const mine = facts[t];
      const theirs = facts[other];
      const theirValues = (d: string) => theirs.filter((f) => f.domain === d).flatMap((f) => [f.value.value, ...(f.old ? [f.old.value] : [])]);
      const { setup, questionsFor } = rendered[t]!;
      const probes: Probe[] = [];
      const ask = (q: Template) => renderQuestion(q.text, { pick, chance });
      for (const f of mine) {
        const qs = questionsFor(f.domain);
        const forbidden = theirValues(f.domain);
        if (f.status === 'kept') {
          probes.push({ id: `${alias}-${f.domain}-recall`, domain: f.domain, kind: 'recall', question: ask(qs[0]!), template: qs[0]!.id, required: [f.value.value], forbidden });
          probes.push({ id: `${alias}-${f.domain}-paraphrase`, domain: f.domain, kind: 'paraphrase', question: ask(qs[1]!), template: qs[1]!.id, required: [f.value.value], forbidden });
        } else if (f.status === 'updated') {
          probes.push({ id: `${alias}-${f.domain}-update`, domain: f.domain, kind: 'update', question: ask(qs[0]!), template: qs[0]!.id, required: [f.value.value], forbidden, ownForbidden: [f.old!.value] });
          probes.push({ id: `${alias}-${f.domain}-stale`, domain: f.domain, kind: 'stale', question: ask(qs[1]!), template: qs[1]!.id, required: [f.value.value], forbidden, ownForbidden: [f.old!.value] });
        } else {
          probes.push({ id: `${alias}-${f.domain}-forget`, domain: f.domain, kind: 'forget', question: ask(qs[0]!), template: qs[0]!.id, forbidden, ownForbidden: [f.value.value] });
        }
      }
      // Abstention: two domains nobody in the pair mentioned.
      for (const d of shuffle(unused, next).slice(0, 2)) {
        const q = pick(part.domains[d]!.questions);
        probes.push({
          id: `${alias}-${d}-abstention`,
          domain: d,
          kind: 'abstention',
          question: ask(q),
          template: q.id,
          anyOf: [...NOT_KNOWING],
          forbidden: valuesOf(theirs),
          ownForbidden: valuesOf(mine),
        });
      }
      // Same game: right after the partner's line about one of their kept facts, ask what they said.
      const target = pick(theirs.filter((f) => f.status === 'kept'));
      const sg = pick(part.sameGame);
      probes.push({
        id: `${alias}-${target.domain}-same-game`,
        domain: target.domain,
        kind: 'same-game',
        phase: 'same-game',
        afterPartnerLine: rendered[other]!.lineOf(target.domain),
        question: renderQuestion(sg.text.replace('{t}', part.domains[target.domain]!.theirTopic), { pick, chance }),
        template: sg.id,
        forbidden: theirValues(target.domain),
      });
      // After the erasure of the pair's first tenant: deletion (first) and control recall (second).
      for (const f of mine.filter((x) => x.status === 'kept')) {
        const q = questionsFor(f.domain)[0]!;
        probes.push(
          t === 0
            ? { id: `${alias}-${f.domain}-deletion`, domain: f.domain, kind: 'deletion', phase: 'after-erasure', question: ask(q), template: q.id, forbidden: theirValues(f.domain), ownForbidden: [f.value.value] }
            : { id: `${alias}-${f.domain}-control`, domain: f.domain, kind: 'recall', phase: 'after-erasure', question: ask(q), template: q.id, required: [f.value.value], forbidden: theirValues(f.domain) },
        );
      }
      tenants.push({
        alias,
        setup,
        probes,
        facts: mine.map((f) => ({
          domain: f.domain,
          value: f.value.value,
          status: f.status,
          ...(f.old ? { previous: f.old.value } : {}),
          templates: [f.statement.id, ...(f.update ? [f.update.id] : []), ...(rendered[t]!.forgetTemplate && f.status === 'forgotten' ? [rendered[t]!.forgetTemplate] : [])],
        })),
      });
    }
  }
  const testOnly = DOMAINS.filter((d) => d.testOnly).map((d) => d.name);
  return {
    name: `natural-${options.split}`,
    formatVersion: 1,
    description:
      `Natural-phrasing paired-tenant dataset, ${options.split} split (seed ${seed}, ${pairCount} pairs; generated by src/eval/natural/generate.ts). ` +
      `Domains: ${domainNames.join(', ')}${options.split === 'test' ? ` (test only: ${testOnly.join(', ')})` : ''}. Templates and values partitioned dev/test before generation. ` +
      'Per tenant: 4 kept facts (recall, paraphrase), 1 changed (update, stale), 1 retracted (forget), 2 abstention, 1 same-game probe; after erasing the first tenant of each pair, deletion probes for it and control recall probes for the second.',
    npc: NPC,
    pairs,
    tenants,
    erase: pairs.map(([first]) => first),
    targets: { recall: 0.75, leaks: 0, maxLatencyMs: 700, p95LatencyMs: 50, byKind: { recall: 0.75, paraphrase: 0.65, update: 0.75, stale: 0.75, abstention: 0.85, forget: 0.8 } },
  };
}

interface Rng {
  pick: <T>(list: readonly T[]) => T;
  chance: (p: number) => boolean;
  next?: () => number;
}

/**
 * A tenant's setup lines: one line per fact, two facts joined in one line when the questions
 * still fit, small talk, the update line, then the forget line. Returns the lines, which line
 * states each domain, and for each domain the questions that share no content word with the
 * lines about it (at least two; an error otherwise, which the tests would catch).
 */
function renderTenant(facts: Fact[], part: SplitPart, r: Rng & { next: () => number; kept: string[] }) {
  const byDomain = new Map(facts.map((f) => [f.domain, f]));
  // A statement says what was true then: the earlier value of a fact changed later.
  const asSaid = (f: Fact): Fact => (f.old ? { ...f, value: f.old, old: undefined } : f);
  const fill = (text: string, f: Fact, n = '') =>
    text
      .replaceAll(`{av${n}}`, withArticle(say(f.value)))
      .replaceAll(`{v${n}}`, say(f.value))
      .replaceAll(`{oldav${n}}`, f.old ? withArticle(say(f.old)) : '')
      .replaceAll(`{old${n}}`, f.old ? say(f.old) : '');
  // Bodies: one fact each, or two kept facts joined.
  const order = shuffle(facts, r.next);
  const bodies: Fact[][] = [];
  for (const f of order) {
    const last = bodies.at(-1);
    if (last && last.length === 1 && last[0]!.status === 'kept' && f.status === 'kept' && r.chance(0.45)) last.push(f);
    else bodies.push([f]);
  }
  const lines: { text: string; domains: string[] }[] = [];
  const renderBody = (group: Fact[]) => {
    const template = group.length === 1 ? group[0]!.statement.text : `${group[0]!.statement.text}${r.pick(JOINERS)}${renumber(group[1]!.statement.text)}`;
    const noisy = noise(template, r);
    let text = noisy;
    text = fill(text, asSaid(group[0]!));
    if (group[1]) text = fill(text, asSaid(group[1]), '2');
    return decorate(text, r);
  };
  for (const group of bodies) {
    const text = renderBody(group);
    lines.push({ text, domains: group.map((f) => f.domain) });
  }
  if (r.chance(0.5)) lines.splice(Math.floor(r.next() * (lines.length + 1)), 0, { text: decorate(r.pick(SMALL_TALK), r), domains: [] });
  const updated = facts.find((f) => f.status === 'updated');
  if (updated) lines.push({ text: decorate(fill(noise(updated.update!.text, r), updated), r), domains: [`update:${updated.domain}`] });
  const forgotten = facts.find((f) => f.status === 'forgotten');
  let forgetTemplate: string | undefined;
  if (forgotten) {
    const t = r.pick(part.forget);
    forgetTemplate = t.id;
    lines.push({ text: decorate(t.text.replace('{t}', part.domains[forgotten.domain]!.selfTopic), r), domains: [] });
  }
  const about = (d: string) => lines.filter((l) => l.domains.includes(d) || l.domains.includes(`update:${d}`)).map((l) => l.text);
  const clean = (d: string) => {
    const f = byDomain.get(d)!;
    return [fill(f.statement.text, asSaid(f)), ...(f.update ? [fill(f.update.text, f)] : [])];
  };
  const compatible = (d: string) => part.domains[d]!.questions.filter((q) => [...about(d), ...clean(d)].every((line) => sharedContentWords(q.text, line).length === 0));
  // A joined line may bring words that clash with a question: split it again if so.
  for (const [i, l] of [...lines.entries()].reverse()) {
    if (l.domains.length === 2 && l.domains.some((d) => compatible(d).length < 2)) {
      const group = l.domains.map((d) => byDomain.get(d)!);
      lines.splice(i, 1, ...group.map((f) => ({ text: renderBody([f]), domains: [f.domain] })));
    }
  }
  const questions = new Map<string, Template[]>();
  for (const f of facts) {
    const found = shuffle(compatible(f.domain), r.next);
    if (found.length < 2) throw new Error(`domain ${f.domain}: fewer than two questions share no content word with "${about(f.domain).join(' / ')}" (statement ${f.statement.id})`);
    questions.set(f.domain, found);
  }
  for (const f of facts) {
    const [stated, changed] = [lines.find((l) => l.domains.includes(f.domain))!.text, lines.find((l) => l.domains.includes(`update:${f.domain}`))?.text];
    if (!normalize(stated).includes(normalize(asSaid(f).value.value))) throw new Error(`the line about ${f.domain} lost its value: ${stated}`);
    if (changed !== undefined && !normalize(changed).includes(normalize(f.value.value))) throw new Error(`the update of ${f.domain} lost its value: ${changed}`);
  }
  return {
    setup: lines.map((l) => l.text),
    lineOf: (d: string) => lines.findIndex((l) => l.domains.includes(d)),
    questionsFor: (d: string) => questions.get(d)!,
    forgetTemplate,
  };
}

const say = (v: Value) => v.say ?? v.value;
const withArticle = (word: string) => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
const renumber = (text: string) => text.replace(/\{(av|v|oldav|old)\}/g, '{$12}');

/** Slang and a typo, on the template's own words only (never a value: placeholders are untouched). */
function noise(template: string, r: Rng): string {
  let text = template;
  if (r.chance(0.3)) for (const [re, to] of SLANG) text = text.replace(re, to);
  if (r.chance(0.2)) {
    const words = [...text.matchAll(/(?<![{\w])[a-z]{5,}(?![}\w])/g)];
    if (words.length) {
      const m = r.pick(words);
      const w = m[0];
      const at = 1 + Math.floor((r.next ? r.next() : 0) * (w.length - 3));
      const typo = w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2);
      text = text.slice(0, m.index) + typo + text.slice(m.index! + w.length);
    }
  }
  return text;
}

/** Filler around the line and the @mention: in front, after the filler, or at the end. */
function decorate(body: string, r: Rng): string {
  const prefix = r.pick(PREFIXES);
  const suffix = /[a-z0-9)]$/i.test(body) ? r.pick(SUFFIXES) : '';
  let text = body;
  if (r.chance(0.25)) text = text.charAt(0).toUpperCase() + text.slice(1);
  const where = r.pick(['front', 'front', 'front', 'after-filler', 'end'] as const);
  const mention = `@${NPC.firstName}`;
  if (where === 'front') return `${mention} ${prefix}${text}${suffix}`;
  if (where === 'after-filler' && prefix) return `${prefix}${mention} ${text}${suffix}`;
  return `${prefix}${text}${suffix} ${mention}`;
}

const QUESTION_PREFIXES = ['', '', '', 'hey ', 'quick q: ', 'so ', 'um ', 'ok '];
function renderQuestion(text: string, r: Rng): string {
  let q = r.pick(QUESTION_PREFIXES) + text;
  if (r.chance(0.25)) q = q.replace(/\?$/, '');
  if (r.chance(0.2)) for (const [re, to] of SLANG) q = q.replace(re, to);
  const mention = `@${NPC.firstName}`;
  return r.chance(0.75) ? `${mention} ${q}` : `${q} ${mention}`;
}

export function shuffle<T>(list: readonly T[], next: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
