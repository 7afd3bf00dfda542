import { describe, expect, it } from 'vitest';
import { HttpMemoryPort } from '../../src/engine/http-memory-port.js';
import { EngineNpcHost } from '../../src/npc/engine-host.js';
import { TurnMetrics } from '../../src/npc/metrics.js';
import { OfflineResponder } from '../../src/npc/offline-responder.js';
import { NpcRuntime } from '../../src/npc/runtime.js';
import type { ModelInput, ModelProvider } from '../../src/npc/types.js';
import { closeEngineDatabases, engineDatabase } from '../helpers/engine-database.js';
import { TOBIAS, makeEngine, sample } from '../engine/support/engine-fixture.js';
import { memoryServiceForFile } from '../engine/support/memory-service.js';

const service = memoryServiceForFile(closeEngineDatabases);

/** The offline responder, with every model call it is asked for recorded. */
class CountingResponder implements ModelProvider {
  readonly id = 'counting';
  readonly inputs: ModelInput[] = [];
  readonly #inner = new OfflineResponder();
  reply(input: ModelInput) {
    this.inputs.push(input);
    return this.#inner.reply(input);
  }
}

/** The engine (with its database), the NPC runtime and the real memory service, wired as in `startSystem`. */
function world(db: Awaited<ReturnType<typeof engineDatabase>>, proxySecret: Uint8Array) {
  const made = makeEngine({ store: db, proxySecret, memory: new HttpMemoryPort(service().client()) });
  const host = new EngineNpcHost(made.engine);
  const provider = new CountingResponder();
  const client = service().client();
  const runtime = new NpcRuntime(host, (gameId, npcId, request) => client.context(gameId, npcId, request), provider, new TurnMetrics(), { now: () => made.clock.now() });
  runtime.start();
  return { ...made, runtime, provider };
}

describe('an NPC whose room was empty of humans (seed 000, the empty library)', () => {
  it('costs no model call while the room is empty, across a restart too, and acknowledges how long it was when the players return', async () => {
    const db = await engineDatabase();
    const proxySecret = new Uint8Array(32).fill(3);
    const first = world(db, proxySecret);
    const gameId = await first.engine.createGame(sample);
    const ann = first.engine.sessions.openAnonymous({ displayName: 'Ann' }).token;
    await first.engine.sessions.saved(ann);
    first.engine.join(ann, gameId);
    await first.engine.idle();
    first.engine.say(ann, gameId, { text: '@Tobias good evening' });
    await first.engine.committed();
    await first.runtime.idle();
    expect(first.provider.inputs).toHaveLength(1);

    first.engine.act(ann, gameId, { type: 'move', direction: 'east' }); // the foyer is empty: Tobias is suspended
    first.clock.advance(20 * 60_000);
    first.engine.say(ann, gameId, { text: 'anyone in the cloakroom?' });
    await first.engine.committed();
    await first.runtime.idle();
    expect(first.provider.inputs).toHaveLength(1);
    first.runtime.stop();
    await first.engine.close();

    const second = world(db, proxySecret);
    second.clock.advance(first.clock.now() - second.clock.now() + 25 * 60_000);
    await second.engine.restore();
    await second.runtime.idle();
    expect(second.provider.inputs).toHaveLength(0); // the replay wakes nobody
    expect(second.engine.npcStatus(gameId, TOBIAS).state).toBe('suspended');

    second.engine.act(ann, gameId, { type: 'move', direction: 'west' });
    second.engine.say(ann, gameId, { text: '@Tobias did you miss us?' });
    await second.engine.committed();
    await second.runtime.idle();
    expect(second.provider.inputs).toHaveLength(1);
    expect(second.provider.inputs[0]!.resumedAfterMs).toBe(45 * 60_000);
    const feed = second.engine.feed(ann, gameId);
    expect(feed.at(-1)).toMatchObject({ speaker: { kind: 'npc', npcId: TOBIAS } });
    expect(feed.at(-1)!.text).toMatch(/^Tobias stirs\. "So much quiet; about 45 minutes with nobody here\." /);
    expect(second.runtime.turnsOf(gameId).at(-1)!.guard).toEqual([]);

    // Said once: the next turn is an ordinary one.
    second.engine.say(ann, gameId, { text: '@Tobias what is this place?' });
    await second.engine.committed();
    await second.runtime.idle();
    expect(second.provider.inputs[1]!.resumedAfterMs).toBeUndefined();
    second.runtime.stop();
    await second.engine.close();
  }, 60_000);
});
