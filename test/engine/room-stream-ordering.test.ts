import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { StreamEntry } from '../../src/engine/types.js';
import { ScriptedParticipant } from '../../src/engine/scripted-participant.js';
import { TOBIAS, humanJoins, makeEngine, sample } from './support/engine-fixture.js';

describe('one totally ordered text stream per room', () => {
  it('shows every participant the same sequence when many senders send at once', async () => {
    const { engine, memory } = makeEngine();
    const gameId = await engine.createGame(sample);
    const humans = Array.from({ length: 5 }, (_, i) => humanJoins(engine, gameId, `Human ${i}`));
    const bots = Array.from({ length: 3 }, (_, i) => ScriptedParticipant.anonymous(engine, `Player ${i + 5}`));
    for (const b of bots) b.join(gameId);
    const senders = [
      ...humans.map((token, i) => ({ name: `Human ${i}`, send: (text: string) => engine.say(token, gameId, { text }) })),
      ...bots.map((b) => ({ name: b.displayName, send: (text: string) => b.say(gameId, text) })),
    ];
    // Everyone is present from here on; compare what each saw after this point.
    const startSeq = engine.feed(humans[0]!, gameId).at(-1)!.seq;
    const sinceStart = (feed: readonly StreamEntry[]) => feed.filter((e) => e.seq > startSeq);

    const PER_SENDER = 40;
    await Promise.all(
      senders.map(async (s) => {
        for (let n = 0; n < PER_SENDER; n += 1) {
          // Interleave at random points of the event loop.
          await sleep(Math.floor(Math.random() * 3));
          s.send(n % 7 === 0 ? `@Tobias ${s.name} #${n}` : `${s.name} #${n}`);
        }
      }),
    );

    const feeds = [...humans.map((t) => engine.feed(t, gameId)), ...bots.map((b) => engine.feed(b.token, gameId))];
    const says = feeds.map((f) => sinceStart(f).filter((e) => e.kind === 'say'));
    expect(says[0]).toHaveLength(senders.length * PER_SENDER);
    for (const s of says) expect(s).toEqual(says[0]);
    // Whole feeds, narration included, are identical from the moment everyone was present.
    for (const f of feeds) expect(sinceStart(f)).toEqual(sinceStart(feeds[0]!));

    const seqs = sinceStart(feeds[0]!).map((e) => e.seq);
    seqs.forEach((seq, i) => expect(seq).toBe(seqs[0]! + i));
    // Each sender's own messages keep their send order.
    for (const s of senders) {
      const own = says[0]!.filter((e) => e.speaker.kind === 'participant' && e.speaker.displayName === s.name);
      expect(own.map((e) => e.text.replace(/^@Tobias /, ''))).toEqual(
        Array.from({ length: PER_SENDER }, (_, n) => `${s.name} #${n}`),
      );
    }

    // Targeting flags emphasis without reordering: the memory service gets the same order.
    await engine.idle();
    const toTobias = memory.boundaryEvents.filter((e) => e.npcId === TOBIAS).slice(-says[0]!.length);
    expect(toTobias.map((e) => e.text)).toEqual(says[0]!.map((e) => e.text));
    expect(toTobias.map((e) => e.targeted)).toEqual(says[0]!.map((e) => e.targets.includes(TOBIAS)));
    expect(toTobias.filter((e) => e.targeted).length).toBe(senders.length * Math.ceil(PER_SENDER / 7));
  });

  it('delivers to a listener in the same order as the feed', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const heard: number[] = [];
    const { token } = engine.sessions.openAnonymous();
    engine.join(token, gameId, { listener: (e) => heard.push(e.seq) });
    const other = humanJoins(engine, gameId, 'Other');
    await Promise.all(Array.from({ length: 50 }, async (_, i) => engine.say(i % 2 ? token : other, gameId, { text: `m${i}` })));
    expect(heard).toEqual(engine.feed(token, gameId).map((e) => e.seq));
  });

  it('keeps rooms apart: a message in one room is not in another room\'s stream', async () => {
    const { engine } = makeEngine();
    const gameId = await engine.createGame(sample);
    const a = humanJoins(engine, gameId, 'A');
    const b = humanJoins(engine, gameId, 'B');
    engine.act(b, gameId, { type: 'move', direction: 'east' });
    engine.say(a, gameId, { text: 'only the foyer hears this' });
    expect(engine.feed(b, gameId).some((e) => e.text === 'only the foyer hears this')).toBe(false);
  });
});
