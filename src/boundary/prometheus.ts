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
