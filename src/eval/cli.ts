/**
 * `npm run eval` (seed 002; `seed002-all`: with its rephrased variants), `npm run eval:natural`
 * (natural-phrasing paired tenants, dev or test split), `npm run eval:scenarios` (seed 000), and
 * `eval verify <result.json>`. See docs/eval/README.md.
 */
import { Command, Option } from 'commander';
import { parsePrices, type Prices } from './cost.js';
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
    .option('--price-per-1k <input,output>', "the model's price per 1,000 input and output tokens, for cost per probe (recorded in the result)")
    .option('--enforce-targets', 'exit 1 on any miss, leak, identity confirmation or latency target miss'),
).action(async (opts: { dataset: string; settleMs: string; repetitions: string; replyTimeoutMs: string; output?: string; pricePer1k?: string; enforceTargets?: boolean; engineUrl?: string; operatorToken?: string; databaseUrl?: string }) => {
  const prices = pricesOf(opts.pricePer1k);
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
  const summary = summarize(records, dataset.targets, prices);
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
      pricesPer1k: prices ?? null,
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
  .command('natural')
  .description('natural-phrasing paired tenants: recall, paraphrase, update, stale, abstention, forget, same-game, erasure; ablations; bootstrap CIs (docs/eval/README.md)')
  .addOption(new Option('--split <split>', 'which split (tune on dev; val is written apart from the project; val2 and test are for reporting)').choices(['dev', 'val', 'val2', 'test']).makeOptionMandatory())
  .addOption(new Option('--backend <backend>', 'database of the system started in process').choices(['pglite', 'postgres']).default('pglite'))
  .addOption(new Option('--database-url <url>', 'with --backend postgres: the server (a fresh database is created and dropped)').env('DATABASE_URL'))
  .option('--dataset <file>', 'dataset (default: eval/datasets/natural.<split>.json)')
  .option('--pairs <n>', 'use only the first n pairs (a quick look; a valid run uses all, at least 20)')
  .option('--settle-ms <ms>', 'settling interval after setup and after erasure', '150')
  .option('--reply-timeout-ms <ms>', 'longest wait for one NPC reply', '10000')
  .option('--no-ablations', 'skip the retrieval ablations')
  .option('--dump-windows <file>', "with ablations: write each probe's context window in a new game, one JSON line each, to replay the responder on (src/eval/replay.ts)")
  .option('--output <file>', 'result JSON, written once (default: eval/results/natural-<split>-<backend>.json)')
  .option('--report <file>', 'also write a markdown report here')
  .option('--price-per-1k <input,output>', "the model's price per 1,000 input and output tokens, for cost per probe (recorded in the result)")
  .option('--enforce-targets', 'exit 1 when a target is not met')
  .action(async (opts: { split: 'dev' | 'val' | 'val2' | 'test'; backend: 'pglite' | 'postgres'; databaseUrl?: string; dataset?: string; pairs?: string; settleMs: string; replyTimeoutMs: string; ablations: boolean; dumpWindows?: string; output?: string; report?: string; pricePer1k?: string; enforceTargets?: boolean }) => {
    const prices = pricesOf(opts.pricePer1k);
    if (opts.backend === 'postgres' && !opts.databaseUrl) fail('--backend postgres needs --database-url (or DATABASE_URL)');
    const { generateNatural } = await import('./natural/generate.js');
    const { naturalFiles } = await import('./natural/files.js');
    const { runExtended } = await import('./extended/run.js');
    const { summarizeExtended, extendedMarkdown, consoleReport } = await import('./extended/summary.js');
    const { writeFile } = await import('node:fs/promises');
    const settleMs = nonNegative('--settle-ms', opts.settleMs);
    const file = opts.dataset ?? naturalFiles[opts.split];
    const output = opts.output ?? `eval/results/natural-${opts.split}-${opts.backend}.json`;
    const loaded = await loadDataset(file);
    const dataset = structuredClone(loaded.dataset);
    if (opts.pairs) {
      dataset.pairs = dataset.pairs.slice(0, nonNegative('--pairs', opts.pairs));
      const keep = new Set(dataset.pairs.flat());
      dataset.tenants = dataset.tenants.filter((t) => keep.has(t.alias));
    }
    // The val split was written by hand, apart from the generator (eval/datasets/README.md).
    const reproducible = opts.split === 'val' || opts.split === 'val2' ? null : `${JSON.stringify(generateNatural({ split: opts.split }), null, 2)}\n` === loaded.text;
    const revision = gitRevision();
    const startedAt = new Date().toISOString();
    const target = await startInProcess({ databaseUrl: opts.backend === 'postgres' ? opts.databaseUrl : undefined });
    let pairs;
    try {
      pairs = await runExtended(target, dataset, { settleMs, ablations: opts.ablations, dumpWindows: opts.dumpWindows, replyTimeoutMs: nonNegative('--reply-timeout-ms', opts.replyTimeoutMs), onProgress: progressBar(`natural ${opts.split}`) });
    } finally {
      await target.close();
    }
    const summary = summarizeExtended(pairs, dataset, prices);
    await writeResultOnce(output, {
      schema: 'npc-memory/eval-natural@1',
      startedAt,
      finishedAt: new Date().toISOString(),
      revision,
      command: ['npm run eval:natural --', ...process.argv.slice(3)].join(' '),
      split: opts.split,
      dataset: { file, sha256: loaded.sha256, name: loaded.dataset.name, pairsUsed: dataset.pairs.length, regeneratesIdentically: reproducible, content: JSON.parse(loaded.text) as unknown },
      configuration: {
        settleMs,
        settling: 'wait settle-ms, then drain the consolidation queue',
        pricesPer1k: prices ?? null,
        ablations: opts.ablations ? ['full', 'transcript', 'episodic', 'social'] : [],
        backend: target.backend,
        bootstrap: { resamples: 2000, level: 0.95, seed: 1, unit: 'tenant pair' },
      },
      models: target.models,
      environment: environment(),
      targets: dataset.targets,
      summary,
      pairs,
    });
    if (opts.report) {
      await writeFile(opts.report, extendedMarkdown(summary, { title: `Natural-phrasing evaluation, ${opts.split} split`, revision, startedAt, datasetSha256: loaded.sha256, output, backend: target.backend, pairs: dataset.pairs.length }));
    }
    console.log(`${consoleReport(summary)}\nresult: ${output}${opts.report ? `\nreport: ${opts.report}` : ''}`);
    if (reproducible === false) console.log(`note: ${file} no longer regenerates identically from src/eval/natural/generate.ts`);
    if (opts.enforceTargets && !summary.ok) process.exitCode = 1;
  });

/** Seed 002 and its two rephrased variants, each on a fresh system, side by side. */
const SEED002_VARIANTS = [
  { name: 'original', file: 'eval/datasets/seed-002.json' },
  { name: 'setup rephrased', file: 'eval/datasets/seed-002-setup-rephrased.json' },
  { name: 'questions rephrased', file: 'eval/datasets/seed-002-questions-rephrased.json' },
];

targetOptions(
  program
    .command('seed002-all')
    .description("seed 002 and its rephrased variants (setup in other words; questions in other words), side by side: target >= 15/18 and 0 leaks each")
    .option('--settle-ms <ms>', 'settling interval after the setup messages', '150')
    .option('--repetitions <n>', 'repetitions per variant, each with fresh identities', '3')
    .option('--reply-timeout-ms <ms>', 'longest wait for one NPC reply', '10000')
    .option('--min-passed <n>', 'probes that must pass per variant, out of every 18 (6 probes x 3 repetitions)', '15')
    .option('--output <file>', 'result JSON, written once (default: eval/results/seed-002-all-<backend>-<time>.json)')
    .option('--enforce-targets', 'exit 1 when a variant misses its target'),
).action(async (opts: { settleMs: string; repetitions: string; replyTimeoutMs: string; minPassed: string; output?: string; enforceTargets?: boolean; engineUrl?: string; operatorToken?: string; databaseUrl?: string }) => {
  const settleMs = nonNegative('--settle-ms', opts.settleMs);
  const repetitions = nonNegative('--repetitions', opts.repetitions);
  const minPassed = nonNegative('--min-passed', opts.minPassed);
  const startedAt = new Date().toISOString();
  const variants = [];
  let backend = 'unknown';
  for (const variant of SEED002_VARIANTS) {
    const { dataset, sha256, text } = await loadDataset(variant.file);
    const target = await openTarget(opts);
    backend = target.backend;
    let records: RepetitionRecord[];
    try {
      records = await runSeed002(target, dataset, { settleMs, repetitions, replyTimeoutMs: nonNegative('--reply-timeout-ms', opts.replyTimeoutMs), onProgress: progressBar(`seed-002 ${variant.name}`) });
    } finally {
      await target.close();
    }
    const summary = summarize(records, dataset.targets);
    // At least minPassed of every 18 probes (15/18 with the default 3 repetitions) and no leak.
    variants.push({ ...variant, sha256, content: JSON.parse(text) as unknown, summary, met: summary.passed * 18 >= minPassed * summary.probes && summary.leaks.length === 0, repetitions: records });
  }
  const output = opts.output ?? `eval/results/seed-002-all-${backend}-${stamp()}.json`;
  await writeResultOnce(output, {
    schema: 'npc-memory/eval-seed002-all@1',
    startedAt,
    finishedAt: new Date().toISOString(),
    revision: gitRevision(),
    command: ['npx tsx src/eval/cli.ts seed002-all', ...process.argv.slice(3)].join(' '),
    configuration: { settleMs, repetitions, backend, target: { minPassedPer18: minPassed, leaks: 0 } },
    environment: environment(),
    variants,
  });
  console.log('variant               passed   leaks  missing  p95 ms  target');
  for (const v of variants) {
    console.log(`${v.name.padEnd(21)} ${`${v.summary.passed}/${v.summary.probes}`.padEnd(8)} ${String(v.summary.leaks.length).padEnd(6)} ${String(v.summary.missingRecall.count).padEnd(8)} ${String(v.summary.latency.p95Ms).padEnd(7)} ${v.met ? 'met' : 'NOT MET'}`);
    for (const k of v.summary.leaks) console.log(`  LEAK rep ${k.repetition} ${k.tenant}/${k.probeId}: "${k.leaked}" (${k.owner}'s) in "${k.reply}"`);
  }
  console.log(`result: ${output}`);
  if (opts.enforceTargets && variants.some((v) => !v.met)) process.exitCode = 1;
});

program
  .command('scenarios')
  .description("seed 000's four recall scenarios and one check per failure mode (1-12), with evidence")
  .addOption(new Option('--database-url <url>', 'native PostgreSQL server (a fresh database is created and dropped)').env('DATABASE_URL'))
  .option('--only <ids>', 'comma-separated check ids (scenario-1 .. scenario-4, fm-01 .. fm-12)')
  .option('--output <file>', 'result JSON, written once (default: eval/results/scenarios-<time>.json)')
  .option('--report <file>', 'markdown table', 'docs/eval/scenarios.md')
  .option('--json-copy <file>', 'also write the result JSON here (overwritten: the latest run)', 'docs/eval/scenarios.json')
  .action(async (opts: { databaseUrl?: string; only?: string; output?: string; report: string; jsonCopy: string }) => {
    const { runScenarios, scenariosMarkdown } = await import('./scenarios.js');
    const { writeFile } = await import('node:fs/promises');
    const output = opts.output ?? `eval/results/scenarios-${stamp()}.json`;
    const revision = gitRevision();
    const startedAt = new Date().toISOString();
    const target = await startInProcess({ databaseUrl: opts.databaseUrl });
    let checks;
    try {
      checks = await runScenarios(target, { only: opts.only?.split(','), onProgress: progressBar('scenarios') });
    } finally {
      await target.close();
    }
    const result = { schema: 'npc-memory/eval-scenarios@1', startedAt, finishedAt: new Date().toISOString(), revision, backend: target.backend, models: target.models, environment: environment(), passed: checks.filter((c) => c.pass).length, total: checks.length, checks };
    await writeResultOnce(output, result);
    await writeFile(opts.jsonCopy, `${JSON.stringify(result, null, 2)}\n`);
    await writeFile(opts.report, scenariosMarkdown(checks, { revision, startedAt, backend: target.backend, output: opts.jsonCopy }));
    for (const c of checks) console.log(`${c.pass ? 'pass' : 'FAIL'}  ${c.id}  ${c.title}${c.error ? `  (${c.error})` : ''}`);
    console.log(`${result.passed}/${result.total} pass; report ${opts.report}; result ${output}`);
    if (result.passed !== result.total) process.exitCode = 1;
  });

program
  .command('verify')
  .description('re-score a seed-002 result file from its JSON alone and compare with its summary')
  .argument('<file>')
  .action(async (file: string) => {
    const result = JSON.parse(await readFile(file, 'utf8')) as {
      summary: unknown;
      repetitions: RepetitionRecord[];
      targets: Parameters<typeof summarize>[1];
      configuration?: { pricesPer1k?: Prices | null };
    };
    const again = summarize(result.repetitions, result.targets, result.configuration?.pricesPer1k ?? undefined);
    const same = JSON.stringify(again) === JSON.stringify(result.summary);
    console.log(same ? `${file}: the summary follows from the raw records` : `${file}: the summary does NOT follow from the raw records`);
    if (!same) process.exitCode = 1;
  });

program
  .command('replay')
  .description('the offline responder again on dumped context windows (eval:natural --dump-windows): pass rate per probe kind, in seconds')
  .argument('<dumps...>', 'window dump files (JSON lines)')
  .option('--misses <kind>', 'also print the failed probes of this kind, with their windows\' facts')
  .action(async (files: string[], opts: { misses?: string }) => {
    const { readDumps, replay, replaySummary } = await import('./replay.js');
    const replayed = (await readDumps(files)).map(replay);
    const { byKind, leaks } = replaySummary(replayed);
    for (const [kind, { passed, total }] of Object.entries(byKind)) console.log(`${kind.padEnd(11)} ${((100 * passed) / total).toFixed(1).padStart(5)}%  ${passed}/${total}`);
    console.log(`foreign leaks: ${leaks}`);
    for (const r of replayed.filter((x) => opts.misses !== undefined && (x.dump.probe.kind ?? 'recall') === opts.misses && !x.score.pass)) {
      const { probe, window, asker } = r.dump;
      console.log(`\n? ${probe.question}   [want ${(probe.required ?? probe.anyOf ?? []).join('|')}] topic=${window.retrieval?.topic}/${window.retrieval?.topicFrom} asksFor=${window.retrieval?.asksFor ?? ''}`);
      console.log(`> ${r.reply}`);
      for (const f of window.participants[asker]?.facts ?? []) console.log(`   ${(f.match ?? 0).toFixed(2)} ${f.key.padEnd(28)} ${f.summary}${f.names ? ` (names ${f.names})` : ''}`);
    }
  });

program
  .command('adjudication-sheet')
  .description('semantic recall by blinded human judges, step 1: a shuffled sheet of replies (no tenant, probe kind or score) and its key')
  .argument('<result>', 'a natural (or earlier extended) result file')
  .option('--out <dir>', 'where to write sheet.csv (for the judges) and key.json (for the organiser only)', 'eval/adjudication')
  .option('--seed <n>', 'shuffle seed', '1')
  .action(async (file: string, opts: { out: string; seed: string }) => {
    const { adjudicationSheet } = await import('./adjudication.js');
    const { mkdir, writeFile } = await import('node:fs/promises');
    const text = await readFile(file, 'utf8');
    const result = JSON.parse(text) as { pairs?: Parameters<typeof adjudicationSheet>[0] };
    if (!Array.isArray(result.pairs)) fail(`${file} is not a natural or extended result (it has no "pairs")`);
    const { csv, key } = adjudicationSheet(result.pairs, text, nonNegative('--seed', opts.seed));
    await mkdir(opts.out, { recursive: true });
    await writeFile(`${opts.out}/sheet.csv`, csv);
    await writeFile(`${opts.out}/key.json`, `${JSON.stringify(key, null, 2)}\n`);
    console.log(`${key.entries.length} items: give ${opts.out}/sheet.csv to each judge (fill "judgment" with yes, no or unsure); keep ${opts.out}/key.json from them`);
  });

program
  .command('adjudication-score')
  .description('semantic recall by blinded human judges, step 2: score the judged sheets against the key')
  .argument('<result>', 'the result file the sheet was drawn from')
  .argument('<key>', 'key.json')
  .argument('<sheets...>', 'one judged sheet.csv per judge')
  .action(async (file: string, keyFile: string, sheetFiles: string[]) => {
    const { readSheet, scoreAdjudication, sha256 } = await import('./adjudication.js');
    const key = JSON.parse(await readFile(keyFile, 'utf8')) as Parameters<typeof scoreAdjudication>[0];
    if (key.resultSha256 !== sha256(await readFile(file, 'utf8'))) fail(`${keyFile} was not drawn from ${file} (sha256 differs)`);
    const sheets = [];
    for (const f of sheetFiles) {
      try {
        sheets.push(readSheet(await readFile(f, 'utf8')));
      } catch (error) {
        fail(`${f}: ${(error as Error).message}`);
      }
    }
    console.log(JSON.stringify(scoreAdjudication(key, sheets), null, 2));
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
    `tokens per probe (${summary.cost.counted}): prompt ${summary.cost.meanPromptTokens}, completion ${summary.cost.meanCompletionTokens}${summary.cost.meanCostPerProbe === null ? '' : `; cost per probe ${summary.cost.meanCostPerProbe}`}`,
    `targets: ${Object.entries(summary.targets).map(([k, v]) => `${k} ${v ? 'met' : 'MISSED'}`).join(', ')}`,
    `result: ${output}`,
  ];
  console.log(lines.join('\n'));
}

function pricesOf(text: string | undefined): Prices | undefined {
  if (text === undefined) return undefined;
  try {
    return parsePrices(text);
  } catch (error) {
    fail((error as Error).message);
  }
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
