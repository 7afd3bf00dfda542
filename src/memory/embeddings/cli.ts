/**
 * `npm run memory -- reembed [--tenant ID] [--batch 64]`: gives every stored row the configured
 * embedder's vector (EMBEDDINGS_URL, else EMBEDDINGS=use|hash), e.g. after migration 0005 reset
 * the 384-dimensional vectors, or after a change of embedding model. A progress bar on a
 * terminal, one line per batch otherwise.
 */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { loadConfig } from '../../config.js';
import type { Database } from '../db/types.js';
import { buildMemorySystem } from '../system.js';
import { configuredEmbedding } from './configured.js';
import { reembed, type ReembedProgress } from './reembed.js';
import { writeFileSync } from 'node:fs';
import { SentenceEncoderEmbedder, shutdownSentenceEncoder } from './sentence-encoder.js';
import { encodeTopicVectors, topicExamples, TOPIC_VECTORS_FILE } from './topics.js';

type WithDatabase = <T>(fn: (db: Database) => Promise<T>) => Promise<T>;

export function registerReembedCommand(program: Command, withDatabase: WithDatabase): void {
  program
    .command('reembed')
    .option('--tenant <uuid>', 'only this tenant (Default: every tenant)')
    .option('--batch <n>', 'rows per model call', '64')
    .description("re-embed stored memory whose vector was made by another embedder than the configured one (or has none)")
    .action((options: { tenant?: string; batch: string }) =>
      withDatabase(async (db) => {
        const config = loadConfig();
        const system = await buildMemorySystem(db, {
          keyringDir: config.keyringDir,
          logger: false,
          ...configuredEmbedding(config),
        });
        const tty = process.stderr.isTTY;
        const bar = tty
          ? new cliProgress.SingleBar({ format: 'reembed [{bar}] {value}/{total} rows | {tier} | {eta_formatted} left', stream: process.stderr }, cliProgress.Presets.shades_classic)
          : undefined;
        let started = false;
        const onProgress = (p: ReembedProgress) => {
          if (bar) {
            if (!started) bar.start(p.total, 0, { tier: p.tier });
            started = true;
            bar.update(p.done, { tier: p.tier });
          } else {
            console.error(`reembed: ${p.done}/${p.total} rows (${p.tier}, tenant ${p.tenantId})`);
          }
        };
        try {
          const report = await reembed(db, system.service, { tenantId: options.tenant, batch: Number(options.batch), onProgress });
          bar?.stop();
          console.log(JSON.stringify(report, null, 2));
        } finally {
          bar?.stop();
          await system.app.close();
        }
      }),
    );
}

/**
 * `npm run memory -- topic-vectors`: embeds the topic examples (topic-examples.json) with the
 * sentence encoder and writes their vectors beside them, so that reading topics from meaning costs
 * no model call at start. Run it after editing the examples (a test fails while they disagree).
 */
export function registerTopicVectorsCommand(program: Command): void {
  program
    .command('topic-vectors')
    .description("rewrite the sentence encoder's vectors of the topic examples (src/memory/embeddings/topic-examples.vectors.json)")
    .action(async () => {
      const { examples, sha256 } = topicExamples();
      const embedder = new SentenceEncoderEmbedder();
      const vectors = await embedder.embed(examples.map((e) => e.text));
      writeFileSync(TOPIC_VECTORS_FILE, JSON.stringify(encodeTopicVectors(embedder.id, sha256, vectors)) + '\n');
      console.log(`topic-vectors: ${vectors.length} examples embedded by ${embedder.id}`);
      await shutdownSentenceEncoder();
    });
}
