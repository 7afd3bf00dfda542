import path from 'node:path';

/**
 * Configuration from the environment; every variable is optional. See the README's table.
 * A bad value stops start-up with a message naming the variable.
 */
export interface Config {
  databaseUrl?: string;
  /** The engine's own database (ENGINE_DATABASE_URL); else PGlite in `dataDir/engine`. */
  engineDatabaseUrl?: string;
  dataDir: string;
  keyringDir: string;
  host: string;
  memoryPort: number;
  registryPort: number;
  enginePort: number;
  embeddings?: { baseUrl: string; model: string; apiKey?: string; similarityThreshold?: number };
  /** The local embedder when EMBEDDINGS_URL is unset (EMBEDDINGS): `use`, the sentence encoder; `hash`, feature hashing. */
  localEmbedder: 'use' | 'hash';
  /** An OpenAI-compatible chat model for NPCs; when absent the offline responder answers. */
  model?: { baseUrl: string; model: string; apiKey?: string; timeoutMs?: number };
  /**
   * How consolidation extracts facts (MEMORY_EXTRACTOR): `llm`, a chat model at MODEL_URL
   * (EXTRACTOR_MODEL, else MODEL_NAME); `offline`, the embedded rule extractor.
   */
  extractor: { kind: 'offline' } | { kind: 'llm'; baseUrl: string; model: string; apiKey?: string };
  logLevel: string;
  /** The parties this process runs (SERVICES, comma-separated; Default: all three). */
  services: ('memory' | 'registry' | 'engine')[];
  /**
   * Consolidation jobs a memory process runs at once (MEMORY_WORKERS; Default: 4; 0 for a replica
   * that only serves). A job mostly waits on the database, so several overlap on one core.
   */
  memoryWorkers: number;
  /** Where an engine finds the parties it does not run (MEMORY_URL, REGISTRY_URL). */
  memoryUrl?: string;
  registryUrl?: string;
  /** The memory service's tenant keys for an engine that runs apart (MEMORY_RUNTIME_KEY, MEMORY_ADMIN_KEY). */
  memoryRuntimeKey?: string;
  memoryAdminKey?: string;
  /** Batching window of consolidation after play, in ms (see MemoryConfig). */
  consolidationWindowMs: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.MEMORY_DATA_DIR ?? 'data');
  const port = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0 || value > 65535) {
      throw new Error(`${name} must be a port number (0-65535), not ${JSON.stringify(env[name])}`);
    }
    return value;
  };
  if (env.DATABASE_URL && !/^postgres(ql)?:\/\//.test(env.DATABASE_URL)) {
    throw new Error('DATABASE_URL must be a postgres:// connection string');
  }
  if (env.MODEL_URL && !env.MODEL_NAME) {
    throw new Error('MODEL_URL is set but MODEL_NAME is not; name the chat model the NPCs should use');
  }
  const similarity = env.EMBEDDINGS_SIMILARITY === undefined ? undefined : Number(env.EMBEDDINGS_SIMILARITY);
  if (similarity !== undefined && !(similarity > 0 && similarity < 1)) {
    throw new Error('EMBEDDINGS_SIMILARITY must be a number between 0 and 1');
  }
  const localEmbedder = env.EMBEDDINGS || 'use';
  if (localEmbedder !== 'use' && localEmbedder !== 'hash') {
    throw new Error(`EMBEDDINGS must be "use" (the local sentence encoder) or "hash" (feature hashing), not ${JSON.stringify(env.EMBEDDINGS)}`);
  }
  if (env.EMBEDDINGS_URL && !env.EMBEDDINGS_MODEL) {
    throw new Error('EMBEDDINGS_URL is set but EMBEDDINGS_MODEL is not; name the embedding model to use');
  }
  const extractorKind = env.MEMORY_EXTRACTOR || (env.MODEL_URL ? 'llm' : 'offline');
  if (extractorKind !== 'llm' && extractorKind !== 'offline') {
    throw new Error(`MEMORY_EXTRACTOR must be "llm" or "offline", not ${JSON.stringify(env.MEMORY_EXTRACTOR)}`);
  }
  if (extractorKind === 'llm' && !env.MODEL_URL) {
    throw new Error('MEMORY_EXTRACTOR=llm needs a chat model: set MODEL_URL and MODEL_NAME (or EXTRACTOR_MODEL), or use MEMORY_EXTRACTOR=offline');
  }
  const consolidationWindowMs = Number(env.MEMORY_CONSOLIDATION_WINDOW_MS ?? 2000);
  if (!Number.isInteger(consolidationWindowMs) || consolidationWindowMs < 0) {
    throw new Error('MEMORY_CONSOLIDATION_WINDOW_MS must be a whole number of milliseconds, 0 or more');
  }
  const services = (env.SERVICES || 'memory,registry,engine').split(',').map((x) => x.trim());
  for (const service of services) {
    if (!['memory', 'registry', 'engine'].includes(service)) throw new Error(`SERVICES lists memory, registry and engine (comma-separated), not ${JSON.stringify(service)}`);
  }
  const memoryWorkers = Number(env.MEMORY_WORKERS ?? 4);
  if (!Number.isInteger(memoryWorkers) || memoryWorkers < 0) throw new Error('MEMORY_WORKERS must be a whole number, 0 or more');
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    engineDatabaseUrl: env.ENGINE_DATABASE_URL || undefined,
    dataDir,
    keyringDir: path.resolve(env.MEMORY_KEYRING_DIR ?? path.join(dataDir, 'keys')),
    host: env.HOST ?? '127.0.0.1',
    memoryPort: port('MEMORY_PORT', 4100),
    registryPort: port('REGISTRY_PORT', 4200),
    enginePort: port('PORT', 3000),
    embeddings: env.EMBEDDINGS_URL
      ? { baseUrl: env.EMBEDDINGS_URL, model: env.EMBEDDINGS_MODEL!, apiKey: env.EMBEDDINGS_API_KEY || undefined, similarityThreshold: similarity }
      : undefined,
    localEmbedder,
    model: env.MODEL_URL ? { baseUrl: env.MODEL_URL, model: env.MODEL_NAME!, apiKey: env.MODEL_API_KEY || undefined } : undefined,
    extractor:
      extractorKind === 'llm'
        ? { kind: 'llm', baseUrl: env.MODEL_URL!, model: env.EXTRACTOR_MODEL || env.MODEL_NAME!, apiKey: env.MODEL_API_KEY || undefined }
        : { kind: 'offline' },
    logLevel: env.LOG_LEVEL ?? 'info',
    services: services as Config['services'],
    memoryWorkers,
    memoryUrl: env.MEMORY_URL || undefined,
    registryUrl: env.REGISTRY_URL || undefined,
    memoryRuntimeKey: env.MEMORY_RUNTIME_KEY || undefined,
    memoryAdminKey: env.MEMORY_ADMIN_KEY || undefined,
    consolidationWindowMs,
  };
}
