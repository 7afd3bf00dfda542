import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, msg } from './harness.js';
import type { ContextWindow } from '../../../src/boundary/context.js';
import type { EpisodeMemory } from '../../../src/memory/types.js';

describe('working memory', () => {
  let h: Harness;
  const p1 = 'acct-long-session1';
  const present = [{ participantId: p1, anonymous: false }];
  beforeAll(async () => {
    h = await Harness.start();
    await h.persona('npc-osric', 'Osric, the night porter of the library. Laconic, kind, knows every corridor.');
  });
  afterAll(() => h?.stop());

  it('keeps the persona and the state pinned through a long session, while a summary replaces old turns', async () => {
    let window: ContextWindow | undefined;
    for (let round = 0; round < 12; round++) {
      const messages = Array.from({ length: 10 }, (_, i) => {
        const seq = round * 10 + i + 1;
        return msg(seq, p1, `Turn ${seq}: I keep talking about the tapestries, the candles and the long corridor number ${seq}.`);
      });
      window = await h.context('g-long', 'npc-osric', { participants: present, messages, tokenBudget: 900, state: { version: round, facts: { 'door.iron': 'locked' } } });
    }
    const w = window!;
    // The summary holds shortened older turns (the oldest of them dropped first), the transcript the newest.
    const summarized = [...w.transcript.summary!.matchAll(/Turn (\d+):/g)].map((m) => Number(m[1]));
    expect(summarized.length).toBeGreaterThan(0);
    expect(Math.max(...summarized)).toBeLessThan(w.transcript.turns[0]!.seq);
    expect(w.transcript.turns.length).toBeLessThan(120);
    expect(w.transcript.turns.at(-1)!.seq).toBe(120);
    expect(w.transcript.turns.map((t) => t.seq)).toEqual([...w.transcript.turns.map((t) => t.seq)].sort((a, b) => a - b));
    expect(w.pinned.procedural?.persona).toContain('night porter');
    expect(w.pinned.state).toEqual({ version: 11, facts: { 'door.iron': 'locked' } });
    expect(w.tokens.total).toBeLessThanOrEqual(900);
    expect(w.tokens.sections.transcript).toBeLessThanOrEqual(Math.ceil(0.35 * (900 - w.tokens.sections.pinned!)));
  });

  it('adds each message once, however often the engine resends the latest messages', async () => {
    const messages = [msg(1, p1, 'first'), msg(2, p1, 'second')];
    await h.context('g-dup', 'npc-osric', { participants: present, messages });
    const w = await h.context('g-dup', 'npc-osric', { participants: present, messages: [...messages, msg(3, p1, 'third')] });
    expect(w.transcript.turns.map((t) => t.text)).toEqual(['first', 'second', 'third']);
  });

  it('keeps one room\'s working memory out of another game\'s context for the same NPC and room', async () => {
    await h.context('g-a', 'npc-osric', { participants: present, messages: [msg(1, p1, 'the password is swordfish')] });
    const other = await h.context('g-b', 'npc-osric', { participants: present, messages: [] });
    expect(other.transcript.turns).toEqual([]);
    expect(JSON.stringify(other)).not.toContain('swordfish');
  });

  it('serializes into one episode and starts empty when the NPC moves (flush)', async () => {
    await h.context('g-move', 'npc-osric', { participants: present, messages: [msg(1, p1, 'Meet me by the globe'), msg(2, p1, 'Bring the brass key')] });
    const token = await h.token('g-move', [p1]);
    const flushed = await h.call<{ flushed: boolean; episodeId: string }>(token, 'POST', '/v1/npcs/npc-osric/working-memory/flush', { roomId: 'hall', reason: 'npc_moved' });
    expect(flushed.status).toBe(200);
    expect(flushed.body.flushed).toBe(true);
    const episode = await h.call<{ memory: EpisodeMemory }>(token, 'GET', `/v1/npcs/npc-osric/memories/${flushed.body.episodeId}`);
    expect(episode.body.memory).toMatchObject({ kind: 'working_summary', participantId: null, roomId: 'hall' });
    expect(episode.body.memory.text).toContain('Bring the brass key');
    const after = await h.context('g-move', 'npc-osric', { participants: present, messages: [] });
    expect(after.transcript).toEqual({ summary: null, turns: [] });
    // The flushed transcript is now episodic memory of this game, found by relevance.
    const recall = await h.context('g-move', 'npc-osric', { participants: present, messages: [msg(3, p1, 'Where was I going to meet you, by the globe?')] });
    expect(recall.episodes.map((e) => e.id)).toContain(flushed.body.episodeId);
  });

  it('flushes nothing, harmlessly, when there is no working memory', async () => {
    const token = await h.token('g-empty', [p1]);
    const flushed = await h.call(token, 'POST', '/v1/npcs/npc-osric/working-memory/flush', { roomId: 'hall', reason: 'room_empty' });
    expect(flushed).toEqual({ status: 200, body: { flushed: false, episodeId: null } });
  });

  it('refuses a context request for participants the token does not cover', async () => {
    const token = await h.token('g-x', [p1]);
    const { status, body } = await h.call<{ error: { code: string } }>(token, 'POST', '/v1/npcs/npc-osric/context', {
      roomId: 'hall', participants: [{ participantId: 'acct-not-in-token', anonymous: false }], messages: [], state: { version: 1, facts: {} },
    });
    expect(status).toBe(403);
    expect(body.error.code).toBe('SCOPE_MISMATCH');
  });

  it('refuses unknown fields in a context request', async () => {
    const token = await h.token('g-x', [p1]);
    const { status, body } = await h.call<{ error: { code: string } }>(token, 'POST', '/v1/npcs/npc-osric/context', {
      roomId: 'hall', participants: present, messages: [], state: { version: 1, facts: {} }, isBot: true,
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe('UNKNOWN_FIELD');
  });
});
