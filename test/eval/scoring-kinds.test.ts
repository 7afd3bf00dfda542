import { describe, expect, it } from 'vitest';
import { kindProblems, type Probe } from '../../src/eval/dataset.js';
import { summarizeExtended } from '../../src/eval/extended/summary.js';
import { holds, type AblationRecord, type PairRecord } from '../../src/eval/extended/run.js';
import { NOT_KNOWING } from '../../src/eval/natural/domains.js';
import { scoreReply } from '../../src/eval/scoring.js';

/** One probe of each kind, as the natural generator writes them (tenant: Lisbon, sold on Oslo; partner: Geneva, Bergen). */
const probes: Record<string, Probe> = {
  recall: { id: 'a-home-recall', domain: 'home', kind: 'recall', question: 'where do I reside?', required: ['Lisbon'], forbidden: ['Geneva'] },
  paraphrase: { id: 'a-home-paraphrase', domain: 'home', kind: 'paraphrase', question: 'what town do I call home?', required: ['Lisbon'], forbidden: ['Geneva'] },
  update: { id: 'a-job-update', domain: 'job', kind: 'update', question: 'what do I do for a living?', required: ['nurse'], forbidden: ['baker', 'dentist'], ownForbidden: ['plumber'] },
  stale: { id: 'a-job-stale', domain: 'job', kind: 'stale', question: "what's my occupation?", required: ['nurse'], forbidden: ['baker', 'dentist'], ownForbidden: ['plumber'] },
  abstention: { id: 'a-fear-abstention', domain: 'fear', kind: 'abstention', question: 'what do I dread?', anyOf: [...NOT_KNOWING], forbidden: ['Geneva', 'baker', 'dentist'], ownForbidden: ['Lisbon', 'nurse', 'plumber'] },
  forget: { id: 'a-allergy-forget', domain: 'allergy', kind: 'forget', question: "what's my allergy?", forbidden: ['sesame'], ownForbidden: ['peanut'] },
  deletion: { id: 'a-home-deletion', domain: 'home', kind: 'deletion', phase: 'after-erasure', question: 'where do I reside?', forbidden: ['Geneva'], ownForbidden: ['Lisbon'] },
  'same-game': { id: 'a-pet-same-game', domain: 'pet', kind: 'same-game', phase: 'same-game', afterPartnerLine: 0, question: 'what did my friend just say about their pet?', forbidden: ['Biscuit'] },
};
const score = (kind: string, reply: string) => scoreReply(reply, probes[kind]!);

describe('the scorer fails a wrong reply, for every probe kind', () => {
  it('recall and paraphrase: the value passes; missing it fails; the partner value fails as a leak', () => {
    for (const kind of ['recall', 'paraphrase']) {
      expect(score(kind, 'You mentioned Lisbon.').pass).toBe(true);
      expect(score(kind, 'Somewhere by the sea?')).toMatchObject({ pass: false, missing: ['Lisbon'] });
      expect(score(kind, 'Geneva, I believe.')).toMatchObject({ pass: false, leaked: ['Geneva'] });
    }
  });

  it('update and stale: must name the current value; the old value fails even next to the new one', () => {
    for (const kind of ['update', 'stale']) {
      expect(score(kind, "You're a nurse now.").pass).toBe(true);
      expect(score(kind, "You're a plumber.")).toMatchObject({ pass: false, missing: ['nurse'], ownLeaked: ['plumber'] });
      expect(score(kind, 'A plumber, or a nurse?')).toMatchObject({ pass: false, missing: [], ownLeaked: ['plumber'] });
      expect(score(kind, "I don't know.")).toMatchObject({ pass: false, missing: ['nurse'] });
    }
  });

  it('abstention: admitting not knowing passes; any own or partner value fails; silence about it fails', () => {
    expect(score('abstention', "I don't know, you haven't told me.").pass).toBe(true);
    expect(score('abstention', 'I’m not sure.').pass).toBe(true); // typographic apostrophe folded
    expect(score('abstention', "I don't know... Geneva?")).toMatchObject({ pass: false, leaked: ['Geneva'] });
    expect(score('abstention', "I don't know. You live in Lisbon though.")).toMatchObject({ pass: false, ownLeaked: ['Lisbon'] });
    expect(score('abstention', 'Spiders, surely.')).toMatchObject({ pass: false, anyOfMissed: true });
  });

  it('forget and deletion: the value fails (whatever else is said); the partner value fails as a leak', () => {
    expect(score('forget', "You asked me to forget that, so I won't say.").pass).toBe(true);
    expect(score('forget', "You're allergic to peanuts.")).toMatchObject({ pass: false, ownLeaked: ['peanut'] });
    expect(score('forget', "I don't know, maybe sesame?")).toMatchObject({ pass: false, leaked: ['sesame'] });
    expect(score('deletion', "I don't know where you live.").pass).toBe(true);
    expect(score('deletion', 'Lisbon!')).toMatchObject({ pass: false, ownLeaked: ['Lisbon'] });
  });

  it("same-game: repeating the partner's value fails", () => {
    expect(score('same-game', "That's for them to tell you.").pass).toBe(true);
    expect(score('same-game', 'They said their dog is Biscuit.')).toMatchObject({ pass: false, leaked: ['Biscuit'] });
  });

  it('refuses probes that could not fail a wrong reply', () => {
    const bad = (p: Partial<Probe>) => kindProblems({ tenants: [{ alias: 'a', setup: ['x'], probes: [{ id: 'p', domain: 'd', question: 'q', ...p }] }] });
    expect(bad({ kind: 'update', required: ['nurse'] })).toHaveLength(1); // no superseded value forbidden
    expect(bad({ kind: 'stale', ownForbidden: ['plumber'] })).toHaveLength(1); // the current value not required
    expect(bad({ kind: 'forget', forbidden: ['sesame'] })).toHaveLength(1);
    expect(bad({ kind: 'forget', ownForbidden: ['peanut'], anyOf: ['peanuts'] })).toHaveLength(1); // demands what it forbids
    expect(bad({ kind: 'deletion', required: ['Lisbon'], ownForbidden: ['Lisbon'] })).toHaveLength(1);
    expect(bad({ kind: 'abstention', forbidden: ['Geneva'] })).toHaveLength(1);
    expect(bad({ kind: 'same-game', forbidden: ['Biscuit'] })).toHaveLength(1);
    for (const p of Object.values(probes)) expect(bad(p), p.id).toEqual([]);
  });
});

describe('the summary classifies failures', () => {
  const record = (kind: string, reply: string, phase = probes[kind]!.phase ?? 'main') => {
    const p = probes[kind]!;
    const expectation = { required: p.required ?? [], forbidden: p.forbidden ?? [], anyOf: p.anyOf ?? [], ...(p.ownForbidden ? { ownForbidden: p.ownForbidden } : {}) };
    return { repetition: 1, tenant: 'a', pairedWith: 'b', probeId: p.id, domain: p.domain, kind: p.kind!, question: p.question, expectation, reply, latencyMs: 1, score: scoreReply(reply, expectation), identityConfirmation: null, pair: 1, phase };
  };
  const pair = (records: ReturnType<typeof record>[]): PairRecord => ({ pair: 1, tenants: ['a', 'b'], setup: [], probes: records, ablations: [], erasures: [] });
  const targets = { recall: 0.75, leaks: 0, maxLatencyMs: 700, p95LatencyMs: 50, byKind: { recall: 0.75, abstention: 0.85, update: 0.75, forget: 0.8 } };

  it("counts an abstention answered with the partner's value as a foreign leak, and misses the target", () => {
    const s = summarizeExtended([pair([record('abstention', "I don't know. Geneva?"), record('recall', 'Lisbon')])], { tenants: [], targets });
    expect(s.foreignLeaks).toEqual([expect.objectContaining({ probeId: 'a-fear-abstention', kind: 'abstention', leaked: 'Geneva', where: 'engine' })]);
    expect(s.byKind.abstention).toMatchObject({ passed: 0, probes: 1 });
    expect(s.targets.foreignLeaks).toMatchObject({ actual: 1, met: false });
    expect(s.ok).toBe(false);
  });

  it('lists update answered with the old value as stale, forget answered with the value as a deletion failure, same-game leaks by place', () => {
    const s = summarizeExtended(
      [pair([record('update', "You're a plumber."), record('forget', 'Peanuts, you said.'), record('same-game', 'Biscuit!'), record('abstention', 'You live in Lisbon.')])],
      { tenants: [], targets },
    );
    expect(s.staleAnswers).toEqual([expect.objectContaining({ probeId: 'a-job-update', leaked: 'plumber' })]);
    expect(s.deletionFailures).toEqual([expect.objectContaining({ probeId: 'a-allergy-forget', leaked: ['peanut'] })]);
    expect(s.foreignLeaks).toEqual([expect.objectContaining({ probeId: 'a-pet-same-game', where: 'same-game' })]);
    expect(s.abstentionOwnValues).toEqual([expect.objectContaining({ leaked: ['Lisbon'] })]);
    expect(s.targets.update).toMatchObject({ actual: 0, met: false });
    expect(s.targets.forget).toMatchObject({ actual: 0, met: false });
  });

  it('tells where a miss comes from: the value not among the facts, held but not said, or held and another answer given', () => {
    const fact = (summary: string) => ({ id: summary, key: 'speaker.home', value: summary, summary, standing: 'claim' as const, confidence: 0.8, score: 1 });
    const ablation = (kind: string, reply: string, facts: string[]): AblationRecord => {
      const p = probes[kind]!;
      return { pair: 1, tenant: 'a', probeId: p.id, kind, scope: 'new-game', config: 'full', reply, score: scoreReply(reply, p), tokens: 1, timingsMs: { retrieve: 1, build: 1 }, held: holds(facts.map(fact), p), named: holds(facts.map(fact), { required: p.required, anyOf: p.anyOf }) };
    };
    // A fact naming the old value beside the new one does not hold the update: what is said back must not name it.
    expect(holds([fact('You went from plumber to nurse.')], probes.update!)).toBe(false);
    expect(holds([fact('You are a nurse now.')], probes.update!)).toBe(true);
    const s = summarizeExtended(
      [{ ...pair([]), ablations: [
        ablation('recall', 'You told me you live in Lisbon.', ['You live in Lisbon.']),
        ablation('recall', "I don't know; you haven't told me that.", ['You keep bees.']),
        ablation('paraphrase', "I don't know; you haven't told me that.", ['You live in Lisbon.']),
        ablation('update', 'You told me you keep bees.', ['You keep bees.', 'You are a nurse now.']),
        ablation('stale', 'You told me you went from plumber to nurse.', ['You went from plumber to nurse.']),
      ] }],
      { tenants: [], targets },
    );
    expect(s.misses).toEqual({
      recall: { failed: 1, notHeld: 1, namedBeside: 0, heldNotSaid: 0, heldOtherSaid: 0 },
      paraphrase: { failed: 1, notHeld: 0, namedBeside: 0, heldNotSaid: 1, heldOtherSaid: 0 },
      update: { failed: 1, notHeld: 0, namedBeside: 0, heldNotSaid: 0, heldOtherSaid: 1 },
      stale: { failed: 1, notHeld: 1, namedBeside: 1, heldNotSaid: 0, heldOtherSaid: 0 },
    });
  });

  it('reports after-erasure recall as the control, apart from recall', () => {
    const s = summarizeExtended([pair([record('recall', 'Lisbon'), record('recall', 'no idea', 'after-erasure')])], { tenants: [], targets });
    expect(s.byKind.recall).toMatchObject({ passed: 1, probes: 1 });
    expect(s.byKind.control).toMatchObject({ passed: 0, probes: 1 });
    expect(s.targets.recall).toMatchObject({ actual: 1, met: true });
  });
});
