import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContextFact, ContextWindow } from '../../src/boundary/context.js';
import type { WindowDump } from '../../src/eval/extended/run.js';
import { readDumps, replay, replaySummary } from '../../src/eval/replay.js';

const fact = (key: string, summary: string, match: number): ContextFact => ({ id: `id-${key}`, key, value: summary, summary, standing: 'known', confidence: 0.9, score: 0.5, match });
function dump(question: string, facts: ContextFact[], probe: Partial<WindowDump['probe']>): WindowDump {
  const window: ContextWindow = {
    contextId: 'c1', npcId: 'npc-elias', gameId: 'g', roomId: 'hall', clues: [], lore: [], episodes: [],
    participants: { p1: { anonymous: false, facts } },
    transcript: { summary: null, turns: [] }, directives: [],
    pinned: { procedural: null, state: { version: 1, facts: {} } },
    tokens: { budget: 2000, total: 0, sections: {} }, timingsMs: { retrieve: 0, build: 0 },
    retrieval: { embedder: 'use-lite-512', answerThreshold: 0.3, topic: 'pet', topicFrom: 'words' },
  };
  return { pair: 1, tenant: 't0a', asker: 'p1', npc: { npcId: 'npc-elias', firstName: 'Elias' }, text: `@Elias ${question}`, window, probe: { id: 'p', question, domain: 'pet', kind: 'recall', ...probe } };
}

describe('replaying the responder on dumped windows', () => {
  it('scores each reply as the run does: a remembered value passes, a partner value is a leak', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'replay-'));
    const file = join(dir, 'windows.jsonl');
    const told = dump("what's my dog called?", [fact('speaker.pet.dog', 'Your dog is called Biscuit.', 0.5)], { required: ['Biscuit'], forbidden: ['Pickle'] });
    const wrong = dump("what's my dog called?", [fact('speaker.pet.dog', 'Your dog is called Pickle.', 0.5)], { required: ['Biscuit'], forbidden: ['Pickle'] });
    const never = dump("what's my dog called?", [], { kind: 'abstention', anyOf: ["don't know"], forbidden: ['Pickle'] });
    await writeFile(file, [told, wrong, never].map((d) => JSON.stringify(d)).join('\n') + '\n');

    const replayed = (await readDumps([file])).map(replay);
    expect(replayed.map((r) => r.score.pass)).toEqual([true, false, true]);
    expect(replayed[0]!.reply).toContain('Biscuit');
    expect(replaySummary(replayed)).toEqual({ byKind: { recall: { passed: 1, total: 2 }, abstention: { passed: 1, total: 1 } }, leaks: 1 });
  });
});
