/**
 * `npm run bench`: the whole benchmark suite, one command. Each part runs in its own process
 * (fresh heap, its own progress bar) and compares against its same-run baseline:
 *
 * | part          | growing sizes                     | baseline in the same run                     |
 * |---------------|-----------------------------------|----------------------------------------------|
 * | store/search  | episodic rows                     | raw SQL floor (owner, no RLS, no decryption) |
 * | citus         | 200,000 -> 1,000,000 memories     | single-node PostgreSQL, same run and data    |
 * | replicas      | 1 -> 3 memory-service processes   | 1 process; single-node PostgreSQL beside it  |
 * | context       | memories stored                   | naive whole-history context (tokens)         |
 * | NPC turn      | (at the largest store)            | stage breakdown                              |
 * | consolidation | episodes per job                  | rule extractor alone, no database            |
 * | engine        | 10 games -> 1,000 games           | naive fan-out floor; 10 games                |
 * | load          | human pace -> bot pace (HTTP)     | the same run with embedding outside (fake)   |
 *
 * Writes docs/benchmarks.md (machine, date, revision, every table). `--quick` for a small run.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { execSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';

const opts = new Command('bench')
  .option('--quick', 'small sizes (about a minute); the full run takes several minutes')
  .option('--backend <which>', 'pglite, postgres or both', 'both')
  .option('--only <parts>', 'comma-separated: store,citus,replicas,consolidation,engine,load')
  .option('--out <file>', 'markdown report', 'docs/benchmarks.md')
  .parse()
  .opts<{ quick?: boolean; backend: string; only?: string; out: string }>();

const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-suite-'));
const parts = [
  {
    name: 'store',
    title: 'Store, retrieval, context assembly and NPC turn',
    cmd: ['npx', 'tsx', 'bench/run.ts', '--backend', opts.backend, ...(opts.quick ? ['--sizes', '2000,10000', '--queries', '200'] : [])],
  },
  {
    name: 'citus',
    title: 'Citus beside single-node PostgreSQL',
    // Its own cluster of a coordinator and two workers on this machine (scripts/citus-cluster.sh).
    cmd: ['npx', 'tsx', 'bench/run.ts', '--backend', 'postgres,citus', ...(opts.quick ? ['--sizes', '2000,10000', '--queries', '200'] : ['--sizes', '200000,1000000', '--queries', '300'])],
  },
  {
    name: 'replicas',
    title: 'Memory-service replicas',
    // Separate memory-service processes on one Citus cluster of its own, and on single-node PostgreSQL.
    cmd: ['npx', 'tsx', 'bench/replicas.ts', ...(opts.quick ? ['--games', '10', '--lines', '20', '--seconds', '5'] : [])],
  },
  {
    name: 'consolidation',
    title: 'Consolidation',
    cmd: ['npx', 'tsx', 'bench/consolidation.ts', '--backend', opts.backend, ...(opts.quick ? ['--sizes', '20,100', '--jobs', '3'] : ['--sizes', '20,100,400', '--jobs', '10'])],
  },
  {
    name: 'engine',
    title: 'Engine',
    cmd: ['node', '--expose-gc', '--import', 'tsx', 'bench/engine.ts', ...(opts.quick ? ['--games', '100', '--messages', '5000', '--ws-games', '10', '--ws-messages', '300', '--durable-messages', '1000'] : [])],
  },
  {
    name: 'load',
    title: 'The whole system under players',
    cmd: ['npx', 'tsx', 'bench/load.ts', ...(opts.quick ? ['--runs', 'pglite:hash:10000:20,postgres:openai:10000:50:split', '--duration', '30'] : [])],
  },
].filter((p) => !opts.only || opts.only.split(',').includes(p.name));

const sections: string[] = [];
const started = Date.now();
for (const [i, part] of parts.entries()) {
  const out = path.join(dir, `${part.name}.md`);
  process.stderr.write(`\n[${i + 1}/${parts.length}] ${part.title}: ${part.cmd.join(' ')}\n`);
  const t0 = Date.now();
  const code = await new Promise<number>((resolve) => {
    const child = spawn(part.cmd[0]!, [...part.cmd.slice(1), '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  if (code !== 0) {
    sections.push(`## ${part.title}\n\nFAILED (exit ${code}): \`${part.cmd.join(' ')}\`\n`);
    process.exitCode = 1;
    continue;
  }
  const body = (await readFile(out, 'utf8')).replace(/^(#+) /gm, '#$1 ');
  sections.push(`${body.trim()}\n\n_Part took ${((Date.now() - t0) / 1000).toFixed(0)} s; command: \`${part.cmd.join(' ')}\`._\n`);
}
await rm(dir, { recursive: true, force: true });

const revision = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
await writeFile(
  opts.out,
  `# Benchmarks

- Date: ${new Date().toISOString()}
- Revision: \`${revision}\`
- Machine: ${cpu}, ${os.cpus().length} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}
- Run: \`npm run bench${opts.quick ? ' -- --quick' : ''}\` (${opts.quick ? 'quick sizes' : 'full sizes'}, backend ${opts.backend}); total ${((Date.now() - started) / 1000).toFixed(0)} s

Every part compares against a baseline measured in the same run (see each table).

${sections.join('\n')}`,
);
process.stderr.write(`\nwrote ${opts.out}\n`);
