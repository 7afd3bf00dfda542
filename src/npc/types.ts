/**
 * NPC agents: what turns a context window into a line of dialogue and proposed actions.
 *
 * - trigger: the room message an NPC answers (its speaker, text, and whether it was addressed).
 * - provider: a model behind one interface (the offline responder, or an OpenAI-compatible chat).
 * - reply: the provider's text and its proposed actions, in the engine's action form.
 * - guard: the check every reply passes before it is posted (identity, controllers, secrets).
 * - physical failure: an action the engine refused; the NPC is told and answers once more.
 */
import type { ContextWindow } from '../boundary/context.js';
import type { Action } from '../engine/game.js';

export type ProposedAction = Action;

export interface NpcIdentity {
  npcId: string;
  /** The canonical first name, as players address the NPC. */
  firstName: string;
}

export interface TurnTrigger {
  /** The participant id as the memory service knows it (the anonymized one). */
  participantId: string;
  anonymous: boolean;
  text: string;
  targeted: boolean;
}

export interface ModelInput {
  npc: NpcIdentity;
  window: ContextWindow;
  trigger: TurnTrigger;
  /** Set on the second try, after the engine refused a proposed action. */
  physicalFailure?: string;
  /** Set on the first turn after the NPC's room was empty of humans for this long: acknowledge it. */
  resumedAfterMs?: number;
}

/** "about 45 minutes", "about 2 hours", "a minute": a span as a person would say it. */
export function spokenDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes <= 1) return 'a minute';
  if (minutes < 90) return `about ${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `about ${hours} hours`;
  return `about ${Math.round(hours / 24)} days`;
}

export interface NpcReply {
  text: string;
  actions: ProposedAction[];
  /** Tokens the model billed for this reply, when its endpoint reports them. */
  usage?: TokenUsage;
}

export interface TokenUsage {
  prompt: number;
  completion: number;
}

export interface ModelProvider {
  readonly id: string;
  reply(input: ModelInput): Promise<NpcReply>;
}

export class ModelError extends Error {
  constructor(
    readonly code: 'MODEL_UNAVAILABLE' | 'MODEL_TIMEOUT' | 'MODEL_BAD_OUTPUT',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ModelError';
  }
}
