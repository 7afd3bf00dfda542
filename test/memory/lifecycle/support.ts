/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read as loose JSON */
/** A memory system with a movable clock, a tenant, and HTTP helpers (inject, no port). */
import { createTenant } from '../../../src/memory/credentials.js';
import { buildMemorySystem, type MemorySystem } from '../../../src/memory/system.js';
import type { Database } from '../../../src/memory/db/types.js';
import type { LlmExtractorConfig } from '../../../src/memory/consolidation/extract/llm.js';
import { afterAll, beforeAll } from 'vitest';
import { openTestDatabase, tempDir, type TestDatabase } from '../../helpers/database.js';

export interface Harness {
  system: MemorySystem;
  tenantId: string;
  runtimeKey: string;
  adminKey: string;
  /** Moves the injected clock. */
  advance(ms: number): void;
  now(): Date;
  keyringDir: string;
  call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, bearer: string, body?: unknown): Promise<{ status: number; body: any }>;
  token(gameId: string, participantIds: string[]): Promise<string>;
  ingest(gameId: string, events: EventInput[], key?: string): Promise<{ status: number; body: any }>;
  cleanup(): Promise<void>;
}

export interface EventInput {
  npcId?: string;
  participantId: string;
  text: string;
  anonymous?: boolean;
  roomId?: string;
}

let seq = 0;

export async function harness(db: Database, options: { llm?: LlmExtractorConfig; auditWindowMs?: number } = {}): Promise<Harness> {
  const keys = await tempDir('keyring');
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false, lifecycle: { clock: now, llm: options.llm, auditWindowMs: options.auditWindowMs } });
  const tenant = await createTenant(db, `lifecycle-${Math.random().toString(36).slice(2, 10)}`);
  const call: Harness['call'] = async (method, url, bearer, body) => {
    const response = await system.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
  };
  const token = async (gameId: string, participantIds: string[]) => {
    const r = await call('POST', '/v1/tokens', tenant.runtimeKey, { gameId, participantIds });
    if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.token as string;
  };
  return {
    system,
    ...tenant,
    keyringDir: keys.dir,
    advance: (ms) => {
      offset += ms;
    },
    now,
    call,
    token,
    async ingest(gameId, events, key) {
      const participants = [...new Set(events.map((e) => e.participantId))];
      const t = await token(gameId, participants);
      return call('POST', '/v1/events', t, {
        idempotencyKey: key ?? `batch-${Date.now()}-${++seq}`,
        events: events.map((e, i) => ({
          gameId,
          roomId: e.roomId ?? 'library',
          npcId: e.npcId ?? 'npc-mara',
          participantId: e.participantId,
          ts: 1_700_000_000 + seq * 1000 + i,
          text: e.text,
          targeted: true,
          ...(e.anonymous ? { anonymous: true } : {}),
        })),
      });
    },
    async cleanup() {
      await system.app.close();
      await keys.remove();
    },
  };
}

/** Every fact text of a tier visible to a game token (current and superseded). */
export async function factsOf(h: Harness, gameId: string, participants: string[], tier: string, npcId = 'npc-mara'): Promise<any[]> {
  const t = await h.token(gameId, participants);
  const r = await h.call('GET', `/v1/npcs/${npcId}/memories?tier=${tier}&limit=1000&history=true`, t);
  if (r.status !== 200) throw new Error(`list ${tier}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.memories;
}

/**
 * A harness on a test database of its own for the enclosing file or describe block: opened before
 * its tests, closed and dropped after them. Call the returned function inside a test.
 */
export function harnessForTests(options?: Parameters<typeof harness>[1]): () => Harness {
  let database: TestDatabase | undefined;
  let h: Harness | undefined;
  beforeAll(async () => {
    database = await openTestDatabase();
    h = await harness(database.db, options);
  });
  afterAll(async () => {
    await h?.cleanup();
    await database?.drop();
  });
  return () => h!;
}
