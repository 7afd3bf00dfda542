import type { Config } from '../../config.js';
import type { MemoryConfig } from '../system.js';
import { LocalHashEmbedder } from './local.js';

/**
 * The embedder settings of a memory system from the environment's configuration: the endpoint
 * (EMBEDDINGS_URL) if set, else the local embedder EMBEDDINGS names. Operator commands that write
 * or re-embed memory use it, so their vectors are the service's.
 */
export function configuredEmbedding(config: Pick<Config, 'embeddings' | 'localEmbedder'>): Pick<MemoryConfig, 'embeddings' | 'embedder'> {
  return {
    embeddings: config.embeddings,
    embedder: config.localEmbedder === 'hash' ? new LocalHashEmbedder() : undefined,
  };
}
