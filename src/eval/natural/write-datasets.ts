/**
 * Writes eval/datasets/natural.dev.json, natural.test.json and natural.manifest.json (the seed,
 * each file's sha256 and size per probe kind): `npx tsx src/eval/natural/write-datasets.ts`.
 * Deterministic: the same seed writes the same bytes (a test checks the committed files).
 */
import { writeFile } from 'node:fs/promises';
import { kindProblems, pairingProblems } from '../dataset.js';
import { sha256 } from '../result-file.js';
import { DEFAULT_SEED, generateNatural, type SplitName } from './generate.js';
import { naturalFiles, sizesOf } from './files.js';

const manifest: Record<string, unknown> = { generator: 'src/eval/natural/generate.ts', seed: DEFAULT_SEED, files: {} };
for (const split of ['dev', 'test'] as SplitName[]) {
  const dataset = generateNatural({ split });
  const problems = [...pairingProblems(dataset), ...kindProblems(dataset)];
  if (problems.length) throw new Error(problems.join('\n'));
  const text = `${JSON.stringify(dataset, null, 2)}\n`;
  await writeFile(naturalFiles[split], text);
  (manifest.files as Record<string, unknown>)[split] = { file: naturalFiles[split], sha256: sha256(text), ...sizesOf(dataset) };
  process.stdout.write(`${naturalFiles[split]}: ${JSON.stringify(sizesOf(dataset))}\n`);
}
await writeFile(naturalFiles.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
