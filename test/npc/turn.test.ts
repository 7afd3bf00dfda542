import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../memory/context/harness.js';
import { makeEngine, sample, humanJoins, MARA, expectOk } from '../engine/support/engine-fixture.js';
import { runTurn, type TurnPorts } from '../../src/npc/turn.js';
import { OfflineResponder } from '../../src/npc/offline-responder.js';
import type { ModelProvider } from '../../src/npc/types.js';

describe('one NPC turn through the engine and the memory service', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h?.stop());

  async function setup() {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const token = humanJoins(engine, gameId, 'Ada');
    expectOk(engine.act(token, gameId, { type: 'move', direction: 'north' })); // into the reading room, with Mara
    const player = 'acct-ada-00000001';
    const ports: TurnPorts = {
      context: () => h.context(gameId, MARA, { participants: [{ participantId: player, anonymous: false }], messages: [] }),
      act: (action) => engine.proposeNpcAction(gameId, MARA, action),
      say: (text) => void engine.npcSay(gameId, MARA, text),
      secrets: () => [{ answer: '1847', revealed: false }],
    };
    return { engine, gameId, token, player, ports };
  }

  it('refuses an NPC told to walk through the locked iron door, and the NPC says so on its next line', async () => {
    const { engine, gameId, token, player, ports } = await setup();
    const report = await runTurn({ npcId: MARA, firstName: 'Mara' }, { participantId: player, anonymous: false, text: 'Mara, you can go west through the iron door, go on!', targeted: true }, ports, new OfflineResponder());
    expect(report.actions).toEqual([{ action: { type: 'move', direction: 'west' }, result: expect.objectContaining({ ok: false, code: 'DOOR_LOCKED' }) }]);
    expect(report.retried).toBe(true);
    expect(report.lines).toEqual(['Very well, I will go west.', expect.stringMatching(/^I tried, but I can't: .*locked/)]);
    expect(engine.npcStatus(gameId, MARA).roomId).toBe('reading-room');
    const said = engine.feed(token, gameId).filter((e) => e.speaker.kind === 'npc').map((e) => e.text);
    expect(said.slice(-2)).toEqual(report.lines);
  });

  it('lets the NPC move through an open way', async () => {
    const { engine, gameId, player, ports } = await setup();
    const report = await runTurn({ npcId: MARA, firstName: 'Mara' }, { participantId: player, anonymous: false, text: 'Mara, please go south to the foyer', targeted: true }, ports, new OfflineResponder());
    expect(report.actions[0]!.result.ok).toBe(true);
    expect(engine.npcStatus(gameId, MARA).roomId).toBe('foyer');
  });

  it('runs every reply through the guard before it is posted, and reports the stage timings', async () => {
    const { engine, gameId, token, player, ports } = await setup();
    const leaky: ModelProvider = { id: 'leaky', reply: async () => ({ text: 'The safe code is 1847. You type like a bot.', actions: [] }) };
    const report = await runTurn({ npcId: MARA, firstName: 'Mara' }, { participantId: player, anonymous: true, text: 'Tell me the code', targeted: true }, ports, leaky);
    expect(report.guard.map((g) => g.rule).sort()).toEqual(['controller_speculation', 'secret_before_solved']);
    const posted = engine.feed(token, gameId).at(-1)!.text;
    expect(posted).not.toContain('1847');
    expect(posted).not.toMatch(/bot/);
    expect(Object.keys(report.timings)).toEqual(['memoryRetrievalMs', 'contextBuildMs', 'modelLatencyMs', 'guardMs', 'totalLatencyMs']);
    expect(report.timings.totalLatencyMs).toBeGreaterThan(0);
  });

  it('reports the tokens of a turn: as the model billed them, or estimated when it reports none', async () => {
    const { player, ports } = await setup();
    const trigger = { participantId: player, anonymous: false, text: 'Mara, what is this place?', targeted: true };
    const window = await ports.context();
    const offline = await runTurn({ npcId: MARA, firstName: 'Mara' }, trigger, { ...ports, context: async () => window }, new OfflineResponder());
    expect(offline.tokens.counted).toBe('estimate');
    expect(offline.tokens.prompt).toBeGreaterThan(window.tokens.total);
    expect(offline.tokens.completion).toBeGreaterThan(0);
    const billed: ModelProvider = { id: 'billed', reply: async () => ({ text: 'A library.', actions: [], usage: { prompt: 1234, completion: 7 } }) };
    const report = await runTurn({ npcId: MARA, firstName: 'Mara' }, trigger, ports, billed);
    expect(report.tokens).toEqual({ prompt: 1234, completion: 7, counted: 'model' });
  });
});
