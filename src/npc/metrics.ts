/**
 * Per-stage latency of NPC turns (seed 003 "Memory and latency": memoryRetrievalMs,
 * contextBuildMs, modelLatencyMs, guardMs, totalLatencyMs), kept as a bounded window of recent
 * samples and exposed in the Prometheus text format.
 */
export const TURN_STAGES = ['memoryRetrievalMs', 'contextBuildMs', 'modelLatencyMs', 'guardMs', 'totalLatencyMs'] as const;
export type TurnStage = (typeof TURN_STAGES)[number];
export type TurnTimings = Record<TurnStage, number>;

const WINDOW = 2048;

export class TurnMetrics {
  private readonly samples = new Map<TurnStage, number[]>(TURN_STAGES.map((s) => [s, []]));
  private turns = 0;
  private interventions = 0;

  record(timings: TurnTimings, guardInterventions: number): void {
    this.turns += 1;
    this.interventions += guardInterventions;
    for (const stage of TURN_STAGES) {
      const list = this.samples.get(stage)!;
      list.push(timings[stage]);
      if (list.length > WINDOW) list.shift();
    }
  }

  quantile(stage: TurnStage, q: number): number {
    const sorted = [...this.samples.get(stage)!].sort((a, b) => a - b);
    return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  }

  /** Prometheus text exposition: a summary per stage over the recent window, and counters. */
  prometheus(): string {
    const lines = [
      '# HELP npc_turn_stage_ms Latency of NPC turn stages over recent turns.',
      '# TYPE npc_turn_stage_ms summary',
    ];
    for (const stage of TURN_STAGES) {
      for (const q of [0.5, 0.95, 0.99]) lines.push(`npc_turn_stage_ms{stage="${stage}",quantile="${q}"} ${this.quantile(stage, q).toFixed(3)}`);
      lines.push(`npc_turn_stage_ms_count{stage="${stage}"} ${this.samples.get(stage)!.length}`);
    }
    lines.push('# TYPE npc_turns_total counter', `npc_turns_total ${this.turns}`);
    lines.push('# TYPE npc_guard_interventions_total counter', `npc_guard_interventions_total ${this.interventions}`);
    return `${lines.join('\n')}\n`;
  }
}
