import { afterAll, describe, expect, it } from 'vitest';
import { buildRegistryApp } from '../../src/registry/http-app.js';
import { NameRegistry } from '../../src/registry/name-registry.js';
import {
  HttpRegistryClient,
  InProcessRegistryClient,
  RegistryUnavailableError,
  type RegistryClient,
} from '../../src/registry/registry-client.js';

const registry = await NameRegistry.load();
const app = await buildRegistryApp({ registry });
// A real port: the HTTP client is the code path a separately deployed registry uses.
const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
afterAll(() => app.close());

const clients: [string, RegistryClient][] = [
  ['in-process', new InProcessRegistryClient(registry)],
  ['HTTP', new HttpRegistryClient({ baseUrl })],
];

describe.each(clients)('the %s registry client', (_name, client) => {
  it('resolves an exact name', async () => {
    const result = await client.resolve({ first: 'Mara', middle: 'Ilse', last: 'Quenby' });
    expect(result.ok && result.npc.npcId).toBe('npc-mara-quenby');
  });

  it('answers "Character not recognized" for a partial name', async () => {
    expect(await client.resolve({ fullName: 'Mara Quenby' })).toMatchObject({
      ok: false,
      code: 'CHARACTER_NOT_RECOGNIZED',
    });
  });

  it('answers "Character not recognized" for parts with spaces', async () => {
    expect((await client.resolve({ first: 'Mara Ilse', middle: 'Quenby', last: 'x' })).ok).toBe(false);
  });

  it('returns an NPC by id and undefined for an unknown id', async () => {
    expect((await client.getNpc('npc-lark-sato'))?.fullName).toBe('Lark Imogen Sato');
    expect(await client.getNpc('npc-nobody')).toBeUndefined();
  });
});

describe('the HTTP registry client when the registry is down', () => {
  it('reports REGISTRY_UNAVAILABLE instead of treating the outage as an unknown name', async () => {
    const down = new HttpRegistryClient({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 500 });
    await expect(down.resolve({ fullName: 'Mara Ilse Quenby' })).rejects.toBeInstanceOf(RegistryUnavailableError);
  });
});
