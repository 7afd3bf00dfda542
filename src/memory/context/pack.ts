/**
 * Packing a context window within its token budget: the pinned part (procedural memory, game
 * state, directives, the retrieval note) and the window's own envelope are counted first and never
 * dropped; the transcript takes its share; the other sections share what is left by their quotas
 * (scoring.ts), in precedence order, and room a section leaves unused flows on to the next.
 *
 * Items are rendered (decrypted) only as they are packed, so a full section stops decrypting.
 */
import { randomUUID } from 'node:crypto';
import type { ContextWindow } from '../../boundary/context.js';
import { QUOTAS } from './scoring.js';
import { countTokens, jsonTokens } from './tokens.js';
import { STATE_DIRECTIVE } from './directives.js';
import { SECTION_TIER, type Section } from '../types.js';

export type { Section };

/** The quotas of the sections that hold tiers' rows, added up: what the shared room is divided by. */
const SECTION_SHARES = (Object.keys(SECTION_TIER) as Section[]).reduce((sum, section) => sum + QUOTAS[section], 0);

/** Below this many free tokens no item fits; packing a section stops. */
const MIN_ITEM_TOKENS = 24;
/** After this many candidates in a row did not fit, a section is considered full. */
const MAX_MISSES = 3;
/** STATE_DIRECTIVE joins the directives if a memory contradicts the state: its tokens are reserved. */
const STATE_DIRECTIVE_TOKENS = countTokens(STATE_DIRECTIVE) + 8;
/** The token report names its sections: a few tokens each. */
const ENVELOPE_SECTION_TOKENS = 40;

export class Packer {
  /** Tokens used per section, as the window reports them. */
  readonly sectionTokens: Record<string, number> = {};
  /** Candidates that did not fit their section. */
  overQuota = 0;
  /** What the pinned part and the envelope leave for the transcript and the sections. */
  readonly rest: number;
  #shared = 0;
  #carry = 0;

  /** Counts the pinned part (with the retrieval note and the directives) and the envelope. */
  constructor(budget: number, pinned: { pinned: unknown; directives: unknown; retrieval: unknown }, ids: { npcId: string; gameId: string; roomId: string }) {
    const pinnedTokens = jsonTokens(pinned.pinned) + jsonTokens(pinned.directives) + jsonTokens(pinned.retrieval) + STATE_DIRECTIVE_TOKENS;
    // The window's own fields (ids, the token report, timings) are part of what the model reads.
    const envelopeTokens = jsonTokens({ contextId: randomUUID(), ...ids, tokens: { budget, total: budget, sections: {} }, timingsMs: { retrieve: 0, build: 0 } }) + ENVELOPE_SECTION_TOKENS;
    this.rest = Math.max(0, budget - pinnedTokens - envelopeTokens);
    this.sectionTokens.pinned = pinnedTokens;
    this.sectionTokens.envelope = envelopeTokens;
  }

  /** The transcript's quota of what is left. */
  get transcriptQuota(): number {
    return Math.floor(this.rest * QUOTAS.transcript);
  }

  /** Records the transcript's tokens; the other sections share what it left. */
  transcript(tokens: number): void {
    this.sectionTokens.transcript = tokens;
    this.#shared = Math.max(0, this.rest - tokens);
  }

  /** Packs the section's items in order, rendering each (undefined: skipped) until its quota is used. */
  take<T>(section: Section, count: number, render: (i: number) => T | undefined, cost: (t: T) => number = jsonTokens): T[] {
    const quota = Math.floor((this.#shared * QUOTAS[section]) / SECTION_SHARES) + this.#carry;
    let room = quota;
    let misses = 0;
    const out: T[] = [];
    for (let i = 0; i < count; i++) {
      const rendered = render(i);
      if (rendered === undefined) continue;
      const tokens = cost(rendered);
      if (tokens > room) {
        this.overQuota += 1;
        // Full, or nearly: stop decrypting and counting what will not fit.
        if (room < MIN_ITEM_TOKENS || ++misses >= MAX_MISSES) break;
        continue;
      }
      room -= tokens;
      out.push(rendered);
    }
    this.sectionTokens[section] = quota - room;
    this.#carry = room;
    return out;
  }

  /** The window's token report. */
  report(budget: number): ContextWindow['tokens'] {
    return { budget, total: Object.values(this.sectionTokens).reduce((a, b) => a + b, 0), sections: this.sectionTokens };
  }
}
