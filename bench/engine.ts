/**
 * `npm run bench:engine`: one engine process holding 1,000 concurrent games of 8 participants.
 *
 * Measures, in one run:
 * - fan-out latency: from a participant's `say` entering the engine (validation, sequencing,
 *   anonymization proxy, outbox) to the last of the room's 8 listeners having its socket frame,
 *   over messages spread at random across every game, with the outbox delivering in between;
 * - the same with 10 games (does holding 1,000 games cost per message?);
 * - a naive fan-out (an array of listeners per room, no validation, no proxy, no outbox): the floor;
 * - memory per active game (heap after GC, with 8 participants joined, before and after traffic);
 * - end to end over the real transport: HTTP say -> the last of 8 WebSockets receiving the entry;
 * - the durable say, on PGlite (a directory) and native PostgreSQL: `say` until the engine's
 *   database has kept it (what a client's acknowledgement waits for), one at a time and with
 *   many players at once (group commit), against the in-memory say of the same engine as baseline.
 * Prints a table and writes docs/benchmarks-engine.md (machine, date, revision).
 */
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import WebSocket from 'ws';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { GameEngine } from '../src/engine/engine.js';
import { openEngineDatabase, type EngineDatabase } from '../src/engine/store/database.js';
import { buildEngineApp } from '../src/engine/http/app.js';
import { EngineClient } from '../src/engine/http/client.js';
import type { MemoryPort } from '../src/engine/memory-port.js';
import type { StreamEntry } from '../src/engine/types.js';
import { loadSampleGame } from '../src/engine/game-definition/validate.js';
import { NameRegistry } from '../src/registry/name-registry.js';
import { InProcessRegistryClient } from '../src/registry/registry-client.js';
import { percentile } from './support.js';

const program = new Command('bench:engine')
  .option('--games <n>', 'concurrent games', '1000')
  .option('--participants <n>', 'participants per game', '8')
  .option('--messages <n>', 'messages for the fan-out measurement', '50000')
  .option('--ws-games <n>', 'games for the end-to-end WebSocket measurement', '50')
  .option('--ws-messages <n>', 'messages for the end-to-end WebSocket measurement', '2000')
  .option('--durable-messages <n>', 'messages for each durable-say measurement', '3000')
  .option('--durable-in-flight <n>', 'says awaiting their commit at once, for the throughput measurement', '200')
  .option('--out <file>', 'markdown report', 'docs/benchmarks-engine.md')
  .parse();
const opts = program.opts<{ games: string; participants: string; messages: string; wsGames: string; wsMessages: string; durableMessages: string; durableInFlight: string; out: string }>();
const GAMES = Number(opts.games);
const PARTICIPANTS = Number(opts.participants);
const MESSAGES = Number(opts.messages);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.error('Run with --expose-gc (npm run bench:engine does) for memory figures.');
const heapAfterGc = () => {
  for (let i = 0; i < 3; i += 1) gc?.();
  return process.memoryUsage().heapUsed;
};
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A memory service that answers at once: the outbox does its full work, the network none. */
class CountingPort implements MemoryPort {
  events = 0;
  async ingest(request: { events: readonly unknown[] }) {
    this.events += request.events.length;
  }
  async flushWorkingMemory() {}
  async registerSecrets() {}
  async endGame() {}
}

const registry = await NameRegistry.load();
const sample = await loadSampleGame();

/** What a socket would be sent: the stream hub's frame, the entry serialized once per room. */
const frames = new WeakMap<StreamEntry, string>();
const frameOf = (entry: StreamEntry, cursor: number) => {
  let json = frames.get(entry);
  if (json === undefined) frames.set(entry, (json = JSON.stringify(entry)));
  return `{"type":"entry","cursor":${cursor},"entry":${json}}`;
};

interface Result {
  label: string;
  games: number;
  messages: number;
  p50: number;
  p99: number;
  max: number;
  perSecond: number;
  bytesPerGame?: number;
  bytesPerGameAfter?: number;
}

async function engineRun(label: string, games: number, messages: number): Promise<Result> {
  const port = new CountingPort();
  const before = heapAfterGc();
  const engine = new GameEngine({ registry: new InProcessRegistryClient(registry), memory: port, proxySecret: randomBytes(32), onOutboundError: () => {} });
  let lastDelivery = 0n;
  let sink = 0;
  const rooms: { gameId: string; tokens: string[] }[] = [];
  for (let g = 0; g < games; g += 1) {
    const gameId = await engine.createGame(sample);
    const tokens: string[] = [];
    for (let p = 0; p < PARTICIPANTS; p += 1) {
      const { token } = engine.sessions.openAnonymous({ displayName: `P${p}` });
      engine.join(token, gameId, {
        listener: (entry, cursor) => {
          sink += frameOf(entry, cursor).length;
          lastDelivery = process.hrtime.bigint();
        },
      });
      tokens.push(token);
    }
    rooms.push({ gameId, tokens });
  }
  await engine.idle();
  const bytesPerGame = (heapAfterGc() - before) / games;

  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < messages; i += 1) {
    const room = rooms[Math.floor(Math.random() * rooms.length)]!;
    const token = room.tokens[Math.floor(Math.random() * room.tokens.length)]!;
    const t0 = process.hrtime.bigint();
    engine.say(token, room.gameId, { text: `message ${i}: has anyone tried the safe behind the clock? @Tobias` });
    latencies.push(Number(lastDelivery - t0) / 1e6);
    // Let the outbox deliver between bursts, as it would between network events.
    if (i % 200 === 199) await tick();
  }
  await engine.idle();
  const elapsed = performance.now() - started;
  const bytesPerGameAfter = (heapAfterGc() - before) / games;
  if (port.events !== messages || sink === 0) throw new Error(`expected ${messages} boundary events, got ${port.events}`);
  engine.close();
  latencies.sort((a, b) => a - b);
  return { label, games, messages, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1)!, perSecond: (messages / elapsed) * 1000, bytesPerGame, bytesPerGameAfter };
}

/** The floor: a room is an array of listeners; no validation, no ordering checks, no proxy, no outbox. */
async function naiveRun(games: number, messages: number): Promise<Result> {
  let lastDelivery = 0n;
  let sink = 0;
  const rooms = Array.from({ length: games }, () => ({
    seq: 0,
    listeners: Array.from({ length: PARTICIPANTS }, () => ({ received: [] as StreamEntry[], fn: (e: StreamEntry, c: number) => {
      sink += frameOf(e, c).length;
      lastDelivery = process.hrtime.bigint();
    } })),
  }));
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < messages; i += 1) {
    const room = rooms[Math.floor(Math.random() * rooms.length)]!;
    const t0 = process.hrtime.bigint();
    const entry: StreamEntry = { seq: ++room.seq, roomId: 'foyer', kind: 'say', speaker: { kind: 'participant', displayName: 'P0' }, text: `message ${i}: has anyone tried the safe behind the clock? @Tobias`, targets: [] };
    for (const l of room.listeners) {
      l.received.push(entry);
      l.fn(entry, l.received.length);
    }
    latencies.push(Number(lastDelivery - t0) / 1e6);
    if (i % 200 === 199) await tick();
  }
  const elapsed = performance.now() - started;
  if (sink === 0) throw new Error('nothing delivered');
  latencies.sort((a, b) => a - b);
  return { label: 'naive fan-out (floor)', games, messages, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1)!, perSecond: (messages / elapsed) * 1000 };
}

/** HTTP say -> the last of the room's 8 WebSockets has the entry (client and server in this process). */
async function websocketRun(games: number, messages: number): Promise<Result> {
  const engine = new GameEngine({ registry: new InProcessRegistryClient(registry), memory: new CountingPort(), proxySecret: randomBytes(32), onOutboundError: () => {} });
  const { app } = await buildEngineApp({ engine, registry: new InProcessRegistryClient(registry), voice: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  /** Sockets that have an entry, by game and seq; and the time the last of a room's sockets got it. */
  const arrivals = new Map<string, number>();
  const complete = new Map<string, number>();
  const sockets: WebSocket[] = [];
  const rooms: { gameId: string; clients: EngineClient[] }[] = [];
  for (let g = 0; g < games; g += 1) {
    const clients = await Promise.all(Array.from({ length: PARTICIPANTS }, (_, p) => EngineClient.anonymous(url, { displayName: `P${p}` })));
    const gameId = await clients[0]!.createGame();
    for (const c of clients) await c.join(gameId);
    for (const c of clients) {
      const socket = new WebSocket(`${url.replace('http', 'ws')}/v1/games/${gameId}/stream`);
      await new Promise((resolve) => socket.on('open', resolve));
      socket.send(JSON.stringify({ type: 'hello', token: c.token }));
      socket.on('message', (raw) => {
        const m = JSON.parse(raw.toString()) as { type: string; entry?: StreamEntry };
        if (m.type !== 'entry' || m.entry!.kind !== 'say') return;
        const key = `${gameId}/${m.entry!.seq}`;
        const n = (arrivals.get(key) ?? 0) + 1;
        arrivals.set(key, n);
        if (n === PARTICIPANTS) complete.set(key, performance.now());
      });
      sockets.push(socket);
    }
    rooms.push({ gameId, clients });
  }
  await new Promise((r) => setTimeout(r, 200));
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < messages; i += 1) {
    const room = rooms[i % rooms.length]!;
    const client = room.clients[Math.floor(Math.random() * PARTICIPANTS)]!;
    const t0 = performance.now();
    const entry = await client.say(room.gameId, `message ${i}`);
    // The sockets may have the entry before the HTTP answer arrives; wait for the last of them.
    const key = `${room.gameId}/${entry.seq}`;
    while (!complete.has(key)) await tick();
    latencies.push(complete.get(key)! - t0);
    arrivals.delete(key);
    complete.delete(key);
  }
  const elapsed = performance.now() - started;
  for (const s of sockets) s.close();
  await app.close();
  engine.close();
  latencies.sort((a, b) => a - b);
  return { label: 'HTTP say -> 8 WebSockets (end to end)', games, messages, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1)!, perSecond: (messages / elapsed) * 1000 };
}

/** The engine's database on a backend: PGlite in a temporary directory, or a new database on the local server. */
async function benchDatabase(backend: 'pglite' | 'postgres'): Promise<{ db: EngineDatabase; drop(): Promise<void> }> {
  if (backend === 'pglite') {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-engine-'));
    const db = await openEngineDatabase({ dir });
    return { db, drop: async () => (await db.close(), await rm(dir, { recursive: true, force: true })) };
  }
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `bench_engine_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openEngineDatabase({ url: url.toString() });
  return {
    db,
    drop: async () => {
      await db.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * `say` until kept: one at a time (the latency a lone player sees), then `inFlight` players at
 * once (each says again as soon as its line is kept: the throughput group commit gives).
 */
async function durableRuns(backend: 'pglite' | 'postgres', games: number, messages: number, inFlight: number): Promise<Result[]> {
  const { db, drop } = await benchDatabase(backend);
  const engine = new GameEngine({ registry: new InProcessRegistryClient(registry), memory: new CountingPort(), proxySecret: randomBytes(32), onOutboundError: () => {}, store: db });
  const speakers: { gameId: string; token: string }[] = [];
  for (let g = 0; g < games; g += 1) {
    const gameId = await engine.createGame(sample);
    for (let p = 0; p < PARTICIPANTS; p += 1) {
      const { token } = engine.sessions.openAnonymous({ displayName: `P${p}` });
      engine.join(token, gameId, { listener: () => {} });
      speakers.push({ gameId, token });
    }
  }
  await engine.committed();
  await engine.idle();
  const pick = () => speakers[Math.floor(Math.random() * speakers.length)]!;

  const alone: number[] = [];
  let started = performance.now();
  for (let i = 0; i < messages; i += 1) {
    const { gameId, token } = pick();
    const t0 = performance.now();
    engine.say(token, gameId, { text: `durable message ${i}: has anyone tried the safe behind the clock? @Tobias` });
    await engine.committed();
    alone.push(performance.now() - t0);
  }
  const aloneElapsed = performance.now() - started;

  const crowd: number[] = [];
  let next = 0;
  started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < messages) {
        next += 1;
        const { gameId, token } = pick();
        const t0 = performance.now();
        engine.say(token, gameId, { text: `durable crowd message ${next}: the clock, the safe, the ledger` });
        await engine.committed();
        crowd.push(performance.now() - t0);
      }
    }),
  );
  const crowdElapsed = performance.now() - started;
  await engine.idle();
  await engine.close();
  await drop();
  const result = (label: string, latencies: number[], elapsed: number): Result => {
    latencies.sort((a, b) => a - b);
    return { label, games, messages, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1)!, perSecond: (messages / elapsed) * 1000 };
  };
  return [
    result(`durable say until kept, one at a time (${backend})`, alone, aloneElapsed),
    result(`durable say until kept, ${inFlight} players at once (${backend})`, crowd, crowdElapsed),
  ];
}

const results: Result[] = [];
results.push(await naiveRun(GAMES, MESSAGES));
results.push(await engineRun('engine, 10 games', 10, MESSAGES));
results.push(await engineRun(`engine, ${GAMES} games`, GAMES, MESSAGES));
results.push(await websocketRun(Number(opts.wsGames), Number(opts.wsMessages)));
const durable: Result[] = [];
for (const backend of ['pglite', 'postgres'] as const) durable.push(...(await durableRuns(backend, 100, Number(opts.durableMessages), Number(opts.durableInFlight))));
results.push(...durable);

const ms = (n: number) => n.toFixed(3);
const kib = (n?: number) => (n === undefined ? '' : (n / 1024).toFixed(1));
const header = '| run | games | messages | p50 ms | p99 ms | max ms | msgs/s | KiB/game joined | KiB/game after traffic |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|';
const rows = results.map((r) => `| ${r.label} | ${r.games} | ${r.messages} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${Math.round(r.perSecond)} | ${kib(r.bytesPerGame)} | ${kib(r.bytesPerGameAfter)} |`);
const table = [header, ...rows].join('\n');
console.log(table);

const big = results[2]!;
const verdict = big.p99 <= 5 ? `p99 ${ms(big.p99)} ms <= 5 ms: met` : `p99 ${ms(big.p99)} ms > 5 ms: NOT met`;
console.log(`\n${GAMES} games x ${PARTICIPANTS} participants: ${verdict}`);
const pgAlone = durable.find((r) => r.label.startsWith('durable say until kept, one') && r.label.endsWith('(postgres)'))!;
const pgCrowd = durable.find((r) => r.label.includes('players at once') && r.label.endsWith('(postgres)'))!;
const durableVerdict = [
  `say p50 on PostgreSQL with the durable append ${ms(pgAlone.p50)} ms ${pgAlone.p50 <= 3 ? '<= 3 ms: met' : '> 3 ms: NOT met'}`,
  `throughput ${Math.round(pgCrowd.perSecond)} lines/s ${pgCrowd.perSecond >= 1000 ? '>= 1,000: met' : '< 1,000: NOT met'}`,
].join('; ');
console.log(durableVerdict);

const revision = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim() + (execSync('git status --porcelain -- src bench', { encoding: 'utf8' }).trim() ? ' (with uncommitted changes)' : '');
  } catch {
    return 'unknown';
  }
})();
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const report = `# Engine benchmark

Generated by \`npm run bench:engine\` (bench/engine.ts). Re-run it to refresh this page.

- Date: ${new Date().toISOString()}
- Revision: ${revision}
- Machine: ${cpu}, ${os.cpus().length} logical CPUs, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}
- Node ${process.version}

## Target (issue 6)

One engine process holds ${GAMES.toLocaleString('en')} concurrent games with ${PARTICIPANTS} participants each; message fan-out p99 <= 5 ms;
memory per active game reported. **${verdict}.**

## Target (issue 14)

\`say\` p50 on native PostgreSQL <= 3 ms with the durable append; engine throughput >= 1,000 lines/s. **${durableVerdict}.**

## Results

${table}

## What is measured

- **Fan-out latency**: from a participant's \`say\` entering the engine to the last of the ${PARTICIPANTS} people in the room
  having the socket frame built for them (\`{"type":"entry",...}\`, the entry serialized once per room, as the stream
  hub does). It includes validating the message, sequencing it, the anonymization proxy (an HMAC-free anonymous id,
  the coarse timestamp, one boundary event per NPC awake in the room) and accepting it into the outbox. Messages go to
  random games; every 200 messages the event loop turns, so the outbox delivers to the memory port (answering at
  once) in between, as it would between network events.
- **Naive fan-out (floor)**: the same listeners and frames, rooms as plain arrays: no validation, no proxy, no outbox.
  The gap to the engine rows is the price of the engine's rules.
- **10 vs ${GAMES.toLocaleString('en')} games**: the same engine; a per-message cost that grew with the number of games
  held would show here.
- **Memory per game**: heap after GC, divided by games: the game (world state, rooms, 8 participants with their
  sessions and feeds) after joining, and again after the traffic (feeds keep what each participant saw; the outbox
  is empty again).
- **End to end**: HTTP \`POST /say\` from a client to the last of the room's ${PARTICIPANTS} stream WebSockets receiving
  the entry, one message at a time, client and server in this process (so it includes both sides' work and the
  loopback network). Not part of the 5 ms target, which is about fan-out inside the engine.
- **Durable say**: \`say\` and then \`committed()\`, which resolves once the engine's database has kept the
  command's log row and the outbox calls it caused (one transaction): what the HTTP answer waits for. 100 games of
  ${PARTICIPANTS}; PGlite in a directory, PostgreSQL on this machine (no network hop). "One at a time" is the latency a
  lone player sees (one transaction per line); "players at once" keeps that many says waiting for their commit, so
  lines share transactions (group commit): its msgs/s is the engine's durable throughput, its p50/p99 what each of
  those players waits. Compare with the in-memory rows above: the difference is the price of durability.
`;
await writeFile(opts.out, report);
console.log(`\nwrote ${opts.out}`);
