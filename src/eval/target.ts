/**
 * The system under evaluation: started in this process (the default: `startEphemeralSystem`, every
 * port 0, a fresh in-memory PGlite, or a fresh native database when DATABASE_URL is set), or a
 * running one reached only through its URLs (`--engine-url`).
 *
 * The in-process target can drain consolidation jobs at once and read operator routes; a remote
 * target only waits for the settling interval, as a client of a deployment would.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../config.js';
import { startEphemeralSystem, type RunningSystem } from '../system.js';
import { OfflineResponder } from '../npc/offline-responder.js';

export interface EvalTarget {
  kind: 'in-process' | 'remote';
  engineUrl: string;
  /** Known only in process (or when given): the memory service, its keys and the operator token. */
  memoryUrl?: string;
  adminKey?: string;
  runtimeKey?: string;
  operatorToken?: string;
  backend: 'pglite' | 'postgres' | 'unknown';
  models: { responder: string; embedder: string; extractor: string };
  /** The running system itself (in process only). */
  system?: RunningSystem;
  /** Waits until consolidation has run for everything said so far (in process: drains the queue). */
  settle(ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startInProcess(options: { databaseUrl?: string } = {}): Promise<EvalTarget> {
  const database = options.databaseUrl ? await freshDatabase(options.databaseUrl) : undefined;
  const base = loadConfig({});
  let started: Awaited<ReturnType<typeof startEphemeralSystem>>;
  try {
    started = await startEphemeralSystem({ databaseUrl: database?.url });
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const { system } = started;
  const responder = base.model ? `openai-compatible:${base.model.model}` : new OfflineResponder().id;
  return {
    kind: 'in-process',
    engineUrl: system.urls.engine,
    memoryUrl: system.urls.memory,
    adminKey: system.tenant.adminKey,
    runtimeKey: system.tenant.runtimeKey,
    operatorToken: system.operatorToken,
    backend: database ? 'postgres' : 'pglite',
    models: { responder, embedder: system.memory.embedder.id, extractor: 'rules' },
    system,
    async settle(ms) {
      await new Promise((r) => setTimeout(r, ms));
      // Everything said has been posted to memory and every turn has finished, then consolidate now.
      await system.engine.idle();
      await system.runtime.idle();
      await system.memory.jobs.drain();
    },
    async close() {
      await started.stop();
      await database?.drop();
    },
  };
}

export function remoteTarget(engineUrl: string, extra: { memoryUrl?: string; adminKey?: string; runtimeKey?: string; operatorToken?: string } = {}): EvalTarget {
  return {
    kind: 'remote',
    engineUrl,
    ...extra,
    backend: 'unknown',
    // A remote deployment does not say which models it runs; the operator states them (see README).
    models: { responder: process.env.EVAL_RESPONDER_ID ?? 'unknown', embedder: process.env.EVAL_EMBEDDER_ID ?? 'unknown', extractor: 'unknown' },
    settle: (ms) => new Promise((r) => setTimeout(r, ms)),
    close: async () => {},
  };
}

/** A fresh database on the server of `adminUrl`, dropped on close (runs never share state). */
async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `npc_eval_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`); // name is generated above: [a-z0-9_] only
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
