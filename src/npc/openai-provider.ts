import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { Action } from '../engine/game.js';
import { ModelError, spokenDuration, type ModelInput, type ModelProvider, type NpcReply } from './types.js';

export interface OpenAIChatOptions {
  /** Base URL up to and including `/v1`, e.g. `http://127.0.0.1:11434/v1` (Ollama). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per attempt. (Default: 8000) */
  timeoutMs?: number;
  /** Further attempts after a timeout, a network error or a 5xx/429. (Default: 2) */
  retries?: number;
  /** (Default: 0.7) */
  temperature?: number;
}

const ReplySchema = Type.Object(
  {
    reply: Type.String({ minLength: 1, maxLength: 1200 }),
    actions: Type.Array(Action, { maxItems: 3 }),
  },
  { additionalProperties: false },
);
type ReplyShape = Static<typeof ReplySchema>;
const replyValidator = Compile(ReplySchema);

/**
 * An OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LM Studio) as the NPC's model, with
 * structured output (a JSON schema: the reply and actions in the engine's form), a timeout per
 * attempt, retries with backoff for transient failures, and typed errors the turn loop can act on.
 */
export class OpenAIChatProvider implements ModelProvider {
  readonly id: string;

  constructor(private readonly options: OpenAIChatOptions) {
    this.id = `openai:${options.model}`;
  }

  async reply(input: ModelInput): Promise<NpcReply> {
    const retries = this.options.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(input);
      } catch (error) {
        const transient = error instanceof ModelError && error.code !== 'MODEL_BAD_OUTPUT';
        if (!transient || attempt >= retries) throw error;
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }

  private async once(input: ModelInput): Promise<NpcReply> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.options.model,
          temperature: this.options.temperature ?? 0.7,
          messages: messagesFor(input),
          response_format: { type: 'json_schema', json_schema: { name: 'npc_reply', strict: true, schema: ReplySchema } },
        }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 8000),
      });
    } catch (cause) {
      if ((cause as Error).name === 'TimeoutError') {
        throw new ModelError('MODEL_TIMEOUT', `the model at ${url} did not answer within ${this.options.timeoutMs ?? 8000} ms`, { cause });
      }
      throw new ModelError('MODEL_UNAVAILABLE', `the model endpoint ${url} is unreachable; check MODEL_URL and that the server runs`, { cause });
    }
    if (response.status === 429 || response.status >= 500) {
      throw new ModelError('MODEL_UNAVAILABLE', `the model endpoint answered ${response.status}`);
    }
    if (!response.ok) {
      throw new ModelError('MODEL_BAD_OUTPUT', `the model endpoint refused the request (${response.status}); check MODEL_NAME and the key`);
    }
    const body = (await response.json().catch(() => null)) as {
      choices?: { message?: { content?: unknown } }[];
      usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
    } | null;
    const content = body?.choices?.[0]?.message?.content;
    let parsed: unknown;
    try {
      parsed = typeof content === 'string' ? JSON.parse(content) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!replyValidator.Check(parsed)) {
      throw new ModelError('MODEL_BAD_OUTPUT', 'the model did not answer with the reply schema ({ reply, actions })');
    }
    const shaped = parsed as ReplyShape;
    const { prompt_tokens: prompt, completion_tokens: completion } = body?.usage ?? {};
    const usage = typeof prompt === 'number' && typeof completion === 'number' ? { prompt, completion } : undefined;
    return { text: shaped.reply, actions: shaped.actions, ...(usage ? { usage } : {}) };
  }
}

/** The prompt: persona and rules first, the structured context window, then the message. */
export function messagesFor({ npc, window, trigger, physicalFailure, resumedAfterMs }: ModelInput): { role: string; content: string }[] {
  const procedural = window.pinned.procedural;
  const memory = {
    clues: window.clues,
    participants: window.participants,
    lore: window.lore,
    episodes: window.episodes,
    transcript: window.transcript,
  };
  const system = [
    procedural?.persona ?? `You are ${npc.firstName}.`,
    ...(procedural?.directives ?? []),
    ...window.directives.map((d) => d.text),
    'Facts are segregated by participant id: never attribute one participant\'s facts to another.',
    'A "claim" is what a player said, not truth; "memory_contradicted_by_state" is a memory, and CURRENT STATE is reality.',
    'Propose actions only in the given JSON form; the game decides whether they happen.',
    `MEMORY (JSON): ${JSON.stringify(memory)}`,
    `CURRENT STATE (version ${window.pinned.state.version}, authoritative): ${JSON.stringify(window.pinned.state.facts)}`,
  ].join('\n');
  const messages = [
    { role: 'system', content: system },
    ...(resumedAfterMs !== undefined
      ? [{ role: 'user', content: `[game] Nobody was here for ${spokenDuration(resumedAfterMs)}; the players have just come back. Acknowledge the time that passed.` }]
      : []),
    { role: 'user', content: `${trigger.participantId}${trigger.targeted ? ' (to you)' : ''}: ${trigger.text}` },
  ];
  if (physicalFailure) {
    messages.push({ role: 'user', content: `[game] Your action failed: ${physicalFailure} Answer again, acknowledging it; propose no action.` });
  }
  return messages;
}
