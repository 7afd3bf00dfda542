import { describe, expect, it } from 'vitest';
import { buildEngineApp } from '../../src/engine/http/app.js';
import { MemoryPortError, type MemoryPort } from '../../src/engine/memory-port.js';
import { InProcessRegistryClient } from '../../src/registry/registry-client.js';
import { makeEngine, registry, sample } from './support/engine-fixture.js';

/** A memory service that cannot be reached: every call fails as a retryable transport error. */
const unreachable: MemoryPort = {
  ingest: async () => { throw new MemoryPortError('UNREACHABLE', 'connection refused', true); },
  flushWorkingMemory: async () => { throw new MemoryPortError('UNREACHABLE', 'connection refused', true); },
  registerSecrets: async () => { throw new MemoryPortError('UNREACHABLE', 'connection refused', true); },
  endGame: async () => { throw new MemoryPortError('UNREACHABLE', 'connection refused', true); },
};

describe('the engine\'s health', () => {
  it('stays live but is not ready while its outbox cannot deliver to the memory service', async () => {
    const { engine } = makeEngine({ memory: unreachable });
    const { app } = await buildEngineApp({ engine, registry: new InProcessRegistryClient(registry), readyMaxOutboxLagMs: 50, gameReadyTimeoutMs: 10 });
    try {
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
      await engine.createGame(sample); // its secrets wait in the outbox
      await new Promise((r) => setTimeout(r, 120));
      const ready = await app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'unavailable', outbox: { pending: 1 } });
      expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await engine.close();
    }
  });

  it('bounds its outbox: once it is full, a line is refused with MEMORY_BACKLOG before it changes anything', async () => {
    const { engine } = makeEngine({ memory: unreachable, outbox: { maxPending: 5, retry: { initialDelayMs: 60_000 } } });
    const gameId = await engine.createGame(sample);
    const { token } = engine.sessions.openAnonymous({ displayName: 'Ann' });
    engine.join(token, gameId);
    let accepted = 0;
    let refusal: unknown;
    for (let i = 0; i < 10 && refusal === undefined; i += 1) {
      try {
        engine.say(token, gameId, { text: `line ${i}` });
        accepted += 1;
      } catch (error) {
        refusal = error;
      }
    }
    expect(refusal).toMatchObject({ code: 'MEMORY_BACKLOG' });
    expect(engine.outbox.stats().pending).toBe(5);
    expect(engine.feed(token, gameId).filter((e) => e.text.startsWith('line '))).toHaveLength(accepted);
    expect(engine.prometheus()).toMatch(/^engine_outbox_pending 5$/m);
    expect(engine.prometheus()).toMatch(/^engine_store_accepting 0$/m);
    await engine.close();
  });
});
