import { countTokens as count } from 'gpt-tokenizer';

/**
 * Token counts with a real BPE tokenizer (gpt-tokenizer, o200k_base: the GPT-4o family).
 * Other models tokenize differently; budgets leave headroom for that.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : count(text);
}

/** Tokens of a value as it will appear in the JSON context window. */
export function jsonTokens(value: unknown): number {
  return countTokens(JSON.stringify(value));
}
