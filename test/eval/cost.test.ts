import { describe, expect, it } from 'vitest';
import { costOf, parsePrices } from '../../src/eval/cost.js';

describe('cost per probe', () => {
  it('averages the tokens of the turns that answered, and prices them when prices are given', () => {
    const turns = [
      { prompt: 1000, completion: 100, counted: 'estimate' as const },
      { prompt: 3000, completion: 300, counted: 'estimate' as const },
      undefined,
    ];
    expect(costOf(turns)).toEqual({ probes: 2, meanPromptTokens: 2000, meanCompletionTokens: 200, counted: 'estimate', pricesPer1k: null, meanCostPerProbe: null });
    expect(costOf(turns, { input: 0.15, output: 0.6 }).meanCostPerProbe).toBeCloseTo(0.3 + 0.12, 10);
  });

  it('says when the counts are mixed, and when there are none', () => {
    expect(costOf([{ prompt: 1, completion: 1, counted: 'model' }, { prompt: 1, completion: 1, counted: 'estimate' }]).counted).toBe('mixed');
    expect(costOf([undefined]).counted).toBe('none');
    expect(costOf([], { input: 1, output: 1 }).meanCostPerProbe).toBeNull();
  });

  it('reads --price-per-1k as two non-negative numbers and refuses anything else with a message saying how', () => {
    expect(parsePrices('0.15, 0.6')).toEqual({ input: 0.15, output: 0.6 });
    for (const bad of ['0.15', '-1,2', 'a,b', '1,2,3']) expect(() => parsePrices(bad)).toThrow(/two non-negative numbers/);
  });
});
