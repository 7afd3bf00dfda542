/**
 * `npm start`: the embedded default. One process, PGlite on local disk, the local sentence
 * encoder (EMBEDDINGS=hash: feature hashing) and the offline responder; the memory service, the
 * name registry and the engine each on their own
 * port (DATABASE_URL switches to native PostgreSQL; see the README for models).
 */
import { pino } from 'pino';
import { loadConfig } from './config.js';
import { startSystem } from './system.js';

const config = loadConfig();
// Readable lines on a terminal (pino-pretty), JSON lines otherwise (a log collector).
const logger = pino({ level: config.logLevel, ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } } : {}) });
const system = await startSystem({ ...config, logger });

console.log(`
Escape room with NPC memory, on the embedded default [${system.memory.db.backend}, embedder ${system.memory.embedder.id}]
  play:            ${system.urls.engine}/
  QA inspector:    ${system.urls.engine}/inspector/  (admin key: adminKey in ${config.dataDir}/local-tenant.json; operator token: ${config.keyringDir}/operator.token)
  engine API:      ${system.urls.engine}/openapi.json
  memory service:  ${system.urls.memory}  (OpenAPI: ${system.urls.memory}/openapi.json)
  name registry:   ${system.urls.registry}
  local tenant keys (memory service): ${config.dataDir}/local-tenant.json
`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void system.close().then(() => process.exit(0));
  });
}
