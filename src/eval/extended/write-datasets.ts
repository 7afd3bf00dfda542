/** Regenerates eval/datasets/extended.json (eval split) and extended.dev.json: `tsx src/eval/extended/write-datasets.ts`. */
import { writeFile } from 'node:fs/promises';
import { pairingProblems } from '../dataset.js';
import { generateExtended } from './generate.js';

for (const split of ['eval', 'dev'] as const) {
  const dataset = generateExtended({ split });
  const problems = pairingProblems(dataset);
  if (problems.length) throw new Error(problems.join('\n'));
  const file = `eval/datasets/extended${split === 'dev' ? '.dev' : ''}.json`;
  await writeFile(file, `${JSON.stringify(dataset, null, 2)}\n`);
  process.stdout.write(`${file}: ${dataset.pairs.length} pairs, ${dataset.tenants.reduce((n, t) => n + t.probes.length, 0)} probes\n`);
}
