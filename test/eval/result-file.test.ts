import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResultExistsError, sha256, writeResultOnce } from '../../src/eval/result-file.js';
import { tempDir } from '../helpers/database.js';

describe('result files are immutable', () => {
  let dir: { dir: string; remove(): Promise<void> };
  beforeEach(async () => (dir = await tempDir('eval-result')));
  afterEach(() => dir.remove());

  it('writes once, read-only, and refuses to overwrite', async () => {
    const file = path.join(dir.dir, 'nested', 'run.json');
    const hash = await writeResultOnce(file, { a: 1 });
    const bytes = await readFile(file, 'utf8');
    expect(JSON.parse(bytes)).toEqual({ a: 1 });
    expect(hash).toBe(sha256(bytes));
    expect((await stat(file)).mode & 0o222).toBe(0);
    await expect(writeResultOnce(file, { a: 2 })).rejects.toBeInstanceOf(ResultExistsError);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ a: 1 });
  });

  it('refuses a file that exists even if it was not written by the harness', async () => {
    const file = path.join(dir.dir, 'other.json');
    await writeFile(file, 'keep me');
    await expect(writeResultOnce(file, {})).rejects.toThrow(/already exists; results are immutable/);
    expect(await readFile(file, 'utf8')).toBe('keep me');
  });
});
