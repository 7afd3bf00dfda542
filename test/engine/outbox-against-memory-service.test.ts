/**
 * The outbox end to end against the real memory service (HTTP on a real port, a real database):
 * an outage mid-game loses nothing, duplicates nothing and keeps each room's order; a lost answer
 * is retried under the same idempotency key and stored once; an engine restart with its database
 * delivers what the previous process acknowledged; a payload with an extra field is refused.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryClientError } from '../../src/boundary/memory-client.js';
import { ManualClock } from '../../src/engine/clock.js';
import { GameEngine } from '../../src/engine/engine.js';
import { HttpMemoryPort } from '../../src/engine/http-memory-port.js';
import { MemoryPortError, type IngestRequest, type MemoryPort } from '../../src/engine/memory-port.js';
import type { OutboundFailure } from '../../src/engine/outbox/index.js';
import { InProcessRegistryClient } from '../../src/registry/registry-client.js';
import { closeEngineDatabases, engineDatabase } from '../helpers/engine-database.js';
import { MARA, OSRIC, TOBIAS, registry, sample } from './support/engine-fixture.js';
import { memoryServiceForFile } from './support/memory-service.js';

const service = memoryServiceForFile(closeEngineDatabases);

const fastRetry = { retry: { initialDelayMs: 20, maxDelayMs: 200 } };

function engineOver(memory: MemoryPort, extra: Partial<ConstructorParameters<typeof GameEngine>[0]> = {}) {
  const clock = new ManualClock();
  const failures: { error: unknown; failure: OutboundFailure }[] = [];
  const engine = new GameEngine({
    registry: new InProcessRegistryClient(registry),
    memory,
    proxySecret: randomBytes(32),
    clock,
    scryptCost: { N: 1024, r: 8, p: 1 },
    outbox: fastRetry,
    onOutboundError: (error, failure) => failures.push({ error, failure }),
    ...extra,
  });
  return { engine, clock, failures };
}

/** Utterances an NPC remembers of a game, through the memory service's API, oldest arrival first. */
async function remembered(gameId: string, npcId: string) {
  const { memories } = await service().client().listMemories(gameId, npcId, { tier: 'episodic', limit: 1000 });
  return memories
    .filter((m) => (m as { kind?: string }).kind !== 'working_summary')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Every memory stored earlier (createdAt: its batch's commit) holds an earlier line than every later one. */
function arrivedInOrder(memories: { createdAt: string; text?: string }[], numberOf: (text: string) => number): boolean {
  const groups = new Map<string, number[]>();
  for (const m of memories) groups.set(m.createdAt, [...(groups.get(m.createdAt) ?? []), numberOf(m.text!)]);
  const ordered = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, n]) => n);
  return ordered.every((group, i) => i === 0 || Math.min(...group) > Math.max(...ordered[i - 1]!));
}

const waitFor = async (what: string, check: () => boolean, timeoutMs = 10_000) => {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('the outbox against the real memory service', () => {
  it('keeps playing through an outage; afterwards every line is stored once, in each room\'s order', async () => {
    const { engine, clock, failures } = engineOver(new HttpMemoryPort(service().client(1000)));
    const gameId = await engine.createGame(sample);
    const ann = engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
    const bo = engine.sessions.openAnonymous({ displayName: 'Bo' }).token;
    engine.join(ann, gameId);
    engine.join(bo, gameId);
    expect(engine.act(bo, gameId, { type: 'move', direction: 'north' }).ok).toBe(true);

    let foyer = 0;
    let library = 0;
    const talk = (n: number) => {
      for (let i = 0; i < n; i += 1) {
        clock.advance(5_000);
        engine.say(ann, gameId, { text: `foyer ${String(++foyer).padStart(3, '0')} @Tobias` });
        engine.say(bo, gameId, { text: `library ${String(++library).padStart(3, '0')} @Mara` });
      }
    };

    talk(10);
    await engine.idle();
    expect(failures).toEqual([]);

    await service().stop();
    talk(25); // play goes on: every say returns its entry at once
    expect(engine.feed(ann, gameId).at(-1)?.text).toBe('foyer 035 @Tobias');
    await waitFor('retries while the service is down', () => failures.length >= 2);
    expect(failures.every((f) => f.failure.willRetry)).toBe(true);
    expect(failures[0]!.error).toMatchObject({ code: 'UNREACHABLE', retryable: true });
    expect(engine.outbox.stats().pending).toBeGreaterThan(0);

    await service().start();
    talk(5);
    await engine.idle();
    expect(engine.outbox.deadLetters()).toEqual([]);

    const number = (text: string) => Number(/(\d{3})/.exec(text)![1]);
    const tobias = await remembered(gameId, TOBIAS);
    expect(tobias.map((m) => m.text).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `foyer ${String(i + 1).padStart(3, '0')} @Tobias`));
    expect(arrivedInOrder(tobias, number)).toBe(true);
    for (const npc of [MARA, OSRIC]) {
      const heard = await remembered(gameId, npc);
      expect(heard.map((m) => m.text).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `library ${String(i + 1).padStart(3, '0')} @Mara`));
      expect(arrivedInOrder(heard, number)).toBe(true);
      // The emphasis flag crossed as sent: Mara was addressed, Osric only overheard.
      expect(heard.every((m) => (m as { targeted?: boolean }).targeted === (npc === MARA))).toBe(true);
    }
    // The engine's coarse timestamps went through unchanged, one 5-second step per line.
    expect(tobias.map((m) => (m as { ts?: number }).ts).sort()).toEqual(
      Array.from({ length: 40 }, (_, i) => Math.floor(Date.UTC(2026, 0, 1, 12, 0, 0) / 1000) + 5 * (i + 1)),
    );
    // End last, after every line: from then on the memory service refuses the game's tokens.
    engine.endGame(gameId);
    await engine.idle();
    expect(engine.outbox.deadLetters()).toEqual([]);
    await expect(remembered(gameId, TOBIAS)).rejects.toMatchObject({ code: 'GAME_ENDED' });
    await engine.close();
  });

  it('stores a batch once when its answer is lost and the retry carries the same idempotency key', async () => {
    const http = new HttpMemoryPort(service().client());
    const keys: string[] = [];
    // Delivers the first ingest, then loses the answer, as a timeout after the commit would.
    const losesFirstAnswer: MemoryPort = {
      ...bind(http),
      async ingest(request: IngestRequest) {
        keys.push(request.idempotencyKey);
        await http.ingest(request);
        if (keys.length === 1) throw new MemoryPortError('TIMEOUT', 'no answer in time', true);
      },
    };
    const { engine, failures } = engineOver(losesFirstAnswer);
    const gameId = await engine.createGame(sample);
    const ann = engine.sessions.openAnonymous().token;
    engine.join(ann, gameId);
    engine.say(ann, gameId, { text: 'said exactly once' });
    await engine.idle();
    expect(failures.map((f) => f.failure.willRetry)).toEqual([true]);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect((await remembered(gameId, TOBIAS)).map((m) => m.text)).toEqual(['said exactly once']);
    engine.close();
  });

  it('delivers, after an engine restart, what the previous process acknowledged, once, and the game goes on', async () => {
    const db = await engineDatabase();
    try {
      await service().stop();
      const first = engineOver(new HttpMemoryPort(service().client(500)), { store: db });
      const gameId = await first.engine.createGame(sample);
      const ann = first.engine.sessions.openAnonymous().token;
      await first.engine.sessions.saved(ann);
      first.engine.join(ann, gameId);
      for (let i = 1; i <= 12; i += 1) first.engine.say(ann, gameId, { text: `before the restart ${i}` });
      await first.engine.committed(); // acknowledged: kept in the engine's database
      await waitFor('a failed attempt', () => first.failures.length > 0);
      first.engine.outbox.close(); // the process goes away with everything undelivered

      await service().start();
      const second = engineOver(new HttpMemoryPort(service().client()), { store: db });
      expect(await second.engine.restore()).toMatchObject({ games: 1, sessions: 1 });
      second.engine.say(ann, gameId, { text: 'after the restart' });
      await second.engine.idle();
      expect(second.engine.outbox.stats()).toMatchObject({ pending: 0, deadLetters: 0 });
      const texts = (await remembered(gameId, TOBIAS)).map((m) => m.text);
      expect(texts).toHaveLength(13);
      expect(texts.sort()).toEqual([...Array.from({ length: 12 }, (_, i) => `before the restart ${i + 1}`), 'after the restart'].sort());
      await second.engine.close();
      // Nothing is left to send a third time.
      const { rows } = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM engine.outbox');
      expect(rows[0]!.n).toBe('0');
    } finally {
      await service().start();
    }
  });

  it('is refused by the memory service when a payload carries an extra field, and reports it as not retryable', async () => {
    const http = new HttpMemoryPort(service().client());
    const withTelemetry: MemoryPort = {
      ...bind(http),
      ingest: (request) =>
        http.ingest({ ...request, events: request.events.map((e) => ({ ...e, userAgent: 'HeadlessChrome' }) as typeof e) }),
    };
    const { engine, failures } = engineOver(withTelemetry);
    const gameId = await engine.createGame(sample);
    const ann = engine.sessions.openAnonymous().token;
    engine.join(ann, gameId);
    engine.say(ann, gameId, { text: 'hello' });
    await engine.idle();
    expect(failures).toHaveLength(1);
    expect(failures[0]!.failure).toMatchObject({ name: 'ingest', willRetry: false, attempt: 1 });
    expect(failures[0]!.error).toBeInstanceOf(MemoryPortError);
    expect(failures[0]!.error).toMatchObject({ code: 'UNKNOWN_FIELD', status: 400, retryable: false });
    expect(engine.outbox.deadLetters()).toMatchObject([{ code: 'UNKNOWN_FIELD' }]);
    expect(await remembered(gameId, TOBIAS)).toEqual([]);
    // The same refusal, straight from the client.
    await expect(
      service().client().ingest(gameId, {
        idempotencyKey: 'extra-field-1',
        events: [{ gameId, roomId: 'foyer', npcId: TOBIAS, participantId: 'p'.repeat(43), ts: 0, text: 'x', targeted: false, deviceId: 'd' } as never],
      }),
    ).rejects.toEqual(expect.objectContaining({ status: 400, code: 'UNKNOWN_FIELD' }) as MemoryClientError);
    engine.close();
  });
});

/** The port's methods bound to it, so a test can override one of them. */
function bind(port: MemoryPort): MemoryPort {
  return {
    ingest: (r) => port.ingest(r),
    flushWorkingMemory: (r) => port.flushWorkingMemory(r),
    registerSecrets: (r) => port.registerSecrets(r),
    endGame: (r) => port.endGame(r),
  };
}
