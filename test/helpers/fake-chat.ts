/**
 * A tiny OpenAI-compatible chat server for tests: POST /v1/chat/completions on 127.0.0.1 and an
 * ephemeral port. `answer` decides the model's JSON content from the request (the test plays
 * the model); every request is recorded; it can be told to fail with a status, to answer
 * content that is not JSON, to answer late (a timeout on the client's side), to refuse, or to
 * answer any raw message content.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    messages?: { role: string; content: string }[];
    response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
    [k: string]: unknown;
  };
}

export type ChatBehaviour =
  | { kind: 'ok' }
  | { kind: 'fail'; status: number }
  | { kind: 'not-json' }
  /** Answer normally, but only after `ms` milliseconds. */
  | { kind: 'slow'; ms: number }
  /** Answer this text as the message content. */
  | { kind: 'content'; content: string }
  /** A structured-output refusal (`message.refusal`, no content). */
  | { kind: 'refuse' };

export interface FakeChat {
  baseUrl: string;
  requests: ChatRequest[];
  /** The model: returns the object to send as the message content (JSON-encoded). */
  answer: (request: ChatRequest) => unknown;
  behave(b: ChatBehaviour): void;
  close(): Promise<void>;
}

export async function startFakeChat(answer: FakeChat['answer'] = () => ({ candidates: [] })): Promise<FakeChat> {
  const fake = { requests: [] as ChatRequest[], answer } as FakeChat;
  let behaviour: ChatBehaviour = { kind: 'ok' };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      let body: ChatRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'];
      } catch {
        return send(400, { error: { message: 'bad json' } });
      }
      const request = { url: req.url ?? '', headers: req.headers, body };
      fake.requests.push(request);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: 'not found' } });
      if (behaviour.kind === 'fail') return send(behaviour.status, { error: { message: 'the fake was told to fail' } });
      if (behaviour.kind === 'refuse') {
        return send(200, { id: 'chatcmpl-fake', object: 'chat.completion', model: body.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }] });
      }
      const content =
        behaviour.kind === 'not-json' ? 'Sure! Here are the facts: ...' : behaviour.kind === 'content' ? behaviour.content : JSON.stringify(fake.answer(request));
      const answer = () =>
        send(200, {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          // A stand-in count (characters), as a real endpoint reports its billed tokens.
          usage: { prompt_tokens: JSON.stringify(body.messages ?? []).length, completion_tokens: content.length },
        });
      if (behaviour.kind !== 'slow') return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) answer();
      }, behaviour.ms);
      timers.add(timer);
      return undefined;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.baseUrl = `http://127.0.0.1:${port}/v1`;
  fake.behave = (b) => {
    behaviour = b;
  };
  fake.close = () =>
    new Promise<void>((resolve, reject) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return fake;
}
