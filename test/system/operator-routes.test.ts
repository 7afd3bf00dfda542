import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, eventually } from './harness.js';
import { EngineClient } from '../../src/engine/http/client.js';
import type { RunningSystem } from '../../src/system.js';

describe('the operator routes of the NPC runtime', () => {
  let system: RunningSystem;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ system, stop } = await startTestSystem());
  });
  afterAll(() => stop?.());

  const get = (path: string, token?: string) =>
    fetch(new URL(path, system.urls.engine), { headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('refuses players and strangers, with a code that says what is needed', async () => {
    const player = await EngineClient.anonymous(system.urls.engine);
    const gameId = await player.createGame();
    for (const token of [undefined, 'not-the-token', player.token]) {
      for (const path of [`/v1/games/${gameId}/npc-turns`, '/metrics']) {
        const response = await get(path, token);
        expect(response.status).toBe(401);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('OPERATOR_TOKEN_REQUIRED');
      }
    }
  });

  it('lists each NPC turn with its context id, stage timings and guard interventions, and exports the metrics', async () => {
    const player = await EngineClient.anonymous(system.urls.engine, { displayName: 'Ada' });
    const gameId = await player.createGame();
    await player.join(gameId);
    await player.act(gameId, { type: 'move', direction: 'north' });
    await player.say(gameId, '@Mara good evening');
    const turns = await eventually(async () => {
      const body = (await (await get(`/v1/games/${gameId}/npc-turns`, system.operatorToken)).json()) as { turns: { npcId: string; contextId: string; timings: Record<string, number> }[] };
      return body.turns.length > 0 ? body.turns : undefined;
    }, 'a turn');
    expect(turns[0]).toMatchObject({ npcId: 'npc-mara-quenby', contextId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(Object.keys(turns[0]!.timings)).toEqual(['memoryRetrievalMs', 'contextBuildMs', 'modelLatencyMs', 'guardMs', 'totalLatencyMs']);
    const metrics = await (await get('/metrics', system.operatorToken)).text();
    expect(metrics).toMatch(/npc_turn_stage_ms\{stage="totalLatencyMs",quantile="0.5"\} \d/);
    expect(metrics).toMatch(/npc_turns_total [1-9]/);
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
  });
});
