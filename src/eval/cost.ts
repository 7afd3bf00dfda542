/**
 * Cost per probe (seed 002 section 9): the tokens of the turn that answered each probe, as the
 * engine's operator route reports them (billed by the model's endpoint, or estimated for the
 * offline responder), and, given prices, the money. Tokens are the model-independent measure;
 * prices are the operator's to state (`--price-per-1k input,output`) and are recorded in the
 * result, so the cost can be re-derived from the file.
 */
export interface TurnTokens {
  prompt: number;
  completion: number;
  counted: 'model' | 'estimate';
}

/** Price per 1,000 tokens, in the operator's currency. */
export interface Prices {
  input: number;
  output: number;
}

export interface CostSummary {
  /** Probes whose turn reported tokens. */
  probes: number;
  meanPromptTokens: number;
  meanCompletionTokens: number;
  counted: 'model' | 'estimate' | 'mixed' | 'none';
  pricesPer1k: Prices | null;
  meanCostPerProbe: number | null;
}

export function costOf(turns: readonly (TurnTokens | undefined)[], prices?: Prices): CostSummary {
  const known = turns.filter((t): t is TurnTokens => t !== undefined);
  const mean = (f: (t: TurnTokens) => number) => (known.length ? Math.round((known.reduce((n, t) => n + f(t), 0) / known.length) * 10) / 10 : 0);
  const kinds = new Set(known.map((t) => t.counted));
  const prompt = mean((t) => t.prompt);
  const completion = mean((t) => t.completion);
  return {
    probes: known.length,
    meanPromptTokens: prompt,
    meanCompletionTokens: completion,
    counted: kinds.size === 0 ? 'none' : kinds.size > 1 ? 'mixed' : [...kinds][0]!,
    pricesPer1k: prices ?? null,
    meanCostPerProbe: prices && known.length ? Math.round(((prompt * prices.input + completion * prices.output) / 1000) * 1e6) / 1e6 : null,
  };
}

/** Parses `--price-per-1k input,output` (two non-negative numbers). */
export function parsePrices(text: string): Prices {
  const parts = text.split(',').map((s) => Number(s.trim()));
  if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new Error('--price-per-1k takes two non-negative numbers, input and output price per 1,000 tokens: e.g. 0.15,0.6');
  }
  return { input: parts[0]!, output: parts[1]! };
}
