/** Helpers every benchmark part shares. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../test/helpers/database.js';

/**
 * A Citus coordinator and two workers on this machine: those of CITUS_COORDINATOR_URL and
 * CITUS_WORKER_URLS, else a cluster of its own (scripts/citus-cluster.sh), stopped by `stop()`.
 * Coordinator and workers share the machine's cores with the benchmark.
 */
export async function citusCluster(): Promise<{ coordinator: string; workers: string[]; stop(): Promise<void> }> {
  const given = process.env.CITUS_COORDINATOR_URL;
  if (given) return { coordinator: given, workers: (process.env.CITUS_WORKER_URLS ?? '').split(',').filter(Boolean), stop: async () => {} };
  const { dir, remove } = await tempDir('bench-citus');
  // The clusters run as postgres (the script drops root to it), who must reach the folder inside.
  await chmod(dir, 0o755);
  const cluster = path.join(dir, 'cluster');
  execFileSync('bash', ['scripts/citus-cluster.sh', 'start', cluster], { stdio: ['ignore', 'ignore', 'inherit'] });
  const env = Object.fromEntries(readFileSync(path.join(cluster, 'env'), 'utf8').trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
  return {
    coordinator: env.CITUS_COORDINATOR_URL!,
    workers: env.CITUS_WORKER_URLS!.split(','),
    async stop() {
      execFileSync('bash', ['scripts/citus-cluster.sh', 'stop', cluster], { stdio: 'ignore' });
      await remove();
    },
  };
}

/** The p-th percentile (0-100) of the samples, nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A one-line progress bar on stderr, ended with a newline when done. */
export function progress(label: string, done: number, total: number): void {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done >= total) process.stderr.write('\n');
}

/** Starts `src/main.ts` with `env`; resolves with the URLs of its banner once it is printed. */
export function startProcess(env: Record<string, string>): Promise<{ child: ChildProcess; urls: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=<dir>: each system process writes a V8 CPU profile there when it exits.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, LOG_LEVEL: 'error', PORT: '0', MEMORY_PORT: '0', REGISTRY_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      if (!out.endsWith('\n\n')) return; // the banner is printed whole, ending with a blank line
      resolve({ child, urls: Object.fromEntries([...out.matchAll(/^\s+(play|memory service):\s+(http:\/\/\S+?)\/?(?:\s|$)/gm)].map((m) => [m[1]!, m[2]!])) });
    });
    child.once('exit', (code) => reject(new Error(`${env.SERVICES ?? 'the system'} exited with ${code}: ${out}`)));
  });
}
