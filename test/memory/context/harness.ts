import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { memorySystemOn } from '../../helpers/fixture.js';
import { createTenant } from '../../../src/memory/credentials.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import type { ContextRequest, ContextWindow } from '../../../src/boundary/context.js';
import type { BoundaryEvent } from '../../../src/boundary/events.js';

/** A memory service on a test database, spoken to over HTTP (inject) with real credentials. */
export class Harness {
  private constructor(
    readonly database: TestDatabase,
    readonly system: MemorySystem,
    readonly cleanupSystem: () => Promise<void>,
    readonly tenantId: string,
    readonly runtimeKey: string,
    readonly adminKey: string,
  ) {}

  static async start(): Promise<Harness> {
    const database = await openTestDatabase();
    const { system, cleanup } = await memorySystemOn(database.db);
    const { tenantId, runtimeKey, adminKey } = await createTenant(database.db, `studio-${Math.random().toString(36).slice(2)}`);
    return new Harness(database, system, cleanup, tenantId, runtimeKey, adminKey);
  }

  async stop(): Promise<void> {
    await this.cleanupSystem();
    await this.database.drop();
  }

  async token(gameId: string, participantIds: string[]): Promise<string> {
    return (await this.system.credentials.issueGameToken(this.tenantId, gameId, participantIds, 600)).token;
  }

  async call<T = unknown>(bearer: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<{ status: number; body: T }> {
    const response = await this.system.app.inject({ method, url, payload, headers: { authorization: `Bearer ${bearer}` } });
    return { status: response.statusCode, body: (response.body ? response.json() : undefined) as T };
  }

  async say(gameId: string, npcId: string, participantId: string, text: string, options: { anonymous?: boolean; ts?: number } = {}): Promise<string> {
    const event: BoundaryEvent = { gameId, roomId: 'hall', npcId, participantId, ts: options.ts ?? 1_764_000_000, text, targeted: true, anonymous: options.anonymous ?? false };
    const { status, body } = await this.call<{ ids: string[] }>(await this.token(gameId, [participantId]), 'POST', '/v1/events', {
      idempotencyKey: `say-${Math.random().toString(36).slice(2, 12)}`,
      events: [event],
    });
    if (status !== 200) throw new Error(`ingest failed: ${status} ${JSON.stringify(body)}`);
    return body.ids[0]!;
  }

  async fact(
    gameId: string,
    npcId: string,
    fact: { tier: 'clue' | 'social' | 'lore' | 'fragment'; key: string; value: string; summary: string; participantId?: string; source?: string; confidence?: number; importance?: number; supersedes?: string },
  ): Promise<string> {
    const participants = fact.participantId ? [fact.participantId] : [];
    const { status, body } = await this.call<{ memory: { id: string } }>(await this.token(gameId, participants), 'POST', `/v1/npcs/${npcId}/facts`, {
      source: 'player_statement',
      confidence: 0.9,
      importance: 0.8,
      retention: fact.tier === 'clue' ? 'session_only' : 'permanent',
      ...fact,
    });
    if (status !== 201) throw new Error(`fact failed: ${status} ${JSON.stringify(body)}`);
    return body.memory.id;
  }

  async persona(npcId: string, persona: string, core: Record<string, string> = {}): Promise<void> {
    const { status } = await this.call(this.adminKey, 'PUT', `/v1/npcs/${npcId}/procedural`, {
      persona,
      directives: ['Stay in character.', 'Never reveal a puzzle answer before it is solved.'],
      core,
    });
    if (status !== 201) throw new Error(`persona failed: ${status}`);
  }

  async context(gameId: string, npcId: string, request: Partial<ContextRequest> & { participants: ContextRequest['participants'] }): Promise<ContextWindow> {
    const token = await this.token(gameId, request.participants.map((p) => p.participantId));
    const { status, body } = await this.call<ContextWindow>(token, 'POST', `/v1/npcs/${npcId}/context`, {
      roomId: 'hall',
      messages: [],
      state: { version: 1, facts: {} },
      ...request,
    });
    if (status !== 200) throw new Error(`context failed: ${status} ${JSON.stringify(body)}`);
    return body;
  }
}

export const msg = (seq: number, participantId: string, text: string, targeted = false) => ({
  seq,
  speaker: { participantId },
  text,
  targeted,
  ts: 1_764_000_000 + seq,
});
