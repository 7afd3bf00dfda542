/**
 * Creating a game over HTTP answers once the memory service has the game's secrets, so the
 * game's first turns do not compete with its own set-up; it never waits long for a memory
 * service that is slow or down.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEngineApp, type EngineApp } from '../../src/engine/http/app.js';
import { EngineClient } from '../../src/engine/http/client.js';
import type { RegisterSecretsRequest } from '../../src/engine/memory-port.js';
import { InProcessRegistryClient } from '../../src/registry/registry-client.js';
import { makeEngine, registry } from './support/engine-fixture.js';
import { RecordingMemoryPort } from './support/recording-memory-port.js';

/** A memory service whose secrets registration answers when the test says so. */
class GatedMemoryPort extends RecordingMemoryPort {
  release: () => void = () => {};
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  override async registerSecrets(request: RegisterSecretsRequest): Promise<void> {
    await this.gate;
    await super.registerSecrets(request);
  }
}

let running: { app: EngineApp; close(): void } | undefined;
afterEach(async () => {
  await running?.app.app.close();
  running?.close();
  running = undefined;
});

async function serve(memory: RecordingMemoryPort, gameReadyTimeoutMs?: number) {
  const { engine } = makeEngine({ memory });
  const app = await buildEngineApp({ engine, registry: new InProcessRegistryClient(registry), ...(gameReadyTimeoutMs ? { gameReadyTimeoutMs } : {}) });
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  running = { app, close: () => engine.close() };
  const url = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
  return EngineClient.anonymous(url, { displayName: 'Ada' });
}

describe('creating a game over HTTP', () => {
  it('answers after the memory service has taken the game\'s secrets', async () => {
    const memory = new GatedMemoryPort();
    const client = await serve(memory);
    let answered = false;
    const created = client.createGame().then((gameId) => {
      answered = true;
      return gameId;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    memory.release();
    const gameId = await created;
    expect(memory.calls.filter((c) => c.name === 'registerSecrets').map((c) => c.name === 'registerSecrets' && c.request.gameId)).toEqual([gameId]);
  });

  it('still creates the game when the memory service does not answer in time', async () => {
    const memory = new GatedMemoryPort(); // never released
    const client = await serve(memory, 30);
    const gameId = await client.createGame();
    expect(gameId).toMatch(/^g-/);
    expect(memory.calls).toEqual([]);
    memory.release();
  });
});
