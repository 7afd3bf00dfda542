/**
 * `npm start`: the embedded default. One process, PGlite on local disk, the local sentence
 * encoder (EMBEDDINGS=hash: feature hashing) and the offline responder; the memory service, the
 * name registry and the engine each on their own port (DATABASE_URL switches to native
 * PostgreSQL; see the README for models). SERVICES=memory (or registry, or engine, or a list)
 * runs only those parties: the production layout, one process per party, replicas as wanted.
 */
import { pino } from 'pino';
import { loadConfig } from './config.js';
import { startServices } from './system.js';

const config = loadConfig();
// Readable lines on a terminal (pino-pretty), JSON lines otherwise (a log collector).
const logger = pino({ level: config.logLevel, ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } } : {}) });
const running = await startServices({ ...config, logger });

const lines = [
  running.memory
    ? `Memory service [${running.memory.db.backend}, embedder ${running.memory.embedder.id}, ${config.memoryWorkers} consolidation worker(s)]`
    : 'Escape room with NPC memory',
  running.urls.engine && `  play:            ${running.urls.engine}/`,
  running.urls.engine && `  QA inspector:    ${running.urls.engine}/inspector/  (admin key: adminKey in ${config.dataDir}/local-tenant.json; operator token: ${config.keyringDir}/operator.token)`,
  running.urls.engine && `  engine API:      ${running.urls.engine}/openapi.json`,
  running.urls.memory && `  memory service:  ${running.urls.memory}  (OpenAPI: ${running.urls.memory}/openapi.json)`,
  running.urls.registry && `  name registry:   ${running.urls.registry}`,
  running.tenant && `  local tenant keys (memory service): ${config.dataDir}/local-tenant.json`,
].filter(Boolean);
console.log(`\n${lines.join('\n')}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void running.close().then(() => process.exit(0));
  });
}
