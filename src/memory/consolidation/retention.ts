/**
 * Forgetting: the one place that says how long each retention class lasts and how a memory's
 * weight decays. Consolidation assigns the class (`retentionFor`) and invalidates faded facts
 * (`isForgotten`); retrieval multiplies its score by `decayWeight`.
 *
 * | class          | meaning                                                             |
 * |----------------|---------------------------------------------------------------------|
 * | permanent      | never decays (names, relationships)                                 |
 * | slow_decay     | halves every half-life (Default: 90 days), longer for important facts |
 * | session_only   | full weight while its game lives; game end hides it (row-level policy) |
 * | immediate_only | useful for the current exchange only (Default: 10 minutes); never consolidated |
 */
import type { FactTier, RetentionClass } from '../types.js';
import type { CandidateKind } from './extract/types.js';

export interface DecayOptions {
  /** Half-life of a slow-decay memory of importance 0.5, in days. (Default: 90) */
  halfLifeDays?: number;
  /** How long an immediate-only memory counts, in milliseconds. (Default: 600000) */
  immediateMs?: number;
}

export const DEFAULT_HALF_LIFE_DAYS = 90;
export const DEFAULT_IMMEDIATE_MS = 10 * 60 * 1000;
/** Below this weight a slow-decay fact is forgotten (invalidated at the next consolidation). */
export const FORGET_BELOW = 0.05;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A memory's weight in [0, 1] after `ageMs`. The half-life of a slow-decay memory scales with
 * its importance: from 0.5x (importance 0) to 1.5x (importance 1) of `halfLifeDays`.
 */
export function decayWeight(retention: RetentionClass, ageMs: number, importance = 0.5, options: DecayOptions = {}): number {
  const age = Math.max(0, ageMs);
  switch (retention) {
    case 'permanent':
    case 'session_only':
      return 1;
    case 'immediate_only':
      return age <= (options.immediateMs ?? DEFAULT_IMMEDIATE_MS) ? 1 : 0;
    case 'slow_decay': {
      const halfLife = (options.halfLifeDays ?? DEFAULT_HALF_LIFE_DAYS) * DAY_MS * (0.5 + Math.min(1, Math.max(0, importance)));
      return Math.pow(0.5, age / halfLife);
    }
  }
}

export function isForgotten(retention: RetentionClass, ageMs: number, importance: number, options: DecayOptions = {}): boolean {
  return retention === 'slow_decay' && decayWeight(retention, ageMs, importance, options) < FORGET_BELOW;
}

/** The class a consolidated fact gets. */
export function retentionFor(kind: CandidateKind, tier: FactTier): RetentionClass {
  if (tier === 'clue') return 'session_only';
  switch (kind) {
    case 'name':
    case 'relationship':
    case 'family':
    case 'origin':
    case 'health':
      return 'permanent';
    case 'world_fact':
      return 'permanent';
    default:
      return 'slow_decay';
  }
}
