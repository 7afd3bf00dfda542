import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../../src/engine/clock.js';
import { GameEngine, type GameEngineOptions } from '../../../src/engine/engine.js';
import type { NpcResumedEvent } from '../../../src/engine/game.js';
import { loadSampleGame } from '../../../src/engine/game-definition/validate.js';
import type { GameDefinition } from '../../../src/engine/game-definition/schema.js';
import { NameRegistry } from '../../../src/registry/name-registry.js';
import { InProcessRegistryClient, type RegistryClient } from '../../../src/registry/registry-client.js';
import { RecordingMemoryPort } from './recording-memory-port.js';

export const registry = await NameRegistry.load();
export const sample = await loadSampleGame();

export const MARA = 'npc-mara-quenby';
export const OSRIC = 'npc-osric-thorne';
export const WREN = 'npc-wren-callow';
export const TOBIAS = 'npc-tobias-fenn';

/** A deep copy of the sample, to bend into test shapes. */
export const sampleCopy = (): GameDefinition => structuredClone(sample);

export function makeEngine(options: Partial<GameEngineOptions> & { registryClient?: RegistryClient } = {}) {
  const memory = new RecordingMemoryPort();
  const clock = new ManualClock();
  const resumed: NpcResumedEvent[] = [];
  const outboundErrors: unknown[] = [];
  const engine = new GameEngine({
    registry: options.registryClient ?? new InProcessRegistryClient(registry),
    memory,
    proxySecret: randomBytes(32),
    clock,
    // Cheap hashing keeps tests fast; production uses the default cost.
    scryptCost: { N: 1024, r: 8, p: 1 },
    onNpcResumed: (e) => resumed.push(e),
    onOutboundError: (error) => outboundErrors.push(error),
    ...options,
  });
  return { engine, memory, clock, resumed, outboundErrors };
}

/** Opens an anonymous human session and joins the game; returns the token. */
export function humanJoins(engine: GameEngine, gameId: string, displayName: string): string {
  const { token } = engine.sessions.openAnonymous({ displayName });
  engine.join(token, gameId);
  return token;
}

export function expectOk<T extends { ok: boolean }>(result: T): T {
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result;
}

/** Anonymous human players whose sessions are kept (in the engine's database, if it has one), joined to the game; their tokens. */
export async function savedPlayersJoin(engine: GameEngine, gameId: string, ...names: string[]): Promise<string[]> {
  const tokens = names.map((displayName) => engine.sessions.openAnonymous({ displayName }).token);
  await Promise.all(tokens.map((token) => engine.sessions.saved(token)));
  for (const token of tokens) engine.join(token, gameId);
  return tokens;
}
