/**
 * The composition root: the three parties in one process on the embedded default, each on its
 * own port and talking through the same clients as when they run apart (HTTP to the memory
 * service and to the name registry), so the boundary is real code, not a convention. With
 * SERVICES, a process runs only some of them (`startServices`): the production layout.
 *
 * | party            | port (default) | reached by the engine through        |
 * |------------------|----------------|--------------------------------------|
 * | memory service   | 4100           | HttpMemoryPort -> MemoryHttpClient   |
 * | name registry    | 4200           | HttpRegistryClient                   |
 * | engine (+ web)   | 3000           | (players, bots, the web page)        |
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.js';
import { openMemorySystem, type MemorySystem } from './memory/system.js';
import { LocalHashEmbedder } from './memory/embeddings/local.js';
import { createTenant } from './memory/credentials.js';
import type { Database } from './memory/db/types.js';
import { MemoryHttpClient } from './boundary/memory-client.js';
import { NameRegistry } from './registry/name-registry.js';
import { buildRegistryApp } from './registry/http-app.js';
import { HttpRegistryClient } from './registry/registry-client.js';
import { GameEngine } from './engine/engine.js';
import { openEngineDatabase } from './engine/store/database.js';
import { HttpMemoryPort } from './engine/http-memory-port.js';
import { buildEngineApp, type EngineApp } from './engine/http/app.js';
import { loadSampleGame } from './engine/game-definition/validate.js';
import { webPlugin } from './web/plugin.js';
import { EngineNpcHost } from './npc/engine-host.js';
import { NpcRuntime } from './npc/runtime.js';
import { TurnMetrics } from './npc/metrics.js';
import { OfflineResponder } from './npc/offline-responder.js';
import { OpenAIChatProvider } from './npc/openai-provider.js';
import { npcOperatorRoutes } from './npc/operator-routes.js';
import type { ModelProvider } from './npc/types.js';
import { closeWithin } from './boundary/close.js';

export interface SystemConfig extends Config {
  /** Keep the PGlite database in memory (tests); (Default: on disk in dataDir) */
  inMemory?: boolean;
  logger?: Logger | false;
}

export interface RunningSystem {
  urls: { memory: string; registry: string; engine: string };
  memory: MemorySystem;
  engine: GameEngine;
  engineApp: EngineApp;
  registryApp: FastifyInstance;
  /** The local tenant of the memory service the engine uses. */
  tenant: LocalTenant;
  runtime: NpcRuntime;
  /** Bearer token of the operator routes (npc turns, metrics); kept in the keyring directory. */
  operatorToken: string;
  close(): Promise<void>;
}

export interface LocalTenant {
  name: string;
  tenantId: string;
  runtimeKey: string;
  adminKey: string;
}

/** The parties a process runs (SERVICES): all three in one process by default. */
export type Service = 'memory' | 'registry' | 'engine';

/** What a process started: the parties it runs, each undefined when it runs elsewhere. */
export interface RunningServices {
  urls: { memory?: string; registry?: string; engine?: string };
  memory?: MemorySystem;
  engine?: GameEngine;
  engineApp?: EngineApp;
  registryApp?: FastifyInstance;
  tenant?: LocalTenant;
  runtime?: NpcRuntime;
  operatorToken?: string;
  close(): Promise<void>;
}

/** All three parties in this process (`npm start`, tests). */
export async function startSystem(config: SystemConfig): Promise<RunningSystem> {
  const running = await startServices({ ...config, services: ['memory', 'registry', 'engine'] });
  return running as RunningSystem;
}

/**
 * The parties in `config.services`, in this process. A party that runs elsewhere is reached at
 * its URL (MEMORY_URL, REGISTRY_URL), with the tenant's keys from MEMORY_RUNTIME_KEY and
 * MEMORY_ADMIN_KEY (else the local tenant file a memory process left in the data directory).
 * Several memory processes may share one PostgreSQL: their consolidation workers claim jobs with
 * `FOR UPDATE SKIP LOCKED`; they need the same keyring directory (or its copy).
 */
export async function startServices(config: SystemConfig & { services: readonly Service[] }): Promise<RunningServices> {
  await mkdir(config.dataDir, { recursive: true });
  const runs = (s: Service) => config.services.includes(s);
  const tenantFile = path.join(config.dataDir, 'local-tenant.json');
  const closers: (() => Promise<unknown>)[] = [];
  const running: RunningServices = {
    urls: {},
    async close() {
      for (const close of closers) await close().catch(() => {});
    },
  };
  try {
    if (runs('memory')) {
      const memory = await openMemorySystem({
        databaseUrl: config.databaseUrl,
        pgliteDir: config.databaseUrl || config.inMemory ? undefined : path.join(config.dataDir, 'pglite'),
        keyringDir: config.keyringDir,
        embeddings: config.embeddings,
        embedder: config.localEmbedder === 'hash' ? new LocalHashEmbedder() : undefined,
        logger: config.logger,
        lifecycle: {
          workers: config.memoryWorkers,
          consolidationWindowMs: config.consolidationWindowMs,
          // MEMORY_EXTRACTOR: a chat model extracts facts at consolidation, or the offline rules do.
          llm: config.extractor.kind === 'llm' ? { baseUrl: config.extractor.baseUrl, model: config.extractor.model, apiKey: config.extractor.apiKey } : undefined,
        },
      });
      closers.unshift(() => memory.close());
      running.memory = memory;
      running.tenant = await localTenant(memory.db, tenantFile, config.inMemory);
      running.urls.memory = await memory.app.listen({ host: config.host, port: config.memoryPort });
    }

    if (runs('registry')) {
      const registryApp = await buildRegistryApp({ registry: await NameRegistry.load() });
      closers.unshift(() => closeWithin(registryApp));
      running.registryApp = registryApp;
      running.urls.registry = await registryApp.listen({ host: config.host, port: config.registryPort });
    }

    if (runs('engine')) {
      const memoryUrl = running.urls.memory ?? config.memoryUrl;
      const registryUrl = running.urls.registry ?? config.registryUrl;
      if (!memoryUrl || !registryUrl) throw new Error('An engine without the memory service and the registry in its process needs MEMORY_URL and REGISTRY_URL.');
      const keys = running.tenant ?? (await tenantKeys(config, tenantFile));
      await startEngine(config, { memoryUrl, registryUrl, keys }, running, closers);
    }
    return running;
  } catch (error) {
    await running.close();
    throw error;
  }
}

/** The tenant keys of an engine whose memory service runs elsewhere. */
async function tenantKeys(config: SystemConfig, file: string): Promise<{ runtimeKey: string; adminKey?: string }> {
  if (config.memoryRuntimeKey) return { runtimeKey: config.memoryRuntimeKey, ...(config.memoryAdminKey ? { adminKey: config.memoryAdminKey } : {}) };
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LocalTenant;
  } catch {
    throw new Error(`The engine needs the memory service's tenant keys: set MEMORY_RUNTIME_KEY (and MEMORY_ADMIN_KEY), or start a memory process on this data directory first (${file}).`);
  }
}

async function startEngine(
  config: SystemConfig,
  peers: { memoryUrl: string; registryUrl: string; keys: { runtimeKey: string; adminKey?: string } },
  running: RunningServices,
  closers: (() => Promise<unknown>)[],
): Promise<void> {
  const registryClient = new HttpRegistryClient({ baseUrl: peers.registryUrl });
  const memoryClient = new MemoryHttpClient(peers.memoryUrl, peers.keys.runtimeKey);
  // The engine's own database (another party's than the memory service's): accounts, sessions, games, outbox.
  const store = await openEngineDatabase(
    config.engineDatabaseUrl ? { url: config.engineDatabaseUrl } : config.inMemory ? {} : { dir: path.join(config.dataDir, 'engine') },
  );
  closers.unshift(() => store.close());
  const engine = new GameEngine({
    registry: registryClient,
    memory: new HttpMemoryPort(memoryClient),
    proxySecret: await secretFile(config.keyringDir, 'engine-proxy.key'),
    store,
  });
  // The NPC runtime listens before the restore, so NPCs hear what is said from the first command on.
  const host = new EngineNpcHost(engine);
  // Sessions, undelivered memory-service calls and running games, as the last process left them.
  await engine.restore();
  closers.unshift(() => engine.close());
  running.engine = engine;

  const provider: ModelProvider = config.model ? new OpenAIChatProvider(config.model) : new OfflineResponder();
  const metrics = new TurnMetrics();
  const runtime = new NpcRuntime(host, (gameId, npcId, request) => memoryClient.context(gameId, npcId, request), provider, metrics, {
    onError: (error, event, npcId) =>
      (config.logger || undefined)?.warn({ err: error instanceof Error ? error.message : String(error), gameId: event.gameId, npcId }, 'NPC turn failed'),
  });
  runtime.start();
  closers.unshift(async () => {
    runtime.stop();
    await runtime.idle();
  });
  running.runtime = runtime;

  const engineApp = await buildEngineApp({ engine, registry: registryClient });
  closers.unshift(() => closeWithin(engineApp.app));
  running.engineApp = engineApp;
  // The operator token is kept as text, so an operator can paste it: data/keys/operator.token.
  const operatorToken = Buffer.from(await secretFile(config.keyringDir, 'operator-token.key')).toString('base64url');
  await writeFile(path.join(config.keyringDir, 'operator.token'), `${operatorToken}\n`, { mode: 0o600 });
  running.operatorToken = operatorToken;
  npcOperatorRoutes(engineApp.app, { runtime, metrics, operatorToken, extra: () => engine.prometheus() });
  await engineApp.app.register(webPlugin, { engine, registry: registryClient, memory: memoryClient });
  running.urls.engine = await engineApp.app.listen({ host: config.host, port: config.enginePort });
  if (peers.keys.adminKey) await seedPersonas(memoryClient, peers.keys.adminKey);
}

/**
 * A throwaway system for tests and in-process evaluation: a temporary data directory, PGlite in
 * memory (or the given database), every service on a free port of 127.0.0.1, no logs.
 */
export async function startEphemeralSystem(
  options: { databaseUrl?: string; /** Configuration variables (as in the environment); (Default: none) */ env?: NodeJS.ProcessEnv } = {},
): Promise<{ system: RunningSystem; stop(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'npc-memory-'));
  try {
    const system = await startSystem({
      ...loadConfig(options.env ?? {}),
      databaseUrl: options.databaseUrl,
      dataDir: dir,
      keyringDir: path.join(dir, 'keys'),
      inMemory: true,
      host: '127.0.0.1',
      memoryPort: 0,
      registryPort: 0,
      enginePort: 0,
      logger: false,
    });
    return {
      system,
      async stop() {
        await system.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The embedded default's own tenant, created on first start; its keys are kept in the data dir. */
async function localTenant(db: Database, file: string, ephemeral?: boolean): Promise<LocalTenant> {
  if (!ephemeral) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as LocalTenant;
    } catch {
      // first start: create it below
    }
  }
  const name = `local-studio-${Date.now().toString(36)}`;
  const keys = await createTenant(db, name);
  const tenant = { name, ...keys };
  if (!ephemeral) await writeFile(file, JSON.stringify(tenant, null, 2), { mode: 0o600 });
  return tenant;
}

/** A 32-byte secret kept in the keyring directory, outside any database (created on first use). */
async function secretFile(keyringDir: string, name: string): Promise<Uint8Array> {
  const file = path.join(keyringDir, name);
  try {
    const key = await readFile(file);
    if (key.length === 32) return key;
  } catch {
    // created below
  }
  await mkdir(keyringDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  await writeFile(file, key, { mode: 0o600 });
  return key;
}

/**
 * Procedural memory for the sample game's NPCs, written with the admin key through the memory
 * service's API (a new version only when the persona changed).
 */
async function seedPersonas(memory: MemoryHttpClient, adminKey: string): Promise<void> {
  const sample = await loadSampleGame();
  for (const npc of sample.npcs) {
    if ((await memory.procedural(npc.npcId, adminKey))?.persona === npc.persona) continue;
    await memory.writeProcedural(npc.npcId, adminKey, {
      persona: npc.persona,
      directives: [
        'Stay in character and in this room; you only know what your memory and the current state tell you.',
        'Never say a code, a combination or a hiding place before the players have found it.',
      ],
      core: {},
    });
  }
}
