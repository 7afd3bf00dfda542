import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { buildFixture, scopesOf, visible, PARTICIPANTS, type Fixture } from '../helpers/fixture.js';
import { DURABLE_TIERS } from '../../src/memory/types.js';
import type { Scope } from '../../src/memory/scope.js';

describe('isolation over HTTP: every endpoint, from every scope of the fixture', () => {
  let database: TestDatabase;
  let fixture: Fixture;

  beforeAll(async () => {
    database = await openTestDatabase();
    fixture = await buildFixture(database.db);
  });
  afterAll(async () => {
    await fixture?.cleanup();
    await database?.drop();
  });

  /** A game token (scope with a game) or the tenant's runtime API key (scope without one). */
  async function bearerFor(scope: Scope): Promise<string> {
    const tenant = fixture.tenants.find((t) => t.tenantId === scope.tenantId)!;
    if (!scope.gameId) return tenant.runtimeKey;
    const { token } = await fixture.system.credentials.issueGameToken(scope.tenantId, scope.gameId, scope.participantIds ?? [], 300);
    return token;
  }

  /** What the credential really grants: an API key carries no participants. */
  const granted = (scope: Scope): Scope => (scope.gameId ? scope : { ...scope, participantIds: [] });

  async function call(bearer: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
    const response = await fixture.system.app.inject({ method, url, payload, headers: { authorization: `Bearer ${bearer}` } });
    return { status: response.statusCode, body: response.body ? response.json() : undefined };
  }

  async function ownerCount(): Promise<number> {
    const tables = ['episodic', 'clues', 'social', 'lore', 'fragments', 'procedural'];
    let n = 0;
    for (const t of tables) n += Number((await database.db.query<{ n: number }>(`SELECT count(*) AS n FROM memory.${t}`)).rows[0]!.n);
    return n;
  }

  it('lists, counts and searches exactly the scope\'s own memories', async () => {
    const problems: string[] = [];
    for (const scope of scopesOf(fixture).map(granted)) {
      const bearer = await bearerFor(scope);
      for (const tier of DURABLE_TIERS) {
        const expected = fixture.rows.filter((r) => r.tier === tier && visible(scope, r)).map((r) => r.id).sort();
        const list = await call(bearer, 'GET', `/v1/npcs/${scope.npcId}/memories?tier=${tier}&limit=1000`);
        const listed = (list.body as { memories: { id: string }[] }).memories.map((m) => m.id).sort();
        if (JSON.stringify(listed) !== JSON.stringify(expected)) problems.push(`list ${tier} from ${scope.gameId}/${scope.npcId}: ${listed.length} vs ${expected.length}`);
        const count = await call(bearer, 'GET', `/v1/npcs/${scope.npcId}/memories/count?tier=${tier}`);
        if ((count.body as { count: number }).count !== expected.length) problems.push(`count ${tier} from ${scope.gameId}/${scope.npcId}`);
      }
      const search = await call(bearer, 'POST', `/v1/npcs/${scope.npcId}/search`, { text: 'the safe code is hidden', k: 100 });
      for (const m of (search.body as { memories: { id: string }[] }).memories) {
        const row = fixture.rows.find((r) => r.id === m.id)!;
        if (!visible(scope, row)) problems.push(`search from ${scope.gameId}/${scope.npcId} found ${row.marker}`);
      }
      const found = (search.body as { memories: unknown[] }).memories.length;
      const expectedTotal = fixture.rows.filter((r) => visible(scope, r)).length;
      if (found !== expectedTotal) problems.push(`search from ${scope.gameId}/${scope.npcId} found ${found} of ${expectedTotal}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers GET, PATCH and DELETE of any foreign id with the same 404 as an unknown id, and changes nothing', async () => {
    const before = await ownerCount();
    const problems: string[] = [];
    for (const scope of scopesOf(fixture).map(granted)) {
      const bearer = await bearerFor(scope);
      const unknown = await call(bearer, 'GET', `/v1/npcs/${scope.npcId}/memories/00000000-0000-4000-8000-000000000000`);
      for (const row of fixture.rows.filter((r) => !visible(scope, r))) {
        const url = `/v1/npcs/${scope.npcId}/memories/${row.id}`;
        const get = await call(bearer, 'GET', url);
        if (JSON.stringify(get) !== JSON.stringify(unknown)) problems.push(`GET ${row.marker}: ${get.status}`);
        const patch = await call(bearer, 'PATCH', url, { importance: 0.01 });
        if (patch.status !== 404) problems.push(`PATCH ${row.marker}: ${patch.status}`);
        const del = await call(bearer, 'DELETE', url);
        if (del.status !== 404) problems.push(`DELETE ${row.marker}: ${del.status}`);
      }
    }
    expect(problems).toEqual([]);
    expect(await ownerCount()).toBe(before);
    const { rows } = await database.db.query<{ n: number }>('SELECT count(*) AS n FROM memory.clues WHERE importance < 0.05');
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('refuses to write into another game or for a participant the token does not cover', async () => {
    const before = await ownerCount();
    const scope = scopesOf(fixture).find((s) => s.gameId === 'alpha')!;
    const bearer = await bearerFor(scope);
    const event = { gameId: 'beta', roomId: 'hall', npcId: scope.npcId!, participantId: PARTICIPANTS[0], ts: 1, targeted: false, text: 'sneaky' };
    const ingest = await call(bearer, 'POST', '/v1/events', { idempotencyKey: 'cross-game-0001', events: [event] });
    expect(ingest).toMatchObject({ status: 403, body: { error: { code: 'SCOPE_MISMATCH' } } });
    const social = await call(bearer, 'POST', `/v1/npcs/${scope.npcId}/facts`, {
      tier: 'social', participantId: PARTICIPANTS[1], key: 'hobby', value: 'chess', summary: 'plays chess',
      source: 'player_statement', confidence: 0.9, importance: 0.5, retention: 'permanent',
    });
    expect(social).toMatchObject({ status: 403, body: { error: { code: 'SCOPE_MISMATCH' } } });
    const keyOnly = await call(fixture.tenants[0]!.runtimeKey, 'POST', `/v1/npcs/${scope.npcId}/facts`, {
      tier: 'clue', key: 'code', value: '1234', summary: 'code 1234',
      source: 'player_statement', confidence: 0.9, importance: 0.5, retention: 'session_only',
    });
    expect(keyOnly).toMatchObject({ status: 403, body: { error: { code: 'GAME_TOKEN_REQUIRED' } } });
    expect(await ownerCount()).toBe(before);
  });
});
