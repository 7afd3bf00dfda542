/**
 * `npx tsx bench/load.ts`: the whole system under players, as an operator would run it. The system
 * runs as its own process (`src/main.ts`, the embedded default or native PostgreSQL), this process
 * plays: G games x P anonymous players, each saying a line every `interval` (spread at random),
 * a share of them addressed to the room's NPC, for `duration`, over the public HTTP API.
 *
 * Measured per run: `say` latency (until acknowledged, i.e. kept in the engine's database); NPC
 * reply latency (from the say to the end of the turn that answered it, from the operator's turn
 * records); the outbox lag and the consolidation lag, sampled every second from /metrics; the
 * system process's CPU (so the cost per line shows) and RSS (fresh, at peak, and after every game
 * has ended). Runs are given as backend:embedder:interval-ms[:games], e.g. postgres:use:10000.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import pg from 'pg';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { percentile, startProcess } from './support.js';

const opts = new Command('bench:load')
  .option('--runs <list>', 'backend:embedder:interval-ms[:games[:split]] (embedder: use, hash or openai, a local fake endpoint; split: memory and engine as two processes; workers: and consolidation in a third)', 'postgres:openai:10000:200:split,postgres:openai:10000:200:workers,postgres:openai:10000:250:split,postgres:openai:2000:40:split,postgres:openai:2000:60:split,postgres:use:10000:15:split,pglite:openai:10000:100:split,pglite:openai:10000:200:split')
  .option('--games <n>', 'games (unless a run names its own)', '200')
  .option('--participants <n>', 'players per game', '8')
  .option('--duration <s>', 'seconds of play per run', '120')
  .option('--addressed <share>', 'share of lines addressed to the NPC (@Tobias)', '0.25')
  .option('--out <file>', 'markdown report', 'docs/benchmarks-load.md')
  .parse()
  .opts<{ runs: string; games: string; participants: string; duration: string; addressed: string; out: string }>();

const PARTICIPANTS = Number(opts.participants);
const DURATION_MS = Number(opts.duration) * 1000;
/** RSS after every game ended, at most this many times fresh (issue 14). */
const RSS_TARGET = 1.25;
const ADDRESSED = Number(opts.addressed);
/** Consolidation workers of the memory process (MEMORY_WORKERS, passed through to the system). */
const WORKERS = Number(process.env.MEMORY_WORKERS ?? 4);
const LINES = [
  'has anyone looked behind the clock yet?',
  'I keep bees on a rooftop in Lyon, so this smell of wax is home to me',
  'my sister Ines would love this room, she collects old maps',
  'what do you make of the portrait by the door?',
  'I am honestly terrified of spiders, keep them away from me',
  'we just moved house, to Geneva, last month',
  'the ledger looks important, does anyone have it?',
  'I work nights as a nurse, so I am wide awake',
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RunSpec {
  backend: 'pglite' | 'postgres';
  embedder: 'use' | 'hash' | 'openai';
  intervalMs: number;
  games: number;
  /** `one`: \`npm start\`, every party in one process; `split`: a memory process and an engine process. */
  layout: 'one' | 'split' | 'workers';
}

interface RunResult extends RunSpec {
  offeredPerS: number;
  achievedPerS: number;
  sayP50: number;
  sayP99: number;
  refused: number;
  replies: number;
  /** Addressed lines acknowledged: replies / addressed is the share an NPC answered. */
  addressed: number;
  replyP50: number;
  replyP95: number;
  /** Of the reply, p95 of the wait before its turn started and of the turn's memory retrieval (context request). */
  /** Reply p95 of lines said after the first interval (every game started and warm). */
  steadyP95: number;
  waitP95: number;
  /** Of that wait, the part spent queued behind the NPC's earlier turns. */
  queuedP95: number;
  retrievalP95: number;
  outboxLagMaxS: number;
  consolidationLagMaxS: number;
  catchUpS: number;
  cpuCores: number;
  cpuMsPerLine: number;
  rssFreshMiB: number;
  rssPeakMiB: number;
  rssEndedMiB: number;
  /** Seconds after the last game ended at which `rssEndedMiB` was read (within the target, or 60 s). */
  rssSettledS: number;
  /** The worst event-loop delay (p99 of a 10 s window) each service reported during play, ms. */
  loopP99MaxMs: { memory: number; engine: number };
  /** Each service's memory from its `/metrics` (MiB), fresh and after every game ended: where what stays is held. */
  heldMiB: Record<string, { fresh: ProcessMemory; ended: ProcessMemory }>;
}

/** The system: one process (\`npm start\`), or the production layout of a memory process and an engine process. */
async function startSystemProcesses(layout: RunSpec['layout'], env: Record<string, string>, dataDir: string): Promise<{ children: ChildProcess[]; engine: string; memory: string }> {
  if (layout === 'one') {
    const { child, urls } = await startProcess(env);
    return { children: [child], engine: urls.play!, memory: urls['memory service']! };
  }
  // `workers`: consolidation in a process of its own, so that serving never waits behind it.
  const memory = await startProcess({ ...env, SERVICES: 'memory', ...(layout === 'workers' ? { MEMORY_WORKERS: '0' } : {}) });
  const workers = layout === 'workers' ? [(await startProcess({ ...env, SERVICES: 'memory' })).child] : [];
  const tenant = JSON.parse(await readFile(path.join(dataDir, 'local-tenant.json'), 'utf8')) as { runtimeKey: string; adminKey: string };
  const engine = await startProcess({
    ...env,
    SERVICES: 'registry,engine',
    MEMORY_URL: memory.urls['memory service']!,
    MEMORY_RUNTIME_KEY: tenant.runtimeKey,
    MEMORY_ADMIN_KEY: tenant.adminKey,
  });
  return { children: [memory.child, ...workers, engine.child], engine: engine.urls.play!, memory: memory.urls['memory service']! };
}

interface ProcessMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** The engine's and the memory service's own account of their memory (`/metrics`), in MiB. */
async function processMemory(system: { engine: string; memory: string }, operator: string): Promise<Record<string, ProcessMemory>> {
  const read = async (url: string, headers: Record<string, string> = {}): Promise<ProcessMemory> => {
    const text = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => '');
    const mib = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
    return { rss: mib('process_resident_memory_bytes'), heapUsed: mib('nodejs_heap_size_used_bytes'), heapTotal: mib('nodejs_heap_size_total_bytes'), external: mib('nodejs_external_memory_bytes') };
  };
  return { engine: await read(system.engine, { authorization: `Bearer ${operator}` }), memory: await read(system.memory) };
}

/** CPU seconds (user + system) and RSS of the system's processes together, from /proc. */
async function usage(pids: readonly number[]): Promise<{ cpuS: number; rssMiB: number }> {
  let cpuS = 0;
  let rssMiB = 0;
  for (const pid of pids) {
    const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    cpuS += (Number(stat[11]) + Number(stat[12])) / 100; // utime, stime (fields 14, 15)
    rssMiB += (Number(stat[21]) * 4096) / 2 ** 20; // rss pages (field 24)
  }
  return { cpuS, rssMiB };
}

async function postgresDatabases(): Promise<{ memory: string; engine: string; drop(): Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const names = [`load_memory_${randomBytes(4).toString('hex')}`, `load_engine_${randomBytes(4).toString('hex')}`];
  for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
  const url = (name: string) => Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  return {
    memory: url(names[0]!),
    engine: url(names[1]!),
    async drop() {
      for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function run(spec: RunSpec): Promise<RunResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-load-'));
  const dbs = spec.backend === 'postgres' ? await postgresDatabases() : undefined;
  const fake = spec.embedder === 'openai' ? await startFakeOpenAI() : undefined;
  const env: Record<string, string> = {
    MEMORY_DATA_DIR: dataDir,
    ...(dbs ? { DATABASE_URL: dbs.memory, ENGINE_DATABASE_URL: dbs.engine } : {}),
    ...(spec.embedder === 'openai' ? { EMBEDDINGS_URL: fake!.baseUrl, EMBEDDINGS_MODEL: 'fake-embed-512' } : { EMBEDDINGS: spec.embedder }),
  };
  const system = await startSystemProcesses(spec.layout, env, dataDir);
  const pid = system.children.map((c) => c.pid!);
  try {
    const operator = (await readFile(path.join(dataDir, 'keys', 'operator.token'), 'utf8')).trim();
    const call = async (method: string, url: string, body?: object, token?: string) => {
      try {
        const response = await fetch(`${system.engine}${url}`, {
          method,
          headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
          // An overloaded system answers late or not at all: a client gives up after 10 s.
          signal: AbortSignal.timeout(10_000),
        });
        return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
      } catch {
        return { status: 0, body: {} };
      }
    };
    // Fresh: ready to serve, the sentence encoder loaded (one game, one line), nothing held.
    {
      const warm = (await call('POST', '/v1/sessions/anonymous', { displayName: 'Warm-up' })).body.token as string;
      const gameId = (await call('POST', '/v1/games', {}, warm)).body.gameId as string;
      await call('POST', `/v1/games/${gameId}/join`, {}, warm);
      await call('POST', `/v1/games/${gameId}/say`, { text: '@Tobias good evening' }, warm);
      await sleep(3000);
      await call('POST', `/v1/games/${gameId}/end`, {}, warm);
      await sleep(2000);
    }
    const fresh = await usage(pid);
    const heldFresh = await processMemory(system, operator);

    // ---- set-up: games and players ----
    const games: { gameId: string; tokens: string[] }[] = [];
    for (let g = 0; g < spec.games; g += 20) {
      games.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(20, spec.games - g) }, async () => {
            const tokens: string[] = [];
            for (let p = 0; p < PARTICIPANTS; p += 1) tokens.push((await call('POST', '/v1/sessions/anonymous', { displayName: `Player ${p}` })).body.token as string);
            const gameId = (await call('POST', '/v1/games', {}, tokens[0])).body.gameId as string;
            for (const token of tokens) await call('POST', `/v1/games/${gameId}/join`, {}, token);
            return { gameId, tokens };
          }),
        )),
      );
    }

    // ---- play ----
    const sayMs: number[] = [];
    const sentAt = new Map<string, number>(); // `${gameId}/${seq}` of addressed lines -> epoch ms
    let refused = 0;
    let peakRss = fresh.rssMiB;
    let outboxLagMax = 0;
    let consolidationLagMax = 0;
    /** The worst event-loop delay (p99 of a 10 s window) each service reported during play, ms. */
    const loopP99Max = { memory: 0, engine: 0 };
    const metric = (text: string, name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0);
    const sample = async () => {
      const [engineMetrics, memoryMetrics, use] = await Promise.all([
        fetch(`${system.engine}/metrics`, { headers: { authorization: `Bearer ${operator}` }, signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => ''),
        fetch(`${system.memory}/metrics`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => ''),
        usage(pid),
      ]);
      peakRss = Math.max(peakRss, use.rssMiB);
      loopP99Max.memory = Math.max(loopP99Max.memory, metric(memoryMetrics, 'nodejs_eventloop_lag_p99_seconds') * 1000);
      loopP99Max.engine = Math.max(loopP99Max.engine, metric(engineMetrics, 'nodejs_eventloop_lag_p99_seconds') * 1000);
      return { outboxLag: metric(engineMetrics, 'engine_outbox_lag_seconds'), consolidationLag: metric(memoryMetrics, 'memory_consolidation_lag_seconds'), due: metric(memoryMetrics, 'memory_consolidation_due'), pending: metric(engineMetrics, 'engine_outbox_pending') };
    };
    let playing = true;
    const sampler = (async () => {
      while (playing) {
        const s = await sample();
        outboxLagMax = Math.max(outboxLagMax, s.outboxLag);
        consolidationLagMax = Math.max(consolidationLagMax, s.consolidationLag);
        await sleep(1000);
      }
    })();
    const before = await usage(pid);
    const started = performance.now();
    const startedAt = Date.now();
    const end = Date.now() + DURATION_MS;
    let offered = 0;
    let said = 0;
    const players = games.flatMap((game) => game.tokens.map((token) => ({ game, token })));
    await Promise.all(
      players.map(async ({ game, token }) => {
        await sleep(Math.random() * spec.intervalMs);
        while (Date.now() < end) {
          const addressed = Math.random() < ADDRESSED;
          // Every line is new (players do not repeat themselves): no line is embedded from an earlier line's vector.
          const text = `${addressed ? '@Tobias ' : ''}${LINES[Math.floor(Math.random() * LINES.length)]}, ${said++ === 0 ? 'first' : `number ${said}`} from ${token.slice(0, 6)}`;
          const t0 = performance.now();
          const at = Date.now();
          offered += 1;
          const answer = await call('POST', `/v1/games/${game.gameId}/say`, { text }, token);
          if (answer.status === 201) {
            sayMs.push(performance.now() - t0);
            if (addressed) sentAt.set(`${game.gameId}/${(answer.body.entry as { seq: number }).seq}`, at);
          } else refused += 1;
          // A line every interval on average, spread between half and one and a half of it.
          await sleep(spec.intervalMs * (0.5 + Math.random()));
        }
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const after = await usage(pid);
    const catchUpStarted = performance.now();
    for (;;) {
      const s = await sample();
      outboxLagMax = Math.max(outboxLagMax, s.outboxLag);
      consolidationLagMax = Math.max(consolidationLagMax, s.consolidationLag);
      if ((s.pending === 0 && s.due === 0) || performance.now() - catchUpStarted > 60_000) break;
      await sleep(500);
    }
    const catchUpS = (performance.now() - catchUpStarted) / 1000;
    playing = false;
    await sampler;

    // ---- NPC replies, from the operator's turn records ----
    const replyMs: number[] = [];
    /** Replies to lines said after the first interval, when every game has started: play going on, not 200 games starting at once. */
    const steadyMs: number[] = [];
    const waitMs: number[] = [];
    const retrievalMs: number[] = [];
    const queuedMs: number[] = [];
    for (const game of games) {
      const turns = (await (await fetch(`${system.engine}/v1/games/${game.gameId}/npc-turns`, { headers: { authorization: `Bearer ${operator}` } })).json()) as {
        turns: { triggerSeq: number; at: number; queuedMs?: number; timings?: { memoryRetrievalMs: number; totalLatencyMs: number } }[];
      };
      for (const turn of turns.turns) {
        const t0 = sentAt.get(`${game.gameId}/${turn.triggerSeq}`);
        if (t0 === undefined) continue;
        replyMs.push(turn.at - t0);
        if (t0 >= startedAt + spec.intervalMs) steadyMs.push(turn.at - t0);
        if (turn.timings) {
          waitMs.push(Math.max(0, turn.at - t0 - turn.timings.totalLatencyMs));
          queuedMs.push(turn.queuedMs ?? NaN);
          retrievalMs.push(turn.timings.memoryRetrievalMs);
        }
      }
    }

    // ---- every game ends: what is left in the process ----
    await Promise.all(games.map((game) => call('POST', `/v1/games/${game.gameId}/end`, {}, game.tokens[0])));
    // V8 gives memory back when a process goes quiet (its memory reducer, some 20-40 s after the
    // load stops): sample until the RSS is within the target or a minute has passed.
    const endedAt = performance.now();
    let ended = await usage(pid);
    while (ended.rssMiB > RSS_TARGET * fresh.rssMiB && performance.now() - endedAt < 60_000) {
      await sleep(5_000);
      ended = await usage(pid);
    }
    const rssSettledS = (performance.now() - endedAt) / 1000;
    const heldEnded = await processMemory(system, operator);

    const lines = sayMs.length;
    return {
      ...spec,
      offeredPerS: offered / elapsedS,
      achievedPerS: lines / elapsedS,
      sayP50: percentile(sayMs, 50),
      sayP99: percentile(sayMs, 99),
      refused,
      replies: replyMs.length,
      addressed: sentAt.size,
      replyP50: replyMs.length ? percentile(replyMs, 50) : NaN,
      replyP95: replyMs.length ? percentile(replyMs, 95) : NaN,
      steadyP95: steadyMs.length ? percentile(steadyMs, 95) : NaN,
      waitP95: waitMs.length ? percentile(waitMs, 95) : NaN,
      retrievalP95: retrievalMs.length ? percentile(retrievalMs, 95) : NaN,
      queuedP95: queuedMs.length ? percentile(queuedMs, 95) : NaN,
      outboxLagMaxS: outboxLagMax,
      consolidationLagMaxS: consolidationLagMax,
      catchUpS,
      cpuCores: (after.cpuS - before.cpuS) / elapsedS,
      cpuMsPerLine: ((after.cpuS - before.cpuS) * 1000) / Math.max(1, lines),
      rssFreshMiB: fresh.rssMiB,
      rssPeakMiB: peakRss,
      rssEndedMiB: ended.rssMiB,
      rssSettledS,
      loopP99MaxMs: loopP99Max,
      heldMiB: Object.fromEntries(Object.keys(heldFresh).map((service) => [service, { fresh: heldFresh[service]!, ended: heldEnded[service]! }])),
    };
  } finally {
    for (const child of system.children) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await fake?.close();
    await dbs?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const specs: RunSpec[] = opts.runs.split(',').map((r) => {
  const [backend, embedder, interval, games, layout] = r.split(':');
  return {
    backend: backend as RunSpec['backend'],
    embedder: embedder as RunSpec['embedder'],
    intervalMs: Number(interval),
    games: Number(games || opts.games),
    layout: layout === 'split' || layout === 'workers' ? layout : 'one',
  };
});
const results: RunResult[] = [];
for (const spec of specs) {
  process.stderr.write(`load: ${spec.backend}, ${spec.embedder}, ${spec.layout}, ${spec.games} games x ${PARTICIPANTS}, a line every ${spec.intervalMs} ms each, ${DURATION_MS / 1000} s\n`);
  results.push(await run(spec));
  process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
}

const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const holds = (r: RunResult) => r.sayP99 <= 100 && r.replyP95 <= 1500 && r.outboxLagMaxS <= 10 && r.consolidationLagMaxS <= 10 && r.rssEndedMiB <= RSS_TARGET * r.rssFreshMiB;
const header =
  '| backend | embedder | processes | consolidation workers | games x players | a line every | lines/s offered | achieved | say p50 ms | say p99 ms | refused | NPC replies / addressed | reply p50 ms | reply p95 ms | reply p95 after the first interval ms | wait before the turn p95 ms | of it queued behind other turns p95 ms | memory retrieval p95 ms | outbox lag max s | consolidation lag max s | event loop delay p99 max, memory / engine ms | catch-up s | CPU cores used | CPU ms per line | RSS fresh / peak / after every game ended MiB (read after) | targets |\n|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|';
const rows = results.map(
  (r) =>
    `| ${r.backend} | ${r.embedder === 'openai' ? 'OpenAI-compatible (local fake)' : r.embedder} | ${{ one: 'one (npm start)', split: 'memory + engine', workers: 'memory + workers + engine' }[r.layout]} | ${WORKERS} | ${r.games} x ${PARTICIPANTS} | ${r.intervalMs / 1000} s | ${f(r.offeredPerS)} | ${f(r.achievedPerS)} | ${f(r.sayP50, 1)} | ${f(r.sayP99, 1)} | ${r.refused} | ${r.replies} / ${r.addressed} | ${f(r.replyP50)} | ${f(r.replyP95)} | ${f(r.steadyP95)} | ${f(r.waitP95)} | ${f(r.queuedP95)} | ${f(r.retrievalP95)} | ${f(r.outboxLagMaxS, 1)} | ${f(r.consolidationLagMaxS, 1)} | ${f(r.loopP99MaxMs.memory)} / ${f(r.loopP99MaxMs.engine)} | ${f(r.catchUpS, 1)} | ${f(r.cpuCores, 2)} | ${f(r.cpuMsPerLine, 1)} | ${f(r.rssFreshMiB)} / ${f(r.rssPeakMiB)} / ${f(r.rssEndedMiB)} (${f(r.rssEndedMiB / r.rssFreshMiB, 2)}x, ${f(r.rssSettledS)} s) | ${holds(r) ? 'held' : 'NOT held'} |`,
);
const table = [header, ...rows].join('\n');
console.log(table);
await writeFile(
  opts.out,
  `Players over the public HTTP API against the system as its own process (\`src/main.ts\`), ${DURATION_MS / 1000} s per run, ${Math.round(ADDRESSED * 100)}% of lines addressed to the room's NPC (Tobias, in the foyer where every player stays). Targets (issue 14): say p99 <= 100 ms, NPC reply p95 <= 1.5 s, outbox and consolidation lag <= 10 s throughout; RSS after every game ended within 1.25x of fresh.

${table}

- **say**: until the engine answered 201, i.e. the line is kept in the engine's database (its log row and outbox calls committed). "refused": any other answer (rate limit, 503), or none within 10 s (the client gives up).
- **NPC reply**: from sending an addressed line to the end of the NPC turn that answered it (the turn records of \`/v1/games/:id/npc-turns\`); lines over the room's turn budget get a "busy" notice instead and are not counted. Of it, the wait before its turn started (the say itself, then the NPC's earlier turns in that game, which run first, one at a time: "queued", from the NPC runtime's turn records) and the turn's memory retrieval (its context request to the memory service). Every game starts in the first interval, so that interval holds the start of all of them at once (each room's NPC with its full burst of turns); "after the first interval" is play going on. The target is checked on the whole run.
- **lags**: sampled every second from \`/metrics\` (the engine's oldest undelivered memory call; the memory service's oldest due consolidation job, counted from when its first line was ingested, so its 2 s batching window is in it; and each service's event-loop delay, the 99th percentile of a 10 s window) during play and until both queues were empty again ("catch-up", after the last line; given up after 60 s).
- **processes**: "one" is \`npm start\` (engine, NPC runtime, memory service and its workers share one event loop; the sentence encoder has a worker thread); "memory + engine" is the production layout (\`SERVICES\`), two processes, so the parties use both cores; "memory + workers + engine" also moves consolidation into a memory process of its own (\`MEMORY_WORKERS=0\` on the serving one). PostgreSQL's own processes are not counted in CPU.
- **CPU**: the system processes' user + system time during play over wall time (2 cores: at most 2.00), and per acknowledged line: what a line costs the engine, the memory service (ingest, embedding every line for retrieval, consolidation) and the NPC turns together. With the sentence encoder in the process, embedding is most of it; with an OpenAI-compatible embedding endpoint (here a local fake with negligible cost) that work leaves the process, which shows where the 2 cores' ceiling is.
- **RSS**: of the system's processes together, from /proc: fresh (after a warm-up game), the highest sampled during play, and after every game ended, read every 5 s until it is within the target or a minute has passed ("read after"). V8 keeps the heap it grew under load until the process has been quiet for a while (its memory reducer, 20-40 s here), so a reading taken at once shows garbage, not what is held. What each service holds is in its \`/metrics\` (\`process_resident_memory_bytes\`, \`nodejs_heap_size_used_bytes\`), printed with the run's JSON.
`,
);
console.log(`\nwrote ${opts.out}`);
