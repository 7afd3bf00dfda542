import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/database.js';

const run = promisify(execFile);

// The embedded default only: with DATABASE_URL set the command would create a tenant on that server.
describe.skipIf(!!process.env.DATABASE_URL)('the memory operator command', () => {
  let temp: { dir: string; remove(): Promise<void> };
  beforeAll(async () => (temp = await tempDir('operator-cli')));
  afterAll(async () => temp.remove());

  it('creates a data directory that does not exist yet, with its parents, as npm start does', async () => {
    const dataDir = path.join(temp.dir, 'a', 'new', 'path');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/memory/cli.ts', 'tenant-create', 'studio-x'], {
      env: { ...process.env, MEMORY_DATA_DIR: dataDir, DATABASE_URL: '' },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/studio-x|tenant/i);
  }, 90_000);
});
