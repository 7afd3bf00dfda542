/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read as loose JSON */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminPrincipal } from '../../src/memory/admin/principals.js';
import { createTenant } from '../../src/memory/credentials.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { harness, type Harness } from './lifecycle/support.js';

/**
 * POST /v1/admin/contexts/:contextId/memories: the remembered text behind a context window's
 * memory ids, for an operator with an admin key holding "audit"; every read recorded in the
 * audit ledger (ids only), foreign contexts hidden like unknown ones, gone rows "unavailable".
 */
describe('operator inspection of the memories behind a context window', () => {
  let database: TestDatabase;
  let h: Harness;
  const P = 'part-inspect01';
  const GAME = 'inspect-game';
  let contextId: string;
  let chosen: { id: string; tier: string }[];

  const read = (key: string | undefined, id = contextId, body: unknown = { gameId: GAME }) => h.call('POST', `/v1/admin/contexts/${id}/memories`, key ?? '', body);
  const records = async () => (await h.call('GET', '/v1/audit/records?limit=1000', h.adminKey)).body.records as any[];

  beforeAll(async () => {
    database = await openTestDatabase();
    h = await harness(database.db);
    const token = await h.token(GAME, [P]);
    const fact = async (body: Record<string, unknown>) => {
      const r = await h.call('POST', '/v1/npcs/npc-mara/facts', token, { source: 'player_statement', confidence: 0.8, importance: 0.8, retention: 'permanent', ...body });
      if (r.status !== 201 && r.status !== 200) throw new Error(`fact: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await fact({ tier: 'social', participantId: P, key: 'speaker.occupation', value: 'cartographer', summary: 'You work as a cartographer.' });
    await fact({ tier: 'clue', key: 'game.map_drawer', value: 'the map is in the drawer', summary: 'The map is in the drawer.', retention: 'session_only' });
    await fact({ tier: 'lore', key: 'world.lighthouse', value: 'the lighthouse keeper draws maps', summary: 'The lighthouse keeper draws maps.', source: 'npc_observation' });
    expect((await h.ingest(GAME, [{ participantId: P, text: 'I draw maps of the coast for a living' }])).status).toBe(200);

    const context = await h.call('POST', '/v1/npcs/npc-mara/context', token, {
      roomId: 'library',
      participants: [{ participantId: P, anonymous: false }],
      messages: [{ seq: 1, speaker: { participantId: P }, text: 'Do you remember what I do, the maps, the drawer?', targeted: true, ts: 1_700_000_100 }],
      state: { version: 1, facts: {} },
    });
    expect(context.status).toBe(200);
    contextId = context.body.contextId;
    const explained = await h.call('GET', `/v1/contexts/${contextId}`, token);
    expect(explained.status).toBe(200);
    chosen = Object.entries(explained.body.chosen as Record<string, { id: string }[]>).flatMap(([section, rows]) => rows.map((r) => ({ id: r.id, tier: section })));
    expect(chosen.length).toBeGreaterThanOrEqual(3);
  });
  afterAll(async () => {
    await h?.cleanup();
    await database?.drop();
  });

  it('returns the remembered text beside each memory id of the context, for an admin key with "audit"', async () => {
    const r = await read(h.adminKey);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ contextId, gameId: GAME, npcId: 'npc-mara' });
    expect(r.body.memories.map((m: any) => m.id).sort()).toEqual(chosen.map((c) => c.id).sort());
    expect(r.body.memories.every((m: any) => m.available)).toBe(true);
    const byKey = (key: string) => r.body.memories.find((m: any) => m.fact?.key === key);
    expect(byKey('speaker.occupation')).toMatchObject({ tier: 'social', participantId: P, fact: { value: 'cartographer', summary: 'You work as a cartographer.' } });
    expect(byKey('game.map_drawer')).toMatchObject({ tier: 'clue', fact: { summary: 'The map is in the drawer.' } });
    expect(byKey('world.lighthouse')).toMatchObject({ tier: 'lore', fact: { summary: 'The lighthouse keeper draws maps.' } });
    const episodes = r.body.memories.filter((m: any) => m.tier === 'episodic');
    expect(episodes.map((m: any) => m.text)).toContain('I draw maps of the coast for a living');
  });

  it('records every read in the audit ledger, with the actor, the context and the ids, never the text; the ledger still verifies', async () => {
    const before = (await records()).length;
    const first = await read(h.adminKey);
    const second = await read(h.adminKey);
    const after = await records();
    expect(after.length).toBe(before + 2);
    const entries = after.slice(-2);
    expect(entries.map((e) => e.seq)).toEqual([first.body.ledger.seq, second.body.ledger.seq]);
    for (const entry of entries) {
      expect(entry).toMatchObject({ action: 'memory_read', actor: `key:${h.adminKey.split('_')[1]}`, subject: contextId });
      expect([...entry.details.read].sort()).toEqual(chosen.map((c) => c.id).sort());
      expect(entry.details).toMatchObject({ gameId: GAME, npcId: 'npc-mara', unavailable: [] });
      expect(JSON.stringify(entry)).not.toMatch(/cartographer|drawer|lighthouse|coast/);
    }
    const verdict = await h.call('GET', '/v1/audit/verify', h.adminKey);
    expect(verdict.body.ok).toBe(true);
  });

  it('refuses a runtime key, a game token and principals without the attribute, with stable codes and no ledger entry', async () => {
    const before = (await records()).length;
    expect((await read(undefined)).status).toBe(401);
    const runtime = await read(h.runtimeKey);
    expect([runtime.status, runtime.body.error.code]).toEqual([403, 'ADMIN_KEY_REQUIRED']);
    const token = await read(await h.token(GAME, [P]));
    expect([token.status, token.body.error.code]).toEqual([403, 'ADMIN_KEY_REQUIRED']);
    const cloner = (await createAdminPrincipal(database.db, h.tenantId, { name: 'cloner', npcs: ['*'], actions: ['clone'] })).key;
    const noAudit = await read(cloner);
    expect([noAudit.status, noAudit.body.error.code]).toEqual([403, 'ATTRIBUTE_REQUIRED']);
    const elsewhere = (await createAdminPrincipal(database.db, h.tenantId, { name: 'auditor of another npc', npcs: ['npc-other'], actions: ['audit'] })).key;
    const otherNpc = await read(elsewhere);
    expect([otherNpc.status, otherNpc.body.error.code]).toEqual([403, 'ATTRIBUTE_REQUIRED']);
    expect(JSON.stringify([runtime.body, token.body, noAudit.body, otherNpc.body])).not.toMatch(/cartographer/);
    expect((await records()).length).toBe(before);
  });

  it("hides another tenant's context behind the same 404 as an unknown one", async () => {
    const other = await createTenant(database.db, `inspect-other-${Math.random().toString(36).slice(2, 8)}`);
    const foreign = await read(other.adminKey);
    const unknown = await read(h.adminKey, '00000000-0000-4000-8000-000000000000');
    const malformed = await read(h.adminKey, 'not-a-uuid');
    const wrongGame = await read(h.adminKey, contextId, { gameId: 'another-game' });
    for (const r of [foreign, unknown, malformed, wrongGame]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(unknown.body);
    }
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    const theirs = await h.call('GET', '/v1/audit/records?limit=1000', other.adminKey);
    expect(theirs.body.records.filter((e: any) => e.action === 'memory_read')).toEqual([]);
  });

  it('shows the rows of an ended game and of an erased participant as unavailable, not as errors', async () => {
    expect((await h.call('POST', `/v1/games/${GAME}/end`, h.runtimeKey)).status).toBe(200);
    const ended = await read(h.adminKey);
    expect(ended.status).toBe(200);
    const reasonOf = (body: any, tier: string) => body.memories.filter((m: any) => m.tier === tier).map((m: any) => (m.available ? 'available' : m.reason));
    expect(new Set(reasonOf(ended.body, 'clue'))).toEqual(new Set(['game_ended']));
    expect(new Set(reasonOf(ended.body, 'episodic'))).toEqual(new Set(['game_ended']));
    expect(reasonOf(ended.body, 'social')).toEqual(['available']); // social memory outlives the game
    expect(reasonOf(ended.body, 'lore')).toEqual(['available']);

    expect((await h.call('POST', `/v1/participants/${P}/erasure`, h.adminKey)).status).toBe(200);
    const erased = await read(h.adminKey);
    expect(erased.status).toBe(200);
    expect(reasonOf(erased.body, 'social')).toEqual(['participant_erased']);
    expect(JSON.stringify(erased.body)).not.toMatch(/cartographer|drawer|coast/);
    const last = (await records()).at(-1);
    expect(last).toMatchObject({ action: 'memory_read', subject: contextId });
    expect(last.details.unavailable.length).toBe(erased.body.memories.filter((m: any) => !m.available).length);
    expect((await h.call('GET', '/v1/audit/verify', h.adminKey)).body.ok).toBe(true);
  });
});
