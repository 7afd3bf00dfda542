/**
 * `npm run bench`: the memory store benchmark of the foundation issue.
 *
 * Seeds episodic rows across many games through the real ingest path (which is also the
 * ingest-throughput measurement), then measures scoped top-10 similarity search (runtime role,
 * RLS, decryption) beside the same search run raw (owner/superuser, no RLS, no decryption) in
 * the same run, at each size. Prints a table and writes docs/benchmarks.md.
 */
import { writeFile } from 'node:fs/promises';
import { execSync } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import pg from 'pg';
import { openPGlite } from '../src/memory/db/pglite.js';
import { openPostgres } from '../src/memory/db/postgres.js';
import { migrate } from '../src/memory/db/migrate.js';
import type { Database } from '../src/memory/db/types.js';
import { assemble } from '../src/memory/system.js';
import { createTenant } from '../src/memory/credentials.js';
import { toVectorLiteral } from '../src/memory/embeddings/types.js';
import type { Scope } from '../src/memory/scope.js';
import { searchEpisodesStatement } from '../src/memory/store/episodes.js';
import { tempDir } from '../test/helpers/database.js';

const program = new Command('bench')
  .option('--backend <which>', 'pglite, postgres or both', 'both')
  .option('--sizes <list>', 'episodic row counts to measure at', '10000,200000')
  .option('--games-per-10k <n>', 'games per 10,000 rows (100 rows per game)', '100')
  .option('--queries <n>', 'search queries per measurement', '1000')
  .option('--concurrency <n>', 'concurrent ingest batches while seeding', '4')
  .option('--out <file>', 'markdown report', 'docs/benchmarks.md')
  .parse();
const opts = program.opts<{ backend: string; sizes: string; gamesPer10k: string; queries: string; concurrency: string; out: string }>();
const sizes = opts.sizes.split(',').map(Number).sort((a, b) => a - b);
const queries = Number(opts.queries);
const ROWS_PER_GAME = Math.round(10_000 / Number(opts.gamesPer10k));
const NPCS = ['npc-mara', 'npc-otto'];
const BATCH = 100;

const WORDS = 'safe code clock library passage candle ledger violin harbor garden lantern mirror painting cellar staircase emperor merchant dentist chess painter river tower key map riddle crown'.split(' ');
const rand = (n: number) => Math.floor(Math.random() * n);
const sentence = () => Array.from({ length: 8 + rand(6) }, () => WORDS[rand(WORDS.length)]).join(' ');

interface Row {
  backend: string;
  rows: number;
  games: number;
  ingestPerSec: number;
  scopedP50: number;
  scopedP99: number;
  rawP50: number;
  rawP99: number;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function progress(label: string, done: number, total: number) {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done >= total) process.stderr.write('\n');
}

async function openBackend(which: string): Promise<{ db: Database; drop(): Promise<void> }> {
  if (which === 'pglite') {
    const db = await openPGlite();
    return { db, drop: () => db.close() };
  }
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS memory_bench WITH (FORCE)');
  await admin.query('CREATE DATABASE memory_bench');
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/memory_bench';
  const db = openPostgres(url.toString());
  return {
    db,
    async drop() {
      await db.close();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query('DROP DATABASE IF EXISTS memory_bench WITH (FORCE)');
      await c.end();
    },
  };
}

async function benchBackend(which: string): Promise<Row[]> {
  const { db, drop } = await openBackend(which);
  const keys = await tempDir('bench-keyring');
  try {
    await migrate(db);
    const system = await assemble(db, { keyringDir: keys.dir, logger: false });
    const { tenantId } = await createTenant(db, 'bench-studio');
    const out: Row[] = [];
    let seededGames = 0;
    let ingestSeconds = 0;
    let ingested = 0;
    for (const size of sizes) {
      const targetGames = Math.ceil(size / ROWS_PER_GAME);
      // Seed through the real ingest path, a few batches at a time.
      const todo = Array.from({ length: targetGames - seededGames }, (_, i) => seededGames + i);
      const started = performance.now();
      let done = 0;
      const worker = async () => {
        for (let g = todo.shift(); g !== undefined; g = todo.shift()) {
          const gameId = `game-${g}`;
          const scope: Scope = { tenantId, gameId, role: 'runtime' };
          for (let b = 0; b < ROWS_PER_GAME; b += BATCH) {
            const events = Array.from({ length: Math.min(BATCH, ROWS_PER_GAME - b) }, (_, i) => ({
              gameId, roomId: 'hall', npcId: NPCS[i % NPCS.length]!, participantId: `player-${g}-${i % 4}x`, ts: 1_764_000_000 + b + i, targeted: false, text: sentence(),
            }));
            await system.service.ingest(scope, { idempotencyKey: `seed-${g}-${b}`, events });
          }
          done += 1;
          if (done % 20 === 0 || done === targetGames - seededGames) progress(`${which}: seeding to ${size} rows`, done, targetGames - seededGames);
        }
      };
      await Promise.all(Array.from({ length: Number(opts.concurrency) }, worker));
      ingestSeconds += (performance.now() - started) / 1000;
      ingested += (targetGames - seededGames) * ROWS_PER_GAME;
      seededGames = targetGames;
      await db.exec('ANALYZE');

      const probes = Array.from({ length: queries }, () => ({ game: `game-${rand(seededGames)}`, npc: NPCS[rand(2)]!, text: sentence() }));
      const scoped: number[] = [];
      const raw: number[] = [];
      // Warm up both paths (plans, caches), then interleave them so both see the same machine state.
      for (const p of probes.slice(0, 50)) await system.service.search({ tenantId, gameId: p.game, npcId: p.npc, role: 'runtime' }, { text: p.text, k: 10, tiers: ['episodic'] });
      for (const [i, p] of probes.entries()) {
        let t = performance.now();
        const found = await system.service.search({ tenantId, gameId: p.game, npcId: p.npc, role: 'runtime' }, { text: p.text, k: 10, tiers: ['episodic'] });
        scoped.push(performance.now() - t);
        if (found.length !== 10) throw new Error(`scoped search returned ${found.length} rows, expected 10`);
        t = performance.now();
        const [vector] = await system.embedder.embed([p.text]);
        // The very statement the scoped path sends, bound and run as the owner.
        const statement = searchEpisodesStatement({ tenantId, gameId: p.game, npcId: p.npc, role: 'runtime' }, toVectorLiteral(vector!), 10)!;
        const { rows } = await db.query(statement.text, statement.params);
        raw.push(performance.now() - t);
        if (rows.length !== 10) throw new Error('raw search returned too few rows');
        if (i % 100 === 99) progress(`${which}: searching at ${size} rows`, i + 1, probes.length);
      }
      out.push({
        backend: which,
        rows: seededGames * ROWS_PER_GAME,
        games: seededGames,
        ingestPerSec: ingested / ingestSeconds,
        scopedP50: percentile(scoped, 50),
        scopedP99: percentile(scoped, 99),
        rawP50: percentile(raw, 50),
        rawP99: percentile(raw, 99),
      });
    }
    await system.app.close();
    return out;
  } finally {
    await drop();
    await keys.remove();
  }
}

const backends = opts.backend === 'both' ? ['pglite', 'postgres'] : [opts.backend];
const results: Row[] = [];
for (const b of backends) results.push(...(await benchBackend(b)));

const f = (n: number) => n.toFixed(2);
const header = '| backend | rows | games | ingest events/s (cumulative) | scoped p50 ms | scoped p99 ms | raw floor p50 ms | raw floor p99 ms | scoped/raw p50 | p50 vs smallest size |';
const lines = results.map((r) => {
  const base = results.find((x) => x.backend === r.backend)!;
  return `| ${r.backend} | ${r.rows} | ${r.games} | ${Math.round(r.ingestPerSec)} | ${f(r.scopedP50)} | ${f(r.scopedP99)} | ${f(r.rawP50)} | ${f(r.rawP99)} | ${f(r.scopedP50 / r.rawP50)}x | ${f(r.scopedP50 / base.scopedP50)}x |`;
});
const revision = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const table = [header, `|${'---|'.repeat(10)}`, ...lines].join('\n');
const report = `# Benchmarks

Memory store (issue: memory service foundation). Produced by \`npm run bench\`; do not edit by hand.

- date: ${new Date().toISOString()}
- revision: ${revision}
- machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}
- ${queries} queries per row; ${ROWS_PER_GAME} episodic rows per game over ${NPCS.length} NPCs; ingest in batches of ${BATCH} with ${opts.concurrency} concurrent batches, local embedder

**Scoped** = \`MemoryService.search\`: embed the query, one transaction as \`memory_runtime\` with the scope set, RLS, top-10 by cosine distance, decrypt the 10 rows.
**Raw floor** = embed the query and run the same SELECT (same columns, bound parameters) as the owner (superuser: no RLS), no scope, no decryption.

${table}

Targets (native PostgreSQL, 2 cores): scoped p50 <= 2 ms and p99 <= 10 ms at 200,000 rows over 2,000 games; cost at 200,000 within 1.5x of 10,000; scoped within 1.5x of the raw floor; ingest >= 2,000 events/s.
`;
console.log(`\n${table}\n`);
await writeFile(opts.out, report);
console.log(`written to ${opts.out}`);
