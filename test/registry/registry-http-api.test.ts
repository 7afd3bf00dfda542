import { afterAll, describe, expect, it } from 'vitest';
import { buildRegistryApp } from '../../src/registry/http-app.js';
import { NameRegistry } from '../../src/registry/name-registry.js';

const app = await buildRegistryApp({ registry: await NameRegistry.load() });
afterAll(() => app.close());

const get = (url: string) => app.inject({ method: 'GET', url });

describe('GET /v1/names/resolve', () => {
  it('resolves an exact name given as three parts', async () => {
    const res = await get('/v1/names/resolve?first=Wren&middle=Adaeze&last=Callow');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ npcId: 'npc-wren-callow', fullName: 'Wren Adaeze Callow' });
  });

  it('resolves an exact full name', async () => {
    const res = await get(`/v1/names/resolve?fullName=${encodeURIComponent('Tobias Amadeo Fenn')}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ npcId: 'npc-tobias-fenn' });
  });

  it.each([
    ['a differently cased name', 'first=wren&middle=adaeze&last=callow'],
    ['a misspelled name', 'first=Wren&middle=Adaze&last=Callow'],
    ['a partial full name', 'fullName=Wren%20Callow'],
    ['a phonetic full name', 'fullName=Ren%20Adayzee%20Kallow'],
  ])('answers 404 "Character not recognized" for %s', async (_kind, query) => {
    const res = await get(`/v1/names/resolve?${query}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 'CHARACTER_NOT_RECOGNIZED', message: 'Character not recognized' });
  });

  it.each([
    ['no parameters', ''],
    ['only two parts', 'first=Wren&last=Callow'],
    ['both forms at once', 'first=Wren&middle=Adaeze&last=Callow&fullName=Wren%20Adaeze%20Callow'],
    ['a repeated parameter', 'first=Wren&first=Wren&middle=Adaeze&last=Callow'],
    ['an unknown parameter', 'first=Wren&middle=Adaeze&last=Callow&fuzzy=true'],
  ])('refuses %s with 400 INVALID_QUERY', async (_kind, query) => {
    const res = await get(`/v1/names/resolve?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_QUERY' });
  });
});

describe('GET /v1/npcs/:npcId', () => {
  it('returns the canonical names of a registered NPC', async () => {
    const res = await get('/v1/npcs/npc-osric-thorne');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      npcId: 'npc-osric-thorne',
      first: 'Osric',
      middle: 'Bellamy',
      last: 'Thorne',
      fullName: 'Osric Bellamy Thorne',
    });
  });

  it('answers 404 NPC_NOT_FOUND for an unknown id', async () => {
    const res = await get('/v1/npcs/npc-nobody');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'NPC_NOT_FOUND' });
  });
});

describe('errors', () => {
  it.each([
    ['an escape that does not decode', 'GET', '/v1/npcs/npc-%ED%A0%80-x', 400, 'BAD_URL'],
    ['an id longer than 128 characters', 'GET', `/v1/npcs/npc-${'x'.repeat(200)}`, 414, 'PATH_TOO_LONG'],
    ['an unknown route', 'GET', '/v1/names/npc-secret-route', 404, 'ROUTE_NOT_FOUND'],
    ['a body that is not JSON', 'DELETE', '/v1/npcs/npc-osric-thorne', 400, 'BAD_REQUEST'],
  ] as const)('answers %s in its own body { code, message }, without the URL', async (_kind, method, url, status, code) => {
    const res = await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: method === 'DELETE' ? '{not json' : undefined });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ code, message: expect.any(String) });
    expect(res.body).not.toMatch(/xxxxxxxx|%ED|secret-route|not json/);
  });

  it('names a repeated parameter it knows, and does not repeat the name of one it does not have', async () => {
    expect((await get('/v1/names/resolve?first=Wren&first=Wren&middle=Adaeze&last=Callow')).json()).toEqual({ code: 'INVALID_QUERY', message: 'Give "first" exactly once.' });
    const unknown = await get(`/v1/names/resolve?${encodeURIComponent('<b>evil')}=1&${encodeURIComponent('<b>evil')}=2`);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).not.toContain('evil');
  });
});
