/**
 * Admin commands of `npm run memory -- <command>`: cloning, lineage, the audit ledger and
 * principals. Each takes `--key <admin key>` (or MEMORY_ADMIN_KEY) to act as that principal,
 * with its attributes checked, or `--tenant <uuid>` to act as the operator (the schema owner
 * running this tool). Output is for people; `--json` prints one JSON document for scripts.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import type { Database } from '../db/types.js';
import { LocalKeyring } from '../crypto/keyring.js';
import { DataKeys } from '../crypto/data-keys.js';
import { Credentials } from '../credentials.js';
import { adminServices, type AdminServices } from './services.js';
import { ADMIN_ACTIONS, type AdminAction } from './actions.js';
import { authorize, createAdminPrincipal } from './principals.js';
import { revokePrincipal } from './store.js';
import { formatManifest } from '../cloning/report.js';
import type { TraceStart } from '../cloning/lineage.js';

type WithDatabase = <T>(fn: (db: Database) => Promise<T>) => Promise<T>;

interface Who {
  key?: string;
  tenant?: string;
}

/** The tenant and actor a command runs as, with the principal's attributes checked for `action`. */
async function actAs(db: Database, who: Who, action: AdminAction, npcIds: string[]): Promise<{ tenantId: string; actor: string }> {
  const key = who.key ?? process.env.MEMORY_ADMIN_KEY;
  if (key) {
    const config = loadConfig();
    const principal = await new Credentials(db, new LocalKeyring(config.keyringDir)).verifyApiKey(key);
    if (!principal) throw new Error('the admin key is malformed, unknown or revoked');
    const p = await authorize(db, principal, action, npcIds);
    return { tenantId: p.tenantId, actor: p.actor };
  }
  if (!who.tenant) throw new Error('give --key <admin key> (or MEMORY_ADMIN_KEY) or, as the operator, --tenant <uuid>');
  return { tenantId: who.tenant, actor: 'operator:cli' };
}

function services(db: Database): AdminServices {
  const config = loadConfig();
  const keyring = new LocalKeyring(config.keyringDir);
  return adminServices(db, keyring, new DataKeys(keyring), path.join(config.keyringDir, 'audit-checkpoints'));
}

const print = (json: boolean | undefined, value: unknown, text: string) => console.log(json ? JSON.stringify(value, null, 2) : text);

function traceStart(options: { operation?: string; row?: string }): TraceStart {
  if (!!options.operation === !!options.row) throw new Error('give exactly one of --operation <id> or --row <id>');
  return options.operation ? { operationId: options.operation } : { rowId: options.row! };
}

export function registerAdminCommands(program: Command, withDatabase: WithDatabase): void {
  cloningCommands(program, withDatabase);
  auditCommands(program, withDatabase);
  principalCommands(program, withDatabase);
}

/** The options of a command run as an admin principal, or as the operator for a tenant. */
const who = (c: Command) => c.option('--key <key>', 'act as this admin principal (or MEMORY_ADMIN_KEY)').option('--tenant <uuid>', 'act as the operator for this tenant');

/** clone, lineage-trace, lineage-invalidate. */
function cloningCommands(program: Command, withDatabase: WithDatabase): void {
  who(program.command('clone'))
    .description('clone NPC memory (procedural, lore, consented social facts) from one NPC into another')
    .requiredOption('--from <npc>', 'source NPC id')
    .requiredOption('--to <npc>', 'target NPC id')
    .option('--dry-run', 'run the whole pipeline, write nothing, print the manifest')
    .option('--consent <token...>', 'consent tokens offered in addition to those recorded')
    .option('--json', 'print the manifest as JSON')
    .action((o: Who & { from: string; to: string; dryRun?: boolean; consent?: string[]; json?: boolean }) =>
      withDatabase(async (db) => {
        const admin = services(db);
        const { tenantId, actor } = await actAs(db, o, 'clone', [o.from, o.to]);
        const request = { tenantId, sourceNpc: o.from, targetNpc: o.to, actor, consentTokens: o.consent };
        const result = o.dryRun ? await admin.cloner.dryRun(request) : await admin.cloner.commit(request);
        print(o.json, result.manifest, `${formatManifest(result.manifest)}\n  ledger record ${result.ledger.seq}`);
      }),
    );

  who(program.command('lineage-trace'))
    .description('list every row a clone produced (or copied from one row), through clones of clones')
    .option('--operation <id>', 'clone operation id')
    .option('--row <id>', 'source row id')
    .option('--json', 'print JSON')
    .action((o: Who & { operation?: string; row?: string; json?: boolean }) =>
      withDatabase(async (db) => {
        const admin = services(db);
        const { tenantId } = await actAs(db, o, 'audit', []);
        const trace = await admin.lineages.trace(tenantId, traceStart(o));
        const text = [
          `${trace.rows.length} row(s) in ${trace.operations.length} operation(s), NPCs: ${trace.npcs.join(', ') || 'none'}`,
          ...trace.rows.map((r) => `  ${'  '.repeat(r.depth)}${r.tier.padEnd(10)} ${r.npc_id}  ${r.row_id}  <- ${r.source_npc} ${r.source_row_id}  (op ${r.operation_id})`),
        ].join('\n');
        print(o.json, trace, text);
      }),
    );

  who(program.command('lineage-invalidate'))
    .description('invalidate every row traced from a clone (or from one source row): gone from retrieval, kept for the trace')
    .option('--operation <id>', 'clone operation id')
    .option('--row <id>', 'source row id')
    .option('--json', 'print JSON')
    .action((o: Who & { operation?: string; row?: string; json?: boolean }) =>
      withDatabase(async (db) => {
        const admin = services(db);
        const start = traceStart(o);
        const { tenantId: t0 } = await actAs(db, o, 'audit', []);
        const trace = await admin.lineages.trace(t0, start);
        const { tenantId, actor } = await actAs(db, o, 'invalidate', trace.npcs);
        const result = await admin.lineages.invalidate(tenantId, start, actor, new Set(trace.npcs));
        const i = result.invalidated;
        print(o.json, result, `invalidated lore ${i.lore}, social ${i.social}, procedural ${i.procedural} across ${result.npcs.join(', ') || 'no NPC'}; ledger record ${result.ledger.seq}`);
      }),
    );
}

/** audit-verify, audit-checkpoint. */
function auditCommands(program: Command, withDatabase: WithDatabase): void {
  who(program.command('audit-verify'))
    .description('check every link of the audit ledger and every exported checkpoint (exit code 2 when it fails)')
    .option('--json', 'print JSON')
    .action((o: Who & { json?: boolean }) =>
      withDatabase(async (db) => {
        const admin = services(db);
        const { tenantId } = await actAs(db, o, 'audit', []);
        const report = await admin.ledger.verify(tenantId);
        const text = report.ok
          ? `ledger OK: ${report.records} record(s), head ${report.head?.seq ?? 0}, ${report.checkpointsChecked} checkpoint(s) agree`
          : `LEDGER FAILS VERIFICATION (${report.problems.length} problem(s)):\n${report.problems.map((p) => `  ${JSON.stringify(p)}`).join('\n')}`;
        print(o.json, report, text);
        if (!report.ok) process.exitCode = 2;
      }),
    );

  who(program.command('audit-checkpoint'))
    .description('sign the ledger head (Ed25519) and export it beside the keyring, outside the database')
    .option('--json', 'print JSON')
    .action((o: Who & { json?: boolean }) =>
      withDatabase(async (db) => {
        const admin = services(db);
        const { tenantId } = await actAs(db, o, 'audit', []);
        const result = await admin.ledger.exportCheckpoint(tenantId);
        if ('refused' in result) throw new Error(result.refused.ok ? 'the ledger is empty; nothing to checkpoint' : 'the ledger does not verify; run audit-verify');
        print(o.json, result, `checkpoint of record ${result.checkpoint.seq} written to ${result.file}`);
      }),
    );
}

/** principal-create, principal-revoke (operator only). */
function principalCommands(program: Command, withDatabase: WithDatabase): void {
  program
    .command('principal-create')
    .description('mint an admin key with attributes (operator); the key is shown once')
    .requiredOption('--tenant <uuid>', 'tenant id')
    .requiredOption('--name <name>', 'who this principal is')
    .requiredOption('--npcs <list>', 'comma-separated NPC ids, or * for every NPC')
    .requiredOption('--actions <list>', `comma-separated: ${ADMIN_ACTIONS.join(', ')}`)
    .action((o: { tenant: string; name: string; npcs: string; actions: string }) =>
      withDatabase(async (db) => {
        const split = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
        const { key } = await createAdminPrincipal(db, o.tenant, { name: o.name, npcs: split(o.npcs), actions: split(o.actions) as AdminAction[] });
        console.log(key);
      }),
    );

  program
    .command('principal-revoke')
    .description('remove every attribute from an admin key (operator)')
    .requiredOption('--key-id <id>', 'the 12-character key id (mk_<id>_...)')
    .action((o: { keyId: string }) =>
      withDatabase(async (db) => console.log((await revokePrincipal(db, o.keyId)) ? 'revoked' : 'no active principal with that key id')),
    );
}
