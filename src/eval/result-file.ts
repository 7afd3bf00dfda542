import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Thrown when a result file already exists: results are written once and never replaced. */
export class ResultExistsError extends Error {
  readonly code = 'EVAL_RESULT_EXISTS';
  constructor(readonly file: string) {
    super(`${file} already exists; results are immutable. Choose a new --output file (or move the old one away yourself).`);
    this.name = 'ResultExistsError';
  }
}

/**
 * Writes `value` as JSON to a new file (`wx`: fails if the file exists, even under a race) and
 * makes it read-only. Returns the sha256 of the bytes written.
 */
export async function writeResultOnce(file: string, value: unknown): Promise<string> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  const bytes = `${JSON.stringify(value, null, 2)}\n`;
  let handle;
  try {
    handle = await open(file, 'wx', 0o444);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new ResultExistsError(file);
    throw error;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return sha256(bytes);
}

export const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Git revision of the working tree, with "-dirty" when it has uncommitted changes. */
export function gitRevision(cwd = process.cwd()): string {
  try {
    const rev = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${rev}-dirty` : rev;
  } catch {
    return 'unknown';
  }
}

/** What a reader needs to know about where a run happened (no host names, no user names). */
export function environment(): Record<string, string | number> {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cpus: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  };
}
