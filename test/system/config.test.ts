import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('configuration from the environment', () => {
  it('starts on the embedded default with every variable unset', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.model).toBeUndefined();
    expect(config.embeddings).toBeUndefined();
    expect([config.enginePort, config.memoryPort, config.registryPort]).toEqual([3000, 4100, 4200]);
    expect(config.consolidationWindowMs).toBe(2000);
  });

  it('embeds with the local sentence encoder by default, with feature hashing on EMBEDDINGS=hash', () => {
    expect(loadConfig({}).localEmbedder).toBe('use');
    expect(loadConfig({ EMBEDDINGS: 'hash' }).localEmbedder).toBe('hash');
  });

  it('takes a consolidation batching window, including 0 for at once', () => {
    expect(loadConfig({ MEMORY_CONSOLIDATION_WINDOW_MS: '0' }).consolidationWindowMs).toBe(0);
    expect(loadConfig({ MEMORY_CONSOLIDATION_WINDOW_MS: '500' }).consolidationWindowMs).toBe(500);
  });

  it.each([
    [{ MEMORY_CONSOLIDATION_WINDOW_MS: '-1' }, /MEMORY_CONSOLIDATION_WINDOW_MS/],
    [{ MEMORY_CONSOLIDATION_WINDOW_MS: 'soon' }, /MEMORY_CONSOLIDATION_WINDOW_MS/],
    [{ PORT: '70000' }, /PORT must be a port number/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    [{ MODEL_URL: 'http://127.0.0.1:9/v1' }, /MODEL_NAME/],
    [{ EMBEDDINGS_SIMILARITY: '2' }, /EMBEDDINGS_SIMILARITY/],
    [{ EMBEDDINGS: 'minilm' }, /EMBEDDINGS must be "use"/],
  ])('refuses %o with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
