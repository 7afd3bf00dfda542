import { performance } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer';
import type { ContextWindow } from '../boundary/context.js';
import type { ActionResult } from '../engine/types.js';
import { guardReply, type GuardRule, type GuardSecret } from './guard.js';
import type { TurnTimings } from './metrics.js';
import type { ModelInput, ModelProvider, NpcIdentity, NpcReply, ProposedAction, TokenUsage, TurnTrigger } from './types.js';

/** What one NPC turn needs from the world around it; the engine provides these. */
export interface TurnPorts {
  /** The context window from the memory service (the memory service's own timings included). */
  context(): Promise<ContextWindow & { timingsMs?: { retrieve: number; build: number } }>;
  /** Validates and applies a proposed action against the location graph and puzzle state. */
  act(action: ProposedAction): ActionResult;
  /** Posts the NPC's line into the room's ordered stream (from where it flows back to memory). */
  say(text: string): void;
  /** This game's registered secrets and whether the game state allows saying each yet. */
  secrets(): readonly GuardSecret[];
}

export interface TurnReport {
  contextId: string;
  /** What the NPC said, in order: its reply, and its second answer after a refused action. */
  lines: string[];
  actions: { action: ProposedAction; result: ActionResult }[];
  guard: { rule: GuardRule; sentence: string }[];
  retried: boolean;
  timings: TurnTimings;
  /**
   * The turn's cost in tokens, over both answers when there were two: as the model's endpoint
   * billed them, or, when it reports none (the offline responder), estimated: the context
   * window's own token count (every section, pinned persona and directives included) plus the
   * message answered, and the JSON reply a model would return (gpt-tokenizer, o200k_base).
   */
  tokens: TokenUsage & { counted: 'model' | 'estimate' };
}

/** What a model would be billed for this exchange, estimated without tokenizing the whole prompt again. */
function estimateUsage(input: ModelInput, reply: NpcReply): TokenUsage {
  return {
    prompt: input.window.tokens.total + countTokens(input.trigger.text) + countTokens(input.physicalFailure ?? ''),
    completion: countTokens(JSON.stringify({ reply: reply.text, actions: reply.actions })),
  };
}

/**
 * One NPC turn: context -> model -> guard -> post -> actions validated by the engine. A refused
 * action becomes a physical failure the NPC is told about, and it gets exactly one more answer.
 */
export async function runTurn(
  npc: NpcIdentity,
  trigger: TurnTrigger,
  ports: TurnPorts,
  provider: ModelProvider,
  situation: { resumedAfterMs?: number } = {},
): Promise<TurnReport> {
  const started = performance.now();
  const window = await ports.context();
  const contextDone = performance.now();
  let modelMs = 0;
  let guardMs = 0;
  const actions: TurnReport['actions'] = [];
  const interventions: TurnReport['guard'] = [];
  const tokens: TurnReport['tokens'] = { prompt: 0, completion: 0, counted: 'model' };

  const attempt = async (physicalFailure?: string) => {
    const input: ModelInput = { npc, window, trigger, ...(physicalFailure ? { physicalFailure } : situation) };
    const t0 = performance.now();
    const reply = await provider.reply(input);
    const t1 = performance.now();
    const verdict = guardReply(reply.text, { speakerAnonymous: trigger.anonymous, secrets: ports.secrets() });
    guardMs += performance.now() - t1;
    modelMs += t1 - t0;
    interventions.push(...verdict.interventions);
    const usage = reply.usage ?? estimateUsage(input, reply);
    tokens.prompt += usage.prompt;
    tokens.completion += usage.completion;
    if (!reply.usage) tokens.counted = 'estimate';
    return { text: verdict.text, actions: reply.actions };
  };

  // The line is spoken first, then the actions are tried: "Very well, I will go west." If the
  // world refuses one, the NPC is told and answers once more (without acting again).
  const first = await attempt();
  const lines = [first.text];
  ports.say(first.text);
  let retried = false;
  for (const action of first.actions) {
    const result = ports.act(action);
    actions.push({ action, result });
    if (!result.ok) {
      retried = true;
      const second = await attempt(result.failure);
      lines.push(second.text);
      ports.say(second.text);
      break;
    }
  }
  const total = performance.now() - started;
  const contextMs = contextDone - started;
  const retrieve = window.timingsMs?.retrieve ?? contextMs;
  return {
    contextId: window.contextId,
    lines,
    actions,
    guard: interventions,
    retried,
    timings: {
      memoryRetrievalMs: round(retrieve),
      contextBuildMs: round(Math.max(0, contextMs - retrieve)),
      modelLatencyMs: round(modelMs),
      guardMs: round(guardMs),
      totalLatencyMs: round(total),
    },
    tokens,
  };
}

const round = (x: number) => Math.round(x * 100) / 100;
