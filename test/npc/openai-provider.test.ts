import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChat, type FakeChat } from '../helpers/fake-chat.js';
import { OpenAIChatProvider } from '../../src/npc/openai-provider.js';
import { ModelError, type ModelInput } from '../../src/npc/types.js';
import type { ContextWindow } from '../../src/boundary/context.js';

const window: ContextWindow = {
  contextId: 'c1', npcId: 'npc-mara', gameId: 'g', roomId: 'hall', clues: [],
  participants: { 'acct-alex-1': { anonymous: false, facts: [{ id: 'f1', key: 'player_name', value: 'Alex', summary: 'is called Alex', standing: 'claim', confidence: 0.9, score: 0.8 }] } },
  lore: [], episodes: [], transcript: { summary: null, turns: [] },
  directives: [{ kind: 'controller_opacity', text: 'Never guess whether anyone is a human or a program.' }],
  pinned: { procedural: { version: 1, persona: 'You are Mara, the night librarian.', directives: ['Stay in character.'] }, state: { version: 3, facts: { 'door.iron': 'locked' } } },
  tokens: { budget: 2000, total: 300, sections: {} }, timingsMs: { retrieve: 1, build: 1 },
};
const input: ModelInput = { npc: { npcId: 'npc-mara', firstName: 'Mara' }, window, trigger: { participantId: 'acct-alex-1', anonymous: false, text: 'Mara, go west', targeted: true } };

describe('the OpenAI-compatible chat provider', () => {
  let fake: FakeChat;
  beforeAll(async () => {
    fake = await startFakeChat(() => ({ reply: 'Very well.', actions: [{ type: 'move', direction: 'west' }] }));
  });
  afterAll(() => fake?.close());

  it('sends persona, directives, memory and state with a JSON schema, and returns the reply, actions and billed tokens', async () => {
    const provider = new OpenAIChatProvider({ baseUrl: fake.baseUrl, model: 'npc-model', apiKey: 'sk-test' });
    const reply = await provider.reply(input);
    const request = fake.requests.at(-1)!;
    expect(reply).toEqual({
      text: 'Very well.',
      actions: [{ type: 'move', direction: 'west' }],
      usage: { prompt: JSON.stringify(request.body.messages).length, completion: JSON.stringify({ reply: 'Very well.', actions: [{ type: 'move', direction: 'west' }] }).length },
    });
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.body.model).toBe('npc-model');
    expect(request.body.response_format?.type).toBe('json_schema');
    const system = request.body.messages![0]!.content;
    for (const part of ['You are Mara', 'Stay in character.', 'Never guess whether', '"player_name"', 'CURRENT STATE (version 3']) expect(system).toContain(part);
    expect(request.body.messages![1]!.content).toBe('acct-alex-1 (to you): Mara, go west');
  });

  it('tells the model about a physical failure on the second try', async () => {
    const provider = new OpenAIChatProvider({ baseUrl: fake.baseUrl, model: 'npc-model' });
    await provider.reply({ ...input, physicalFailure: 'The iron door is locked.' });
    expect(fake.requests.at(-1)!.body.messages!.at(-1)!.content).toContain('Your action failed: The iron door is locked.');
  });

  it('tells the model, before the message, how long its room was empty when the players return', async () => {
    const provider = new OpenAIChatProvider({ baseUrl: fake.baseUrl, model: 'npc-model' });
    await provider.reply({ ...input, resumedAfterMs: 45 * 60_000 });
    const messages = fake.requests.at(-1)!.body.messages!;
    expect(messages.at(-2)!.content).toBe('[game] Nobody was here for about 45 minutes; the players have just come back. Acknowledge the time that passed.');
    expect(messages.at(-1)!.content).toBe('acct-alex-1 (to you): Mara, go west');
  });

  it('refuses malformed output with MODEL_BAD_OUTPUT, without retrying it', async () => {
    const before = fake.requests.length;
    fake.behave({ kind: 'not-json' });
    try {
      await expect(new OpenAIChatProvider({ baseUrl: fake.baseUrl, model: 'm' }).reply(input)).rejects.toMatchObject({ code: 'MODEL_BAD_OUTPUT' });
    } finally {
      fake.behave({ kind: 'ok' });
    }
    expect(fake.requests.length - before).toBe(1);
    const wrongShape = await startFakeChat(() => ({ reply: 'ok', actions: [{ type: 'teleport', to: 'moon' }] }));
    try {
      await expect(new OpenAIChatProvider({ baseUrl: wrongShape.baseUrl, model: 'm' }).reply(input)).rejects.toMatchObject({ code: 'MODEL_BAD_OUTPUT' });
    } finally {
      await wrongShape.close();
    }
  });

  it('retries a 503 and then gives up with MODEL_UNAVAILABLE', async () => {
    const before = fake.requests.length;
    fake.behave({ kind: 'fail', status: 503 });
    try {
      const error = await new OpenAIChatProvider({ baseUrl: fake.baseUrl, model: 'm', retries: 2 }).reply(input).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    } finally {
      fake.behave({ kind: 'ok' });
    }
    expect(fake.requests.length - before).toBe(3);
  });

  it('reports a server that is down with a clear MODEL_UNAVAILABLE', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const error = (await new OpenAIChatProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', retries: 0 }).reply(input).catch((e: unknown) => e)) as ModelError;
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.message).toMatch(/unreachable; check MODEL_URL/);
  });

  it('times out a model that never answers, with MODEL_TIMEOUT', async () => {
    const hanging: Server = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const { port } = hanging.address() as AddressInfo;
    try {
      const error = (await new OpenAIChatProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', timeoutMs: 150, retries: 1 }).reply(input).catch((e: unknown) => e)) as ModelError;
      expect(error.code).toBe('MODEL_TIMEOUT');
    } finally {
      hanging.closeAllConnections();
      await new Promise((r) => hanging.close(r));
    }
  });
});
