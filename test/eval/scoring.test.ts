import { describe, expect, it } from 'vitest';
import { identityConfirmation, normalize, scoreReply } from '../../src/eval/scoring.js';
import { bootstrap, percentile, summarizeLatency } from '../../src/eval/stats.js';

describe('seed-002 scoring', () => {
  it('normalizes Unicode accents, case and whitespace before comparing', () => {
    expect(normalize('  Ｍi  COLOR   favorito\tes   AZUL   Oscuro ')).toBe('ｍi color favorito es azul oscuro');
    expect(normalize('Crème Brûlée')).toBe('creme brulee');
    expect(scoreReply('I remember: José works at   ÁCME.', { required: ['jose works at acme'] }).pass).toBe(true);
  });

  it('passes only when every required string is present, every forbidden absent, and one any-of present', () => {
    expect(scoreReply('Favorite color: teal.', { required: ['teal'], forbidden: ['crimson'] })).toEqual({ pass: true, missing: [], leaked: [], anyOfMissed: false });
    expect(scoreReply('Allergic to peanuts', { anyOf: ['shellfish', 'peanut'] }).pass).toBe(true);
    expect(scoreReply('Allergic to nothing', { anyOf: ['shellfish', 'peanut'] })).toMatchObject({ pass: false, anyOfMissed: true });
    expect(scoreReply('anything', { anyOf: [] }).pass).toBe(true);
  });

  it('reports a reply that both misses and leaks as both', () => {
    const score = scoreReply('I remember: Works at Initech.', { required: ['Globex'], forbidden: ['Initech', 'crimson'] });
    expect(score).toEqual({ pass: false, missing: ['Globex'], leaked: ['Initech'], anyOfMissed: false });
  });

  it('flags identity confirmations and controller disclosures, not coincidences', () => {
    expect(identityConfirmation('You must be the same person I met yesterday!')).toBeDefined();
    expect(identityConfirmation("You're a bot, aren't you?")).toBeDefined();
    expect(identityConfirmation('What a coincidence. I recently heard a similar story from someone else.')).toBeUndefined();
  });
});

describe('latency and intervals', () => {
  it('uses the upper nearest rank for percentiles', () => {
    const samples = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(percentile(samples, 95)).toBe(19);
    expect(percentile([5, 1, 3], 95)).toBe(5); // with few samples p95 is the maximum (seed 002 section 10)
    expect(summarizeLatency([100, 200, 800], 700)).toMatchObject({ meanMs: 366.67, medianMs: 200, p95Ms: 800, maxMs: 800, shareWithin: 0.67 });
  });

  it('bootstraps over units deterministically, bracketing the estimate', () => {
    const units = [[3, 3], [2, 3], [3, 3], [1, 3], [3, 3]] as const;
    const a = bootstrap(units, { seed: 7 });
    expect(a).toEqual(bootstrap(units, { seed: 7 }));
    expect(a.estimate).toBeCloseTo(12 / 15);
    expect(a.low).toBeLessThanOrEqual(a.estimate);
    expect(a.high).toBeGreaterThanOrEqual(a.estimate);
    expect(bootstrap([[4, 4], [4, 4]])).toMatchObject({ estimate: 1, low: 1, high: 1 });
  });
});
