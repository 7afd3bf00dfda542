/**
 * A tiny OpenAI-compatible embeddings server for tests: POST /v1/embeddings on 127.0.0.1 and
 * an ephemeral port. It answers deterministic bag-of-words vectors of the requested
 * `dimensions` (so similarity search through it means something), records every request,
 * and can be told to fail with a status, to answer the wrong dimension, or to shuffle the
 * order of its `data` array (with correct `index` fields), as real servers may.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: { model?: unknown; input?: unknown; dimensions?: unknown; [k: string]: unknown };
}

export type FakeBehaviour =
  | { kind: 'ok' }
  | { kind: 'fail'; status: number }
  | { kind: 'wrong-dimension'; dimensions: number }
  | { kind: 'raw'; status: number; body: string };

export interface FakeOpenAI {
  /** Base URL up to and including `/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** How the next requests are answered (Default: ok). */
  behave(b: FakeBehaviour): void;
  /** Answer `data` in a shuffled order (index fields still correct). (Default: true) */
  shuffle: boolean;
  close(): Promise<void>;
}

/** The vector the fake answers for `text`: words hashed into `dims` buckets, L2-normalized. */
export function fakeVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
    v[(h >>> 0) % dims]! += 1;
  }
  const norm = Math.hypot(...v);
  if (norm === 0) v[0] = 1;
  return norm === 0 ? v : v.map((x) => x / norm);
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  let behaviour: FakeBehaviour = { kind: 'ok' };
  const fake = { shuffle: true } as FakeOpenAI;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: RecordedRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest['body'];
      } catch {
        body = {};
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
      if (behaviour.kind === 'fail') return send(behaviour.status, { error: { message: 'the fake was told to fail' } });
      if (behaviour.kind === 'raw') return send(behaviour.status, behaviour.body);
      const inputs = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? (body.input as string[]) : [];
      const dims = behaviour.kind === 'wrong-dimension' ? behaviour.dimensions : Number(body.dimensions ?? 1536);
      const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(String(text), dims) }));
      if (fake.shuffle && data.length > 1) {
        // Deterministic and never the identity: reverse, then rotate by one.
        data.reverse();
        data.push(data.shift()!);
        if (data.every((d, i) => d.index === i)) data.reverse();
      }
      return send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  fake.baseUrl = `http://127.0.0.1:${port}/v1`;
  fake.requests = requests;
  fake.behave = (b) => {
    behaviour = b;
  };
  fake.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return fake;
}
