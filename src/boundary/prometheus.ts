/** One metric in Prometheus' text exposition format. */
export interface Metric {
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  readonly value: number;
}

/** The text `/metrics` answers with (`text/plain; version=0.0.4`), one HELP, TYPE and sample per metric. */
export function metricsText(metrics: readonly Metric[]): string {
  return metrics.map((m) => `# HELP ${m.name} ${m.help}\n# TYPE ${m.name} ${m.type}\n${m.name} ${m.value}\n`).join('');
}

/** The process's memory (the names prom-client's default metrics use), so a scraper sees what a service holds. */
export function processMetrics(): Metric[] {
  const use = process.memoryUsage();
  return [
    { name: 'process_resident_memory_bytes', type: 'gauge', help: 'Resident memory size in bytes.', value: use.rss },
    { name: 'nodejs_heap_size_total_bytes', type: 'gauge', help: 'V8 heap size in bytes.', value: use.heapTotal },
    { name: 'nodejs_heap_size_used_bytes', type: 'gauge', help: 'V8 heap used in bytes.', value: use.heapUsed },
    { name: 'nodejs_external_memory_bytes', type: 'gauge', help: 'Memory of C++ objects bound to JavaScript objects, in bytes.', value: use.external },
    { name: 'nodejs_array_buffers_bytes', type: 'gauge', help: 'Memory of ArrayBuffers and Buffers, in bytes (part of external).', value: use.arrayBuffers },
  ];
}
