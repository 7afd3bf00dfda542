/** Operator commands for the memory service: `npm run memory -- <command>`. */
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { openPGlite } from './db/pglite.js';
import { openPostgres } from './db/postgres.js';
import { migrate } from './db/migrate.js';
import { createTenant, mintApiKey } from './credentials.js';
import type { Database } from './db/types.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { registerAdminCommands } from './admin/cli.js';
import { registerLifecycleCommands } from './lifecycle/cli.js';
import { registerReembedCommand, registerTopicVectorsCommand } from './embeddings/cli.js';

async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // As `npm start` does: a new data directory is made, with its parents.
  if (!config.databaseUrl) await mkdir(config.dataDir, { recursive: true });
  const db = config.databaseUrl ? openPostgres(config.databaseUrl) : await openPGlite(path.join(config.dataDir, 'pglite'));
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

const program = new Command('memory').description('Operate the NPC memory service (runs as the schema owner)');

program
  .command('migrate')
  .description('apply pending migrations')
  .action(() => withDatabase(async () => console.log('database is at the current schema')));

program
  .command('tenant-create')
  .argument('<name>', 'a unique name for the operator (studio)')
  .description('create a tenant and print its runtime and admin API keys (shown once)')
  .action((name: string) => withDatabase(async (db) => console.log(JSON.stringify(await createTenant(db, name), null, 2))));

program
  .command('key-create')
  .requiredOption('--tenant <uuid>', 'tenant id')
  .option('--role <role>', 'runtime or admin', 'runtime')
  .description('mint another API key for a tenant (shown once)')
  .action((options: { tenant: string; role: string }) =>
    withDatabase(async (db) => {
      if (options.role !== 'runtime' && options.role !== 'admin') throw new Error('--role must be runtime or admin');
      console.log(await mintApiKey(db, options.tenant, options.role));
    }),
  );

registerAdminCommands(program, withDatabase);
registerLifecycleCommands(program, withDatabase);
registerReembedCommand(program, withDatabase);
registerTopicVectorsCommand(program);

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
