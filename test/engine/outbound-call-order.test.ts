import { describe, expect, it } from 'vitest';
import { MemoryPortError, type IngestRequest } from '../../src/engine/memory-port.js';
import { TOBIAS, humanJoins, makeEngine, sample } from './support/engine-fixture.js';
import { RecordingMemoryPort } from './support/recording-memory-port.js';

/** The recorder, failing its first `failures` ingest attempts with the given error. */
class FailingIngest extends RecordingMemoryPort {
  attempts: IngestRequest[] = [];
  constructor(
    private failures: number,
    private readonly error: () => unknown,
  ) {
    super();
  }
  override async ingest(request: IngestRequest): Promise<void> {
    this.attempts.push(request);
    if (this.failures > 0) {
      this.failures -= 1;
      throw this.error();
    }
    return super.ingest(request);
  }
}

const fastRetry = { retry: { initialDelayMs: 1, maxDelayMs: 5 } };

describe('outbound calls to the memory service', () => {
  it('leave in the engine\'s order: secrets first, then events as they happened, end last', async () => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    for (let i = 0; i < 20; i += 1) engine.say(ann, gameId, { text: `line ${i}` });
    engine.endGame(gameId);
    await engine.idle();
    expect(memory.calls[0]?.name).toBe('registerSecrets');
    expect(memory.calls.at(-1)?.name).toBe('endGame');
    expect(memory.boundaryEvents.map((e) => e.text)).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`));
    expect(memory.boundaryEvents.every((e) => e.npcId === TOBIAS)).toBe(true);
  });

  it('retries a failed batch with the same idempotency key, and nothing overtakes it', async () => {
    const memory = new FailingIngest(3, () => new Error('connect ECONNREFUSED'));
    const failures: { attempt: number; willRetry: boolean }[] = [];
    const { engine } = makeEngine({ memory, outbox: fastRetry, onOutboundError: (_e, f) => failures.push(f) });
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    engine.say(ann, gameId, { text: 'first' });
    engine.say(ann, gameId, { text: 'second' });
    await engine.idle();
    expect(failures.map((f) => [f.attempt, f.willRetry])).toEqual([[1, true], [2, true], [3, true]]);
    // The three failed attempts and the one that landed carried the same batch under the same key.
    const firstKey = memory.attempts[0]!.idempotencyKey;
    expect(memory.attempts.slice(0, 4).map((a) => a.idempotencyKey)).toEqual([firstKey, firstKey, firstKey, firstKey]);
    expect(memory.boundaryEvents.map((e) => e.text)).toEqual(['first', 'second']);
    expect(new Set(memory.attempts.map((a) => a.idempotencyKey)).size).toBe(memory.calls.filter((c) => c.name === 'ingest').length);
  });

  it('sets a refused call aside as a dead letter, reports it, and keeps delivering the ones around it', async () => {
    // Refuses any batch holding the bad line, as the memory service refuses a whole bad batch.
    class RefusesOneLine extends RecordingMemoryPort {
      override async ingest(request: IngestRequest): Promise<void> {
        if (request.events.some((e) => e.text === 'refused')) throw new MemoryPortError('UNKNOWN_FIELD', 'body has a field "x"', false, { status: 400 });
        return super.ingest(request);
      }
    }
    const memory = new RefusesOneLine();
    const failures: { name: string; willRetry: boolean }[] = [];
    const { engine } = makeEngine({ memory, outbox: fastRetry, onOutboundError: (_e, f) => failures.push(f) });
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    // Queued behind the secrets, the three lines go out as one batch; refused, it is split.
    engine.say(ann, gameId, { text: 'before' });
    engine.say(ann, gameId, { text: 'refused' });
    engine.say(ann, gameId, { text: 'after' });
    await engine.idle();
    expect(failures).toMatchObject([{ name: 'ingest', willRetry: false }]);
    expect(memory.boundaryEvents.map((e) => e.text)).toEqual(['before', 'after']);
    expect(engine.outbox.deadLetters()).toMatchObject([{ code: 'UNKNOWN_FIELD' }]);
    expect(engine.outbox.stats()).toMatchObject({ pending: 0, deadLetters: 1 });
  });

  it('sends nothing of a game whose secrets were refused: its events become dead letters too', async () => {
    class SecretsRefused extends RecordingMemoryPort {
      override async registerSecrets(): Promise<void> {
        throw new MemoryPortError('INVALID_REQUEST', 'secret too long', false, { status: 400 });
      }
    }
    const memory = new SecretsRefused();
    const { engine } = makeEngine({ memory, outbox: fastRetry });
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    engine.say(ann, gameId, { text: 'the code is 1847' });
    engine.endGame(gameId);
    await engine.idle();
    expect(memory.calls).toEqual([]);
    expect(engine.outbox.deadLetters().map((d) => d.code)).toEqual(['INVALID_REQUEST', 'SECRETS_NOT_REGISTERED', 'SECRETS_NOT_REGISTERED']);
  });

  it('keeps rooms independent: a room whose batch keeps failing does not hold up another room', async () => {
    class LibraryDown extends RecordingMemoryPort {
      override async ingest(request: IngestRequest): Promise<void> {
        if (request.events[0]!.roomId === 'reading-room') throw new Error('timeout');
        return super.ingest(request);
      }
    }
    const memory = new LibraryDown();
    const { engine } = makeEngine({ memory, outbox: { retry: { initialDelayMs: 1000, maxDelayMs: 1000 } }, onOutboundError: () => {} });
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    const bo = humanJoins(engine, gameId, 'Bo');
    engine.act(bo, gameId, { type: 'move', direction: 'north' });
    engine.say(bo, gameId, { text: 'in the library' });
    engine.say(ann, gameId, { text: 'in the foyer' });
    await new Promise((r) => setTimeout(r, 20));
    expect(memory.boundaryEvents.map((e) => e.text)).toEqual(['in the foyer']);
    expect(engine.outbox.stats()).toMatchObject({ pending: 1, retrying: 1 });
    engine.close();
  });
});
