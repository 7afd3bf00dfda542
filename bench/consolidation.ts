/**
 * Consolidation benchmark: episodes written through the real ingest path into games of growing
 * size, then one consolidation job per game (extract, classify, firewall, poisoning guard,
 * supersede, write facts with provenance), timed per job. Same-run baseline: the rule extractor
 * alone on the same episode texts, in memory, with no database reads or writes; the gap is
 * what the pipeline's I/O and policies cost. Writes a markdown section (--out).
 */
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { openPGlite } from '../src/memory/db/pglite.js';
import { openPostgres } from '../src/memory/db/postgres.js';
import { migrate } from '../src/memory/db/migrate.js';
import { buildMemorySystem } from '../src/memory/system.js';
import { LocalHashEmbedder } from '../src/memory/embeddings/local.js';
import { SentenceEncoderEmbedder, shutdownSentenceEncoder } from '../src/memory/embeddings/sentence-encoder.js';
import type { Embedder } from '../src/memory/embeddings/types.js';
import { createTenant } from '../src/memory/credentials.js';
import { RuleExtractor } from '../src/memory/consolidation/extract/rules.js';
import type { EpisodeInput } from '../src/memory/consolidation/extract/types.js';
import { queueStats } from '../src/memory/jobs/queue.js';
import { percentile, progress } from './support.js';
import { tempDir } from '../test/helpers/database.js';
import pg from 'pg';

// The pipeline is measured with the hashing embedder (the store's and the extractor's cost), then
// with the default sentence encoder, which embeds every new fact of a job in one batch.
const HASH = new LocalHashEmbedder();
const ENCODER = new SentenceEncoderEmbedder();

const opts = new Command('bench:consolidation')
  .option('--backend <which>', 'pglite, postgres or both', 'both')
  .option('--sizes <list>', 'episodes per game (one consolidation job each)', '20,100,400')
  .option('--jobs <n>', 'games (jobs) per size', '10')
  .option('--out <file>', 'markdown section', 'docs/benchmarks-consolidation.md')
  .option('--lag-seconds <n>', 'sustained-ingest phase: seconds of ingest at --lag-rate with a worker running', '10')
  .option('--lag-rate <n>', 'sustained-ingest phase: events per second offered', '2000')
  .parse()
  .opts<{ backend: string; sizes: string; jobs: string; out: string; lagSeconds: string; lagRate: string }>();
const sizes = opts.sizes.split(',').map(Number);
const JOBS = Number(opts.jobs);

const COLORS = ['teal', 'crimson', 'amber', 'violet', 'ochre'];
const JOBS_OF = ['nurse', 'pilot', 'carpenter', 'teacher', 'chef'];
const LINES = [
  (i: number) => `My favorite color is ${COLORS[i % 5]}.`,
  (i: number) => `I work as a ${JOBS_OF[i % 5]} in the harbor.`,
  (i: number) => `I work at Globex ${i}.`,
  (i: number) => `My dog is called Rex${i}.`,
  () => 'hello there, what a dusty room this is',
  () => 'did you see the candles on the mantel?',
  (i: number) => `I have been restoring an old boat for ${i % 9} winters.`,
  () => 'thanks, that helps',
];
const textOf = (g: number, i: number) => LINES[(g + i) % LINES.length]!(i);

async function open(which: string) {
  if (which === 'pglite') {
    const db = await openPGlite();
    return { db, drop: () => db.close() };
  }
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await run('DROP DATABASE IF EXISTS memory_bench_consolidation WITH (FORCE)');
  await run('CREATE DATABASE memory_bench_consolidation');
  const url = new URL(adminUrl);
  url.pathname = '/memory_bench_consolidation';
  const db = openPostgres(url.toString());
  return { db, drop: async () => (await db.close(), await run('DROP DATABASE IF EXISTS memory_bench_consolidation WITH (FORCE)')) };
}

interface Row { backend: string; embedder: string; episodes: number; jobs: number; jobP50: number; jobP99: number; perSec: number; baselinePerSec: number; facts: number }

async function bench(which: string, embedder: Embedder): Promise<Row[]> {
  const { db, drop } = await open(which);
  const keys = await tempDir('bench-consolidation');
  const rows: Row[] = [];
  try {
    await migrate(db);
    const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false, embedder });
    const { tenantId } = await createTenant(db, 'bench-consolidation');
    const extractor = new RuleExtractor();
    for (const size of sizes) {
      const samples: number[] = [];
      let facts = 0;
      let baselineMs = 0;
      for (let j = 0; j < JOBS; j++) {
        const gameId = `cons-${size}-${j}`;
        const events = Array.from({ length: size }, (_, i) => ({ gameId, roomId: 'hall', npcId: 'npc-mara-quenby', participantId: `bench-player-${i % 4}-${j}x`, ts: 1_764_000_000 + i, targeted: true, text: textOf(j, i), anonymous: false }));
        for (let b = 0; b < events.length; b += 100) {
          await system.service.ingest({ tenantId, gameId, role: 'runtime' }, { idempotencyKey: `c-${size}-${j}-${b}`, events: events.slice(b, b + 100) });
        }
        // Baseline: the extractor alone on the same texts.
        const inputs: EpisodeInput[] = events.map((e, i) => ({ id: `e${i}`, gameId, npcId: e.npcId, roomId: e.roomId, participantId: e.participantId, anonymous: false, kind: 'utterance', ts: e.ts, targeted: true, text: e.text }));
        const b0 = performance.now();
        await extractor.extract(inputs);
        baselineMs += performance.now() - b0;
        const t0 = performance.now();
        const report = await system.consolidator.consolidate({ tenantId, gameId, npcId: 'npc-mara-quenby' });
        samples.push(performance.now() - t0);
        facts += Object.values(report.written).reduce((a, b) => a + b, 0);
        progress(`${which}: consolidation (${embedder.id}), ${size} episodes per job`, j + 1, JOBS);
      }
      const totalMs = samples.reduce((a, b) => a + b, 0);
      rows.push({ backend: which, embedder: embedder.id, episodes: size, jobs: JOBS, jobP50: percentile(samples, 50), jobP99: percentile(samples, 99), perSec: (size * JOBS) / (totalMs / 1000), baselinePerSec: (size * JOBS) / (baselineMs / 1000), facts });
    }
    await system.close(); // closes the database too
  } finally {
    await drop().catch(() => {});
    await keys.remove();
  }
  return rows;
}

interface LagRow { backend: string; offered: number; achieved: number; seconds: number; lagP50: number; lagMax: number; drainSeconds: number; jobs: number }

/**
 * Queue lag under sustained ingest: events offered at a steady rate (20-event batches over 50
 * games, from 4 concurrent senders) while one background worker consolidates; the queue's lag (age of the oldest due job)
 * is sampled every 250 ms, and after the ingest stops, how long the worker takes to catch up.
 */
async function lag(which: string): Promise<LagRow> {
  const { db, drop } = await open(which);
  const keys = await tempDir('bench-consolidation-lag');
  try {
    await migrate(db);
    const system = await buildMemorySystem(db, { keyringDir: keys.dir, logger: false, embedder: HASH, lifecycle: { workers: 1 } });
    const { tenantId } = await createTenant(db, 'bench-consolidation-lag');
    const rate = Number(opts.lagRate);
    const seconds = Number(opts.lagSeconds);
    const lags: number[] = [];
    let sent = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        lags.push((await queueStats(db, new Date())).lagMs);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const started = performance.now();
    const LANES = 4;
    // Four concurrent senders, each offering a quarter of the rate on its own schedule; a sender
    // that falls behind runs flat out.
    const lane = async (k: number) => {
      for (let n = 0; performance.now() - started < seconds * 1000; n++) {
        const batch = n * LANES + k;
        const wait = ((batch * 20) / rate) * 1000 - (performance.now() - started);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const gameId = `lag-${batch % 50}`;
        const events = Array.from({ length: 20 }, (_, i) => ({ gameId, roomId: 'hall', npcId: 'npc-mara-quenby', participantId: `lag-player-${i % 8}-x`, ts: 1_764_000_000 + batch, targeted: false, text: textOf(batch, i), anonymous: false }));
        await system.service.ingest({ tenantId, gameId, role: 'runtime' }, { idempotencyKey: `lag-${batch}`, events });
        sent += events.length;
        if (k === 0 && n % 25 === 0) progress(`${which}: sustained ingest`, Math.min(seconds, Math.round((performance.now() - started) / 1000)), seconds);
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, k) => lane(k)));
    const ingestSeconds = (performance.now() - started) / 1000;
    progress(`${which}: sustained ingest`, seconds, seconds);
    const drainStart = performance.now();
    while ((await queueStats(db, new Date())).queued + (await queueStats(db, new Date())).running > 0) await new Promise((r) => setTimeout(r, 100));
    const drainSeconds = (performance.now() - drainStart) / 1000;
    sampling = false;
    await sampler;
    const { rows } = await db.query<{ n: number }>("SELECT count(*) AS n FROM memory.jobs WHERE state = 'done'");
    await system.close();
    return { backend: which, offered: rate, achieved: sent / ingestSeconds, seconds: ingestSeconds, lagP50: percentile(lags, 50), lagMax: Math.max(...lags), drainSeconds, jobs: Number(rows[0]!.n) };
  } finally {
    await drop().catch(() => {});
    await keys.remove();
  }
}

const results: Row[] = [];
const lagRows: LagRow[] = [];
for (const which of opts.backend === 'both' ? ['pglite', 'postgres'] : [opts.backend]) {
  results.push(...(await bench(which, HASH)));
  results.push(...(await bench(which, ENCODER)));
  lagRows.push(await lag(which));
}
await shutdownSentenceEncoder();
const f = (n: number) => n.toFixed(1);
const table = [
  '| backend | embedder | episodes per job | jobs | job p50 ms | job p99 ms | episodes/s per worker | facts written | episodes/s (rule extractor alone, no DB) | pipeline / extractor |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map((r) => `| ${r.backend} | ${r.embedder} | ${r.episodes} | ${r.jobs} | ${f(r.jobP50)} | ${f(r.jobP99)} | ${Math.round(r.perSec)} | ${r.facts} | ${Math.round(r.baselinePerSec)} | ${(r.perSec / r.baselinePerSec).toFixed(4)} |`),
].join('\n');
const lagTable = [
  '| backend | events/s offered | events/s achieved | seconds | queue lag p50 ms | queue lag max ms | catch-up after ingest s | jobs done |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...lagRows.map((r) => `| ${r.backend} | ${r.offered} | ${Math.round(r.achieved)} | ${f(r.seconds)} | ${Math.round(r.lagP50)} | ${Math.round(r.lagMax)} | ${f(r.drainSeconds)} | ${r.jobs} |`),
].join('\n');
await writeFile(
  opts.out,
  `# Consolidation

One job = one game's unconsolidated episodes for one NPC (the consolidation queue's unit): read and
decrypt the episodes, extract candidates with the rule extractor, classify clue or social, clue
firewall, poisoning guard, supersede, write facts with provenance. Baseline in the same run: the
rule extractor alone on the same texts, in memory (no database). One job runs on one worker, so
episodes/s is the throughput of one worker; jobs are per (game, NPC), so workers add up. With the
sentence encoder (the default) every new fact of a job is embedded in one batch.

${table}

Queue lag under sustained ingest (one background worker; ingest from 4 concurrent senders in batches
of 20 across 50 games;
lag = age of the oldest due job, sampled every 250 ms; jobs coalesce per game and NPC):

${lagTable}
`,
);
console.log(table);
console.log(lagTable);
