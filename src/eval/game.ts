import { loadSampleGame } from '../engine/game-definition/validate.js';
import type { TurnTokens } from './cost.js';
import type { GameDefinition } from '../engine/game-definition/schema.js';
import type { TurnTimings } from '../npc/metrics.js';

/** The sample game with one more registry NPC on its roster, in the foyer where players start. */
export async function gameWith(npc: { npcId: string; persona: string }): Promise<GameDefinition> {
  const sample = await loadSampleGame();
  const definition = structuredClone(sample);
  if (!definition.npcs.some((n) => n.npcId === npc.npcId)) {
    definition.npcs.push({ npcId: npc.npcId, startRoom: definition.startRoom, persona: npc.persona });
  }
  return definition;
}

export interface OperatorTurn {
  npcId: string;
  triggerSeq: number;
  contextId: string;
  lines: string[];
  guard: { rule: string; sentence: string }[];
  timings: TurnTimings;
  /** Absent from turns recorded before token accounting. */
  tokens?: TurnTokens;
}

/** The engine's operator route of NPC turns (needs the operator token). */
export async function npcTurns(engineUrl: string, operatorToken: string, gameId: string): Promise<OperatorTurn[]> {
  const response = await fetch(new URL(`/v1/games/${encodeURIComponent(gameId)}/npc-turns`, engineUrl), {
    headers: { authorization: `Bearer ${operatorToken}` },
  });
  if (!response.ok) throw new Error(`GET npc-turns answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { turns: OperatorTurn[] }).turns;
}
