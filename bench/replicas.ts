/**
 * `npm run bench` part "replicas": memory-service replicas (1, 2, 3 processes) sharing one
 * database, each its own `SERVICES=memory` process (the production layout), under the same
 * closed-loop load of context assemblies over HTTP. On a Citus cluster (coordinator and two
 * workers) and, beside it in the same run, on single-node PostgreSQL.
 *
 * Every replica serves only (MEMORY_WORKERS=0: no consolidation while measuring) and embeds with
 * the hashing embedder: what is measured is the service and its database, not the sentence
 * encoder (one model per process would take the cores the replicas are compared on).
 */
import type { ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import pg from 'pg';
import { MemoryHttpClient } from '../src/boundary/memory-client.js';
import type { ContextRequest } from '../src/boundary/context.js';
import { createCitusDatabase, dropCitusDatabase, inDatabase } from '../src/memory/db/citus-nodes.js';
import { tempDir } from '../test/helpers/database.js';
import { citusCluster, percentile, progress, startProcess } from './support.js';

const opts = new Command('bench-replicas')
  .option('--backend <list>', 'citus, postgres or both (comma-separated)', 'citus,postgres')
  .option('--replicas <list>', 'replica counts to measure', '1,2,3')
  .option('--games <n>', 'games seeded (8 participants each)', '100')
  .option('--lines <n>', 'lines per game seeded', '60')
  .option('--concurrency <n>', 'requests in flight (closed loop)', '12')
  .option('--seconds <n>', 'measured seconds per replica count (after a warm-up of a third of it)', '15')
  .option('--out <file>', 'markdown report', 'docs/benchmarks-replicas.md')
  .parse()
  .opts<{ backend: string; replicas: string; games: string; lines: string; concurrency: string; seconds: string; out: string }>();

const GAMES = Number(opts.games);
const LINES = Number(opts.lines);
const CONCURRENCY = Number(opts.concurrency);
const SECONDS = Number(opts.seconds);
const COUNTS = opts.replicas.split(',').map(Number);
const PARTICIPANTS = 8;
const NPC = 'npc-mara';
const WORDS = 'safe code clock library passage candle ledger violin harbor garden lantern mirror painting cellar staircase key map riddle crown'.split(' ');
const rand = (n: number) => Math.floor(Math.random() * n);
const line = () => Array.from({ length: 8 + rand(6) }, () => WORDS[rand(WORDS.length)]).join(' ');
const participantsOf = (g: number) => Array.from({ length: PARTICIPANTS }, (_, p) => `part-${String(g).padStart(4, '0')}-${p}`);

interface Row {
  backend: string;
  replicas: number;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

/** A fresh database named `name` on the backend, and how to drop it (and the cluster it started). */
async function database(backend: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (backend === 'citus') {
    const { coordinator, workers, stop } = await citusCluster();
    await dropCitusDatabase(coordinator, workers, name);
    const url = await createCitusDatabase(coordinator, workers, name);
    return {
      url,
      async drop() {
        await dropCitusDatabase(coordinator, workers, name);
        await stop();
      },
    };
  }
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  return { url: inDatabase(adminUrl, name), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function request(g: number, turn: number): ContextRequest {
  const participants = participantsOf(g);
  return {
    roomId: 'vault',
    participants: participants.map((participantId) => ({ participantId, anonymous: false })),
    messages: Array.from({ length: 8 }, (_, i) => ({
      seq: turn * 8 + i,
      speaker: { participantId: participants[(turn + i) % PARTICIPANTS]! },
      text: i === 7 ? `@Mara ${line()}?` : line(),
      targeted: i === 7,
      ts: 1_700_100_000 + turn * 8 + i,
    })),
    state: { version: 1, facts: { 'npc.room': 'vault' } },
  };
}

/** `CONCURRENCY` loops, each sending context requests to the replicas in turn, for `seconds`. */
async function load(clients: readonly MemoryHttpClient[], seconds: number): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let turn = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const t = turn++;
        const g = rand(GAMES);
        const started = performance.now();
        try {
          await clients[t % clients.length]!.context(`game-${g}`, NPC, request(g, t));
          latencies.push(performance.now() - started);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  return { latencies, errors };
}

async function benchBackend(backend: string): Promise<Row[]> {
  const db = await database(backend, 'memory_replicas');
  const data = await tempDir('bench-replicas');
  const children: ChildProcess[] = [];
  const env = { SERVICES: 'memory', DATABASE_URL: db.url, MEMORY_DATA_DIR: data.dir, EMBEDDINGS: 'hash', MEMORY_WORKERS: '0' };
  const rows: Row[] = [];
  try {
    // The first replica migrates the database and writes the tenant's keys; the others reuse both.
    const urls: string[] = [];
    const start = async () => {
      const { child, urls: banner } = await startProcess(env);
      children.push(child);
      urls.push(banner['memory service']!);
    };
    await start();
    const { runtimeKey } = JSON.parse(await readFile(path.join(data.dir, 'local-tenant.json'), 'utf8')) as { runtimeKey: string };
    const seeder = new MemoryHttpClient(urls[0]!, runtimeKey);
    for (let g = 0; g < GAMES; g++) {
      const participants = participantsOf(g);
      for (let from = 0; from < LINES; from += 50) {
        await seeder.ingest(`game-${g}`, {
          idempotencyKey: `seed-${g}-${from}`,
          events: Array.from({ length: Math.min(50, LINES - from) }, (_, i) => ({
            gameId: `game-${g}`, roomId: 'vault', npcId: NPC, participantId: participants[(from + i) % PARTICIPANTS]!,
            ts: 1_700_000_000 + from + i, text: line(), targeted: (from + i) % 4 === 0,
          })),
        });
      }
      progress(`${backend}: seeding ${GAMES} games x ${LINES} lines`, g + 1, GAMES);
    }
    for (const n of COUNTS) {
      while (urls.length < n) await start();
      const clients = urls.slice(0, n).map((url) => new MemoryHttpClient(url, runtimeKey));
      await load(clients, SECONDS / 3); // warm-up: tokens minted, statements prepared, caches filled
      const { latencies, errors } = await load(clients, SECONDS);
      rows.push({ backend, replicas: n, requests: latencies.length, perSecond: latencies.length / SECONDS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors });
      process.stderr.write(`${backend}, ${n} replica(s): ${(latencies.length / SECONDS).toFixed(0)} assemblies/s, p50 ${percentile(latencies, 50).toFixed(1)} ms\n`);
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve)))));
    await data.remove();
    await db.drop();
  }
  return rows;
}

const load1 = os.loadavg()[0]!;
const rows: Row[] = [];
for (const backend of opts.backend.split(',')) rows.push(...(await benchBackend(backend)));
const load2 = os.loadavg()[0]!;

const revision = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const f = (n: number, d = 2) => n.toFixed(d);
const base = (r: Row) => rows.find((x) => x.backend === r.backend && x.replicas === Math.min(...COUNTS))!;
const report = `# Memory-service replicas

Produced by \`npx tsx bench/replicas.ts\` (the \`replicas\` part of \`npm run bench\`).

- date: ${new Date().toISOString()}
- revision: ${revision}
- machine: ${os.cpus().length} x ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}
- load average (1 min) at start ${f(load1, 1)}, at end ${f(load2, 1)} on ${os.cpus().length} cores
- ${GAMES} games x ${LINES} lines seeded (8 participants each), then ${CONCURRENCY} context assemblies in flight (closed loop) for ${SECONDS} s per replica count, sent to the replicas in turn; each request carries the room's last 8 lines and 8 participants (HTTP, game token, RLS, decryption, packing, working memory and the context log written)
- each replica is a \`SERVICES=memory\` process (\`MEMORY_WORKERS=0\`, \`EMBEDDINGS=hash\`) on the same database; the replicas, the database's processes and this load generator share the machine's cores

| backend | replicas | assemblies/s | vs 1 replica | p50 ms | p99 ms | errors |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.backend} | ${r.replicas} | ${f(r.perSecond, 0)} | ${f(r.perSecond / base(r).perSecond)}x | ${f(r.p50)} | ${f(r.p99)} | ${r.errors} |`).join('\n')}
`;
await writeFile(opts.out, report);
console.log(report);
