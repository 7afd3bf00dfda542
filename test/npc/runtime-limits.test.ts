import { describe, expect, it } from 'vitest';
import type { ContextWindow } from '../../src/boundary/context.js';
import { TurnMetrics } from '../../src/npc/metrics.js';
import { NpcRuntime, type NpcHost, type RoomMessageEvent } from '../../src/npc/runtime.js';

/** One room with Mara awake in it; what she says is recorded. */
function room(contextFor?: () => Promise<ContextWindow>) {
  let listener: ((event: RoomMessageEvent) => void) | undefined;
  let ended: ((gameId: string) => void) | undefined;
  const said: string[] = [];
  const host: NpcHost = {
    onRoomMessage: (l) => ((listener = l), () => (listener = undefined)),
    onGameEnded: (l) => ((ended = l), () => (ended = undefined)),
    npcsIn: () => [{ npcId: 'npc-mara', active: true }],
    view: () => ({ roomId: 'hall', firstName: 'Mara', participants: [{ participantId: 'p1', anonymous: false }], messages: [], state: { version: 1, facts: {} }, secrets: [] }),
    act: () => ({ ok: true }) as never,
    say: (_gameId, _npcId, text) => void said.push(text),
  };
  const window = { contextId: 'c', npcId: 'npc-mara', gameId: 'g', roomId: 'hall', clues: [], participants: {}, lore: [], episodes: [], transcript: { summary: null, turns: [] }, directives: [], pinned: { procedural: null, state: { version: 1, facts: {} } }, tokens: { budget: 2000, total: 0, sections: {} }, timingsMs: { retrieve: 0, build: 0 } } as unknown as ContextWindow;
  let now = 0;
  const runtime = new NpcRuntime(host, contextFor ?? (async () => window), { id: 'stub', reply: async () => ({ text: 'Here I am.', actions: [] }) }, new TurnMetrics(), {
    roomBurst: 5, roomPerMinute: 0, busyNoticeMs: 10_000, contextRetryMs: 5, now: () => now,
  });
  runtime.start();
  let seq = 0;
  const address = (text: string) => listener!({ gameId: 'g', roomId: 'hall', seq: ++seq, speaker: { participantId: 'p1', anonymous: false }, text, targets: ['npc-mara'] });
  const chat = (participantId: string, text: string) => listener!({ gameId: 'g', roomId: 'hall', seq: ++seq, speaker: { participantId, anonymous: false }, text, targets: [] });
  return { runtime, said, address, chat, window, advance: (ms: number) => (now += ms), end: (gameId: string) => ended?.(gameId) };
}

describe('the NPC runtime over its room limit', () => {
  it('tells a player who addressed an NPC over the room\'s limit that it is busy, once per window, instead of staying silent', async () => {
    const { runtime, said, address, advance } = room();
    for (let i = 0; i < 4; i++) address(`@Mara warm-up ${i}`); // the room's burst, less one
    await runtime.idle();
    said.splice(0);
    address('@Mara hello');
    await runtime.idle();
    expect(said).toEqual(['Here I am.']);
    address('@Mara are you there?');
    address('@Mara hello??');
    await runtime.idle();
    expect(said).toEqual(['Here I am.', 'Mara raises a hand. "One moment, please; too many of you at once. Ask me again shortly."']);
    advance(10_000);
    address('@Mara now?');
    await runtime.idle();
    expect(said).toHaveLength(3);
    expect(said[2]).toMatch(/^Mara raises a hand/);
  });

  it('shows an NPC lost in thought while the memory service is unreachable, and answers the line once it is back', async () => {
    let failures = 0;
    const { runtime, said, address, window } = room(async () => {
      if (failures++ < 3) throw new TypeError('fetch failed');
      return window;
    });
    address('@Mara hello');
    address('@Mara still there?');
    await runtime.idle();
    expect(said).toEqual(['Mara seems lost in thought for a moment.', 'Here I am.', 'Here I am.']);
  });

  it('does not retry a context the memory service refused (a 4xx), and says nothing for it', async () => {
    const errors: unknown[] = [];
    const refused = Object.assign(new Error('SCOPE_MISMATCH'), { status: 403 });
    const { runtime, said, address } = room(async () => {
      errors.push(refused);
      throw refused;
    });
    address('@Mara hello');
    await runtime.idle();
    expect(errors).toHaveLength(1);
    expect(said).toEqual([]);
  });

  it('records how long each turn waited behind the NPC\'s earlier turns in the game', async () => {
    // The clock moves 250 ms while each context is fetched: the second line waits for the first turn.
    let advance: (ms: number) => void = () => {};
    const fixture = room(async () => {
      advance(250);
      return fixture.window;
    });
    advance = fixture.advance;
    fixture.address('@Mara hello');
    fixture.address('@Mara and again');
    await fixture.runtime.idle();
    expect(fixture.runtime.turnsOf('g').map((t) => t.queuedMs)).toEqual([0, 250]);
  });

  it('answers a line addressed to the NPC before its replies to chatter said earlier, and gives their budget back', async () => {
    // The first reply's context is held until the rest has been said.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const fixture = room(async () => {
      started();
      await held;
      return fixture.window;
    });
    const { runtime, said, chat, address } = fixture;
    chat('p1', 'this room is creepy');
    await running; // its turn has started
    chat('p2', 'anyone seen the key?'); // queued behind it
    chat('p3', 'the clock looks odd'); // queued behind it
    address('@Mara which door is open?');
    release();
    await runtime.idle();
    expect(runtime.turnsOf('g').map((t) => t.triggerSeq)).toEqual([1, 4]);
    expect(said).toHaveLength(2);
    // The two dropped turns went back to the room's budget (5, no refill): three more are answered.
    for (let i = 0; i < 4; i++) address(`@Mara again ${i}`);
    await runtime.idle();
    expect(said.filter((line) => line === 'Here I am.')).toHaveLength(5);
  });

  it('drops everything it held for a game once the game ends', async () => {
    const { runtime, address, end } = room();
    address('@Mara hello');
    address('@Mara and again');
    await runtime.idle();
    expect(runtime.held('g')).toBeGreaterThan(0);
    expect(runtime.turnsOf('g')).toHaveLength(2);
    end('g');
    expect(runtime.held('g')).toBe(0);
    expect(runtime.turnsOf('g')).toEqual([]);
  });
});
