/** The engine's public API on a real port, over a recording memory port. */
import type { AddressInfo } from 'node:net';
import { buildEngineApp, type EngineApp } from '../../../src/engine/http/app.js';
import type { EngineDatabase } from '../../../src/engine/store/database.js';
import { InProcessRegistryClient } from '../../../src/registry/registry-client.js';
import { makeEngine, registry } from './engine-fixture.js';

export async function startEngineServer(options: { helloTimeoutMs?: number; rateLimit?: { max: number; timeWindowMs: number }; store?: EngineDatabase } = {}) {
  const fixture = makeEngine(options.store ? { store: options.store } : {});
  const server: EngineApp = await buildEngineApp({
    engine: fixture.engine,
    registry: new InProcessRegistryClient(registry),
    ...(options.helloTimeoutMs ? { stream: { helloTimeoutMs: options.helloTimeoutMs } } : {}),
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  return {
    ...fixture,
    ...server,
    url,
    wsUrl: url.replace('http:', 'ws:'),
    async close() {
      await server.app.close();
      await fixture.engine.close();
    },
  };
}
