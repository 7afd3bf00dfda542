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
      engine.close();
    }
  });
});
