/**
 * The name registry's HTTP API under arbitrary strings in every query parameter, parameter
 * name and path parameter, over a real port. The registry is read-only and exact: a canonical
 * name or npc id, code unit for code unit, is found; anything else (not text included) is not
 * recognized, in the registry's own error body `{ code, message }`, which never repeats what was
 * sent. See test/helpers/text.ts.
 */
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRegistryApp } from '../../src/registry/http-app.js';
import { NameRegistry } from '../../src/registry/name-registry.js';
import { echoes, expectFieldAnswer, fieldText, receivedInQuery, urlPart, type Answer } from '../helpers/text.js';

const registry = await NameRegistry.load();
const MARA = registry.getNpc('npc-mara-quenby')!;
const CANONICAL = [MARA.fullName, registry.getNpc('npc-osric-thorne')!.fullName, registry.getNpc('npc-wren-callow')!.fullName];
const IDS = ['npc-mara-quenby', 'npc-osric-thorne', 'npc-wren-callow'];
/** A query past Node's header limit (16 KiB) is refused before routing: 431. */
const TOO_LONG = 431;

describe('every query and path parameter of the name registry, with arbitrary strings', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = await buildRegistryApp({ registry });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  const get = async (path: string): Promise<Answer> => {
    const response = await fetch(`${url}${path}`);
    const raw = await response.text();
    return { status: response.status, body: raw ? JSON.parse(raw) : undefined };
  };

  it('resolves exactly a canonical full name or three canonical parts, and answers anything else "Character not recognized" without repeating it', async () => {
    let resolved = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(), fc.constantFrom(...CANONICAL, MARA.first, MARA.middle, MARA.last)), async (name) => {
        const received = receivedInQuery(name);
        const byFullName = await get(`/v1/names/resolve?fullName=${urlPart(name)}`);
        if (expectFieldAnswer(byFullName, name, { valid: CANONICAL.includes(received), ok: [200], refused: [404, TOO_LONG], envelope: 'flat' })) {
          expect(byFullName.body).toMatchObject({ fullName: received });
          resolved++;
        } else if (byFullName.status === 404) {
          expect(byFullName.body).toEqual({ code: 'CHARACTER_NOT_RECOGNIZED', message: 'Character not recognized' });
        }
        for (const part of ['first', 'middle', 'last'] as const) {
          const parts = { first: MARA.first, middle: MARA.middle, last: MARA.last, [part]: received };
          const query = (['first', 'middle', 'last'] as const).map((k) => `${k}=${k === part ? urlPart(name) : encodeURIComponent(parts[k])}`).join('&');
          const byParts = await get(`/v1/names/resolve?${query}`);
          if (expectFieldAnswer(byParts, name, { valid: received === MARA[part], ok: [200], refused: [404, TOO_LONG], envelope: 'flat' })) {
            expect(byParts.body).toEqual({ npcId: MARA.npcId, first: MARA.first, middle: MARA.middle, last: MARA.last, fullName: MARA.fullName });
            resolved++;
          }
        }
      }),
      { numRuns: 60, seed: 1530 },
    );
    expect(resolved).toBeGreaterThan(5);
  }, 60_000);

  it('refuses a query with a parameter it does not have with 400 INVALID_QUERY, without repeating the parameter or its value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText('^[A-Za-z_]{1,20}$'), fc.constantFrom('fuzzy', '__proto__', 'constructor', '<script>')), fieldText(), async (name, value) => {
        const received = receivedInQuery(name);
        fc.pre(!['first', 'middle', 'last', 'fullName'].includes(received) && received !== '');
        for (const query of [`fullName=${encodeURIComponent(MARA.fullName)}&${urlPart(name)}=${urlPart(value)}`, `${urlPart(name)}=1&${urlPart(name)}=2`]) {
          const answer = await get(`/v1/names/resolve?${query}`);
          expect([400, TOO_LONG]).toContain(answer.status);
          const body = answer.body as { code: string; message: string };
          expect(body).toEqual({ code: answer.status === 400 ? 'INVALID_QUERY' : 'REQUEST_TOO_LARGE', message: expect.any(String) });
          expect(echoes(body.message, name) || echoes(body.message, value) || body.message.includes(`"${received}"`)).toBe(false);
        }
      }),
      { numRuns: 50, seed: 1531 },
    );
  }, 60_000);

  it('returns exactly a registered npc id in the path, and answers any other id, or what is not an id, with a 4xx that does not repeat it', async () => {
    let found = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText('^[a-z0-9-]{1,40}$'), fc.constantFrom(...IDS)), async (npcId) => {
        const answer = await get(`/v1/npcs/${urlPart(npcId)}`);
        // Not found (NPC_NOT_FOUND; "" and dot segments reach another route or none: ROUTE_NOT_FOUND), an
        // escape that does not decode (400 BAD_URL), an id over 128 characters (414), a URL over Node's limit (431).
        if (expectFieldAnswer(answer, npcId, { valid: IDS.includes(npcId), ok: [200], refused: [400, 404, 414, TOO_LONG], envelope: 'flat' })) {
          expect(answer.body).toMatchObject({ npcId });
          found++;
        }
        const elsewhere = await get(`/v1/${urlPart(npcId)}/names`);
        expectFieldAnswer(elsewhere, npcId, { valid: false, ok: [], refused: [400, 404, 414, TOO_LONG], envelope: 'flat' });
      }),
      { numRuns: 60, seed: 1532 },
    );
    expect(found).toBeGreaterThan(5);
  }, 60_000);
});
