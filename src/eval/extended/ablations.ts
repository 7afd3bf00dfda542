/**
 * Retrieval ablations, evaluated without touching the memory service: the harness asks the
 * memory service's own context endpoint for the full window (POST /v1/npcs/:npcId/context, the
 * call the engine makes before each NPC turn), then keeps only some sections client-side before
 * the offline responder composes the reply.
 *
 * | config     | what the responder is given                                                    |
 * |------------|--------------------------------------------------------------------------------|
 * | full       | the window as assembled (the combined pipeline the engine uses)                |
 * | transcript | only the recent room transcript (the thread)                                   |
 * | episodic   | only the episodic rows retrieved by vector similarity                          |
 * | social     | only the social facts of the participants present                              |
 *
 * The offline responder reads facts, not raw lines; for `transcript` and `episodic` each line the
 * asking participant said (never another speaker's: facts stay segregated by participant) is
 * handed to it as a fact of that participant (later lines rank higher in `transcript`, episodic
 * rows keep their retrieval score). The asking message itself is left out. This measures what
 * each retrieval layer can supply to the same responder; it is an adapter, not what the engine
 * does, and the README says so.
 */
import type { ContextFact, ContextWindow } from '../../boundary/context.js';

export const ABLATIONS = ['full', 'transcript', 'episodic', 'social'] as const;
export type Ablation = (typeof ABLATIONS)[number];

export function ablate(window: ContextWindow, config: Ablation, asker: string, askingText: string): ContextWindow {
  if (config === 'full') return window;
  const empty: ContextWindow = {
    ...window,
    clues: [],
    lore: [],
    episodes: [],
    transcript: { summary: null, turns: [] },
    participants: Object.fromEntries(Object.entries(window.participants).map(([id, p]) => [id, { ...p, facts: [] }])),
  };
  const asFacts = (lines: { id: string; text: string; score: number }[]): ContextFact[] =>
    lines.map((l) => ({ id: l.id, key: 'said', value: l.text, summary: l.text.replace(/^@\S+\s+/, ''), standing: 'known', confidence: 1, score: l.score }));
  const withFacts = (facts: ContextFact[]) => ({
    ...empty,
    participants: { ...empty.participants, [asker]: { anonymous: window.participants[asker]?.anonymous ?? false, facts } },
  });
  switch (config) {
    case 'social':
      return { ...empty, participants: window.participants };
    case 'transcript':
      return withFacts(
        asFacts(
          window.transcript.turns
            .filter((t) => t.speaker === asker && t.text !== askingText)
            .map((t) => ({ id: `turn-${t.seq}`, text: t.text, score: t.seq })),
        ),
      );
    case 'episodic':
      return withFacts(asFacts(window.episodes.filter((e) => e.speaker === asker && e.text !== askingText).map((e) => ({ id: e.id, text: e.text, score: e.score }))));
  }
}
