import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('MEMORY_EXTRACTOR: which extractor consolidation uses', () => {
  const model = { MODEL_URL: 'http://127.0.0.1:9/v1', MODEL_NAME: 'chat-model' };

  it('is offline without a model, and llm (the NPC chat model) as soon as MODEL_URL is set', () => {
    expect(loadConfig({}).extractor).toEqual({ kind: 'offline' });
    expect(loadConfig({ ...model, MODEL_API_KEY: 'sk-x' }).extractor).toEqual({ kind: 'llm', baseUrl: model.MODEL_URL, model: 'chat-model', apiKey: 'sk-x' });
  });

  it('takes EXTRACTOR_MODEL as another model name on the same endpoint', () => {
    expect(loadConfig({ ...model, EXTRACTOR_MODEL: 'extractor-model' }).extractor).toMatchObject({ kind: 'llm', model: 'extractor-model' });
  });

  it('can be forced offline with a model configured, and llm explicitly', () => {
    expect(loadConfig({ ...model, MEMORY_EXTRACTOR: 'offline' }).extractor).toEqual({ kind: 'offline' });
    expect(loadConfig({ ...model, MEMORY_EXTRACTOR: 'llm' }).extractor.kind).toBe('llm');
  });

  it.each([
    [{ MEMORY_EXTRACTOR: 'llm' }, /MEMORY_EXTRACTOR=llm needs a chat model: set MODEL_URL/],
    [{ MEMORY_EXTRACTOR: 'gpt' }, /MEMORY_EXTRACTOR must be "llm" or "offline", not "gpt"/],
    [{ ...model, MEMORY_EXTRACTOR: 'LLM' }, /MEMORY_EXTRACTOR must be "llm" or "offline"/],
  ])('refuses %o at start-up with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
