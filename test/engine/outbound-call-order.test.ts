import { describe, expect, it } from 'vitest';
import type { BoundaryEvent } from '../../src/boundary/events.js';
import { TOBIAS, humanJoins, makeEngine, sample } from './support/engine-fixture.js';
import { RecordingMemoryPort } from './support/recording-memory-port.js';

/** The recorder, refusing its first ingest the way a memory service that is down would. */
class FirstIngestFails extends RecordingMemoryPort {
  #failed = false;
  override async ingest(events: readonly BoundaryEvent[]): Promise<void> {
    if (!this.#failed) {
      this.#failed = true;
      throw new Error('memory service unavailable');
    }
    return super.ingest(events);
  }
}

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

  it('report a failed call and keep delivering the ones behind it (retries are the outbox\'s job)', async () => {
    const memory = new FirstIngestFails();
    const errors: string[] = [];
    const { engine } = makeEngine({ memory, onOutboundError: (_e, call) => errors.push(call.name) });
    const gameId = await engine.createGame(sample);
    const ann = humanJoins(engine, gameId, 'Ann');
    engine.say(ann, gameId, { text: 'lost' });
    engine.say(ann, gameId, { text: 'kept' });
    await engine.idle();
    expect(errors).toEqual(['ingest']);
    expect(memory.boundaryEvents.map((e) => e.text)).toEqual(['kept']);
  });
});
