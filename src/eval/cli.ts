/**
 * `npm run eval` (seed 002), `npm run eval:extended` (seed 002 section 9), `npm run
 * eval:scenarios` (seed 000), and `eval verify <result.json>`. See docs/eval/README.md.
 */
import { Command, Option } from 'commander';
import { loadDataset } from './dataset.js';
import { gitRevision, environment, writeResultOnce, ResultExistsError } from './result-file.js';
import { runSeed002, summarize, type RepetitionRecord } from './seed002.js';
import { startInProcess, remoteTarget, type EvalTarget } from './target.js';
import { progressBar } from './progress.js';
import { readFile } from 'node:fs/promises';

const program = new Command('eval').description('Evaluate the NPC memory system end to end (docs/eval/README.md)');

const targetOptions = (command: Command) =>
  command
    .option('--engine-url <url>', 'evaluate a running system through its engine API instead of starting one in process')
    .option('--operator-token <token>', 'with --engine-url: the operator token, for per-stage timings')
    .addOption(new Option('--database-url <url>', 'in process: native PostgreSQL server (a fresh database is created and dropped)').env('DATABASE_URL'));

async function openTarget(opts: { engineUrl?: string; operatorToken?: string; databaseUrl?: string }): Promise<EvalTarget> {
  if (opts.engineUrl) return remoteTarget(opts.engineUrl, { operatorToken: opts.operatorToken });
  return startInProcess({ databaseUrl: opts.databaseUrl });
}

const stamp = () => new Date().toISOString().replace(/[:.]/g, '-');

targetOptions(
  program
    .command('seed002', { isDefault: true })
    .description("seed 002's paired-tenant protocol: recall, foreign-fact leakage, latency")
    .option('--dataset <file>', 'dataset of paired tenants', 'eval/datasets/seed-002.json')
    .option('--settle-ms <ms>', 'settling interval after the setup messages', '150')
    .option('--repetitions <n>', 'repetitions, each with fresh identities (at least 3 for a valid run)', '3')
    .option('--reply-timeout-ms <ms>', 'longest wait for one NPC reply', '10000')
    .option('--output <file>', 'result JSON, written once (default: eval/results/seed-002-<time>.json)')
    .option('--enforce-targets', 'exit 1 on any miss, leak, identity confirmation or latency target miss'),
).action(async (opts: { dataset: string; settleMs: string; repetitions: string; replyTimeoutMs: string; output?: string; enforceTargets?: boolean; engineUrl?: string; operatorToken?: string; databaseUrl?: string }) => {
  const settleMs = nonNegative('--settle-ms', opts.settleMs);
  const repetitions = nonNegative('--repetitions', opts.repetitions);
  if (repetitions < 1) fail('--repetitions must be at least 1 (the protocol asks for 3 or more)');
  const output = opts.output ?? `eval/results/seed-002-${stamp()}.json`;
  const { dataset, sha256, text } = await loadDataset(opts.dataset);
  const revision = gitRevision();
  const startedAt = new Date().toISOString();
  const target = await openTarget(opts);
  let records: RepetitionRecord[];
  try {
    records = await runSeed002(target, dataset, {
      settleMs,
      repetitions,
      replyTimeoutMs: nonNegative('--reply-timeout-ms', opts.replyTimeoutMs),
      onProgress: progressBar('seed-002'),
    });
  } finally {
    await target.close();
  }
  const summary = summarize(records, dataset.targets);
  const result = {
    schema: 'npc-memory/eval-seed002@1',
    startedAt,
    finishedAt: new Date().toISOString(),
    revision,
    command: ['npm run eval --', ...process.argv.slice(3)].join(' '),
    dataset: { file: opts.dataset, sha256, name: dataset.name, content: JSON.parse(text) as unknown },
    configuration: {
      settleMs,
      settling: target.kind === 'in-process' ? 'wait settle-ms, then drain the consolidation queue' : 'wait settle-ms',
      repetitions,
      replyTimeoutMs: Number(opts.replyTimeoutMs),
      target: target.kind,
      engineUrl: target.kind === 'remote' ? target.engineUrl : 'in-process (ports 0)',
      backend: target.backend,
      latency: 'HTTP request that posts the line + wait for the NPC reply on the room stream',
    },
    models: target.models,
    environment: environment(),
    targets: dataset.targets,
    summary,
    repetitions: records,
  };
  await writeResultOnce(output, result);
  report(summary, output);
  if (opts.enforceTargets && !summary.ok) process.exitCode = 1;
});

program
  .command('verify')
  .description('re-score a seed-002 result file from its JSON alone and compare with its summary')
  .argument('<file>')
  .action(async (file: string) => {
    const result = JSON.parse(await readFile(file, 'utf8')) as { summary: unknown; repetitions: RepetitionRecord[]; targets: Parameters<typeof summarize>[1] };
    const again = summarize(result.repetitions, result.targets);
    const same = JSON.stringify(again) === JSON.stringify(result.summary);
    console.log(same ? `${file}: the summary follows from the raw records` : `${file}: the summary does NOT follow from the raw records`);
    if (!same) process.exitCode = 1;
  });

function report(summary: ReturnType<typeof summarize>, output: string) {
  const l = summary.latency;
  const lines = [
    `probes ${summary.probes}, passed ${summary.passed} (${(summary.passRate * 100).toFixed(1)}%)`,
    `missing recall: ${summary.missingRecall.count}`,
    `foreign-fact leaks: ${summary.leaks.length}`,
    ...summary.leaks.map((k) => `  LEAK rep ${k.repetition} ${k.tenant}/${k.probeId}: "${k.leaked}" (${k.owner}'s) in "${k.reply}"`),
    `identity confirmations: ${summary.identityConfirmations.length}`,
    `latency ms: mean ${l.meanMs}, median ${l.medianMs}, p95 ${l.p95Ms}, max ${l.maxMs}, <= ${l.thresholdMs} ms: ${(l.shareWithin * 100).toFixed(1)}%`,
    `targets: ${Object.entries(summary.targets).map(([k, v]) => `${k} ${v ? 'met' : 'MISSED'}`).join(', ')}`,
    `result: ${output}`,
  ];
  console.log(lines.join('\n'));
}

function nonNegative(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) fail(`${flag} must be a non-negative number, not ${JSON.stringify(value)}`);
  return n;
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof ResultExistsError) fail(error.message);
  throw error;
}
