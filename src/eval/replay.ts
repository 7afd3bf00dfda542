/**
 * Replaying the offline responder on dumped context windows (`eval:natural --dump-windows`): the
 * reply each probe gets from the window the memory service assembled for it in a new game, scored
 * as the run scores it. A change to the responder is then measured in seconds instead of a run;
 * a change to extraction or assembly still needs a run (the windows are what they produced).
 */
import { readFile } from 'node:fs/promises';
import { respond } from '../npc/offline-responder.js';
import type { WindowDump } from './extended/run.js';
import { scoreReply, type Score } from './scoring.js';

export interface Replayed {
  dump: WindowDump;
  reply: string;
  score: Score;
}

export async function readDumps(files: readonly string[]): Promise<WindowDump[]> {
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
  return texts.flatMap((t) => t.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as WindowDump));
}

export function replay(dump: WindowDump): Replayed {
  const { probe, window, asker, npc, text } = dump;
  const reply = respond({ npc, window, trigger: { participantId: asker, anonymous: false, text, targeted: true } }).text;
  const score = scoreReply(reply, { required: probe.required, forbidden: probe.forbidden, anyOf: probe.anyOf, ownForbidden: probe.ownForbidden });
  return { dump, reply, score };
}

/** Pass rate per probe kind, and the foreign leaks (a partner's value in a reply). */
export function replaySummary(replayed: readonly Replayed[]): { byKind: Record<string, { passed: number; total: number }>; leaks: number } {
  const byKind: Record<string, { passed: number; total: number }> = {};
  let leaks = 0;
  for (const r of replayed) {
    const kind = r.dump.probe.kind ?? 'recall';
    const k = (byKind[kind] ??= { passed: 0, total: 0 });
    k.total++;
    if (r.score.pass) k.passed++;
    if (r.score.leaked.length > 0) leaks++;
  }
  return { byKind, leaks };
}
