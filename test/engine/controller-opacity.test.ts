/**
 * Controller opacity (seed 000, failure mode 2): everything that leaves the engine during play
 * mixing humans and scripts, on accounts and anonymous sessions, must not tell the two apart.
 *
 * The schedule (who speaks when, what they say) is drawn from one distribution for everyone, so
 * what is tested is the envelope the engine controls: ids, timestamps, fields, lengths. What a
 * controller chooses to say, and reply latency longer than the timestamp granularity, are
 * behaviour and cross by design (raw text and an integer timestamp are the protocol).
 */
import { randomBytes } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { BoundaryEvent } from '../../src/boundary/events.js';
import { AnonymizationProxy } from '../../src/engine/anonymization-proxy.js';
import type { ClientContext, Controller } from '../../src/engine/types.js';
import type { GameEngine } from '../../src/engine/engine.js';
import { MARA, makeEngine, sample } from './support/engine-fixture.js';

const validateBoundary = Compile(BoundaryEvent);
const PROXY_SECRET = randomBytes(32);

/** Deterministic schedule: mulberry32. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LINES = [
  'Has anyone checked behind the portrait?',
  '@Mara do you know the verse on the mantel?',
  'I think the key was in a coat.',
  'What year was this place founded?',
  '@Osric have you seen the caretaker keys?',
  'ok',
  'Try the dial again, slower this time.',
  'The gap on the shelf looks deliberate.',
];

/** What each kind of client would reveal if anything leaked: all of it must be stripped. */
const telemetry: Record<Controller, ClientContext> = {
  human: {
    headers: { 'user-agent': 'Mozilla/5.0 Firefox/128.0', 'accept-language': 'en-GB' },
    remoteAddress: '81.2.69.160',
    userAgent: 'Mozilla/5.0 Firefox/128.0',
    keystrokeIntervalsMs: [143, 98, 211, 87],
  },
  script: {
    headers: { 'user-agent': 'HeadlessChrome/126', 'x-bot': 'yes' },
    remoteAddress: '10.0.0.7',
    userAgent: 'HeadlessChrome/126',
    keystrokeIntervalsMs: [],
  },
};

interface Speaker {
  token: string;
  controller: Controller;
}

async function openSession(engine: GameEngine, controller: Controller, account: boolean, n: number): Promise<Speaker> {
  if (!account) return { token: engine.sessions.openAnonymous({ controller, displayName: `Player ${n}` }).token, controller };
  const username = `player${n}`;
  await engine.accounts.register(username, 'correct horse battery');
  return { token: (await engine.sessions.login(username, 'correct horse battery', { controller })).token, controller };
}

/** Plays `games` games of 8 (4 humans, 4 scripts; half of each on accounts) in the reading room. */
async function playMixedSession(games: number, seed: number) {
  const fixture = makeEngine({ proxySecret: PROXY_SECRET });
  const { engine, clock } = fixture;
  const random = prng(seed);
  const controllerOf = new Map<string, Controller>();
  let n = 0;
  for (let g = 0; g < games; g += 1) {
    const gameId = await engine.createGame(sample);
    const speakers: Speaker[] = [];
    for (const controller of ['human', 'script'] as const) {
      for (const account of [true, true, false, false]) speakers.push(await openSession(engine, controller, account, n++));
    }
    for (const s of speakers) {
      engine.join(s.token, gameId);
      engine.act(s.token, gameId, { type: 'move', direction: 'north' });
    }
    for (let m = 0; m < 40; m += 1) {
      clock.advance(Math.floor(random() * 9000));
      const s = speakers[Math.floor(random() * speakers.length)]!;
      engine.say(s.token, gameId, { text: LINES[Math.floor(random() * LINES.length)]! }, {
        ...telemetry[s.controller],
        clientSentAtMs: clock.now() - (s.controller === 'script' ? 1 : 180),
      });
    }
    for (const s of speakers) controllerOf.set(s.token, s.controller);
  }
  await engine.idle();
  return { ...fixture, controllerOf };
}

/** Best single threshold on `train`, scored on `test`: the simplest classifier there is. */
function thresholdAccuracy(train: [number, boolean][], test: [number, boolean][]): number {
  const candidates = [...new Set(train.map(([x]) => x))];
  let best = { t: 0, above: true, acc: -1 };
  for (const t of candidates) {
    for (const above of [true, false]) {
      const acc = train.filter(([x, bot]) => (x >= t) === above === bot).length / train.length;
      if (acc > best.acc) best = { t, above, acc };
    }
  }
  return test.filter(([x, bot]) => (x >= best.t) === best.above === bot).length / test.length;
}

describe('controller opacity at the boundary', () => {
  it('sends events that all validate, with one key set, one id shape and coarse timestamps', async () => {
    const { memory } = await playMixedSession(2, 1);
    const events = memory.boundaryEvents;
    expect(events.length).toBeGreaterThan(100);
    const keySets = new Set(events.map((e) => Object.keys(e).sort().join(',')));
    expect([...keySets]).toEqual(['anonymous,gameId,npcId,participantId,roomId,targeted,text,ts']);
    for (const e of events) {
      expect(validateBoundary.Check(e)).toBe(true);
      expect(e.participantId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Number.isInteger(e.ts) && e.ts % 5 === 0).toBe(true);
    }
  });

  it('lets nothing the client revealed, nor the controller, nor a session credential, leave the engine', async () => {
    const { memory, controllerOf } = await playMixedSession(1, 2);
    const everything = JSON.stringify(memory.calls);
    for (const needle of ['Firefox', 'HeadlessChrome', '81.2.69.160', '10.0.0.7', 'x-bot', 'script', 'human', 'keystroke', 'Player ']) {
      expect(everything).not.toContain(needle);
    }
    for (const token of controllerOf.keys()) expect(everything).not.toContain(token);
  });

  it('gives a threshold classifier on any envelope feature no better than chance', async () => {
    const { engine, memory, controllerOf } = await playMixedSession(50, 3);
    // Which participant id is which controller: known to the test, as it is to the engine only.
    const proxy = new AnonymizationProxy({ secret: PROXY_SECRET });
    const truth = new Map<string, boolean>();
    for (const [token, controller] of controllerOf) {
      truth.set(proxy.participantIdOf(engine.sessions.get(token).session), controller === 'script');
    }
    const events = memory.boundaryEvents.filter((e) => e.npcId === MARA);

    const byParticipant = new Map<string, typeof events>();
    const previousTs = new Map<string, number>();
    const deltas = new Map<string, number[]>();
    for (const e of events) {
      const list = byParticipant.get(e.participantId) ?? [];
      list.push(e);
      byParticipant.set(e.participantId, list);
      const prev = previousTs.get(e.gameId);
      if (prev !== undefined) deltas.set(e.participantId, [...(deltas.get(e.participantId) ?? []), e.ts - prev]);
      previousTs.set(e.gameId, e.ts);
    }

    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const features: Record<string, (id: string, evs: typeof events) => number> = {
      'id length': (id) => id.length,
      'distinct characters in id': (id) => new Set(id).size,
      'dashes and underscores in id': (id) => (id.match(/[-_]/g) ?? []).length,
      'digits in id': (id) => (id.match(/[0-9]/g) ?? []).length,
      'first character code': (id) => id.charCodeAt(0),
      'last character code': (id) => id.charCodeAt(id.length - 1),
      'mean ts mod 60': (_id, evs) => mean(evs.map((e) => e.ts % 60)),
      'mean gap to previous event': (id) => mean(deltas.get(id) ?? []),
      'key count': (_id, evs) => mean(evs.map((e) => Object.keys(e).length)),
      'envelope length': (_id, evs) => mean(evs.map((e) => JSON.stringify(e).length - JSON.stringify(e.text).length)),
      'targeted share': (_id, evs) => mean(evs.map((e) => (e.targeted ? 1 : 0))),
      'message count': (_id, evs) => evs.length,
    };

    // Train on half the participants, test on the unseen half.
    const ids = [...byParticipant.keys()].filter((id) => truth.has(id));
    expect(ids.length).toBeGreaterThan(300);
    const train = ids.filter((_, i) => i % 2 === 0);
    const test = ids.filter((_, i) => i % 2 === 1);
    const report: Record<string, number> = {};
    for (const [name, f] of Object.entries(features)) {
      const rows = (set: string[]) => set.map((id) => [f(id, byParticipant.get(id)!), truth.get(id)!] as [number, boolean]);
      report[name] = thresholdAccuracy(rows(train), rows(test));
    }
    // The classifier has the power to find a real difference: the telemetry the engine received.
    const leaky = (set: string[]) =>
      set.map((id) => [telemetry[truth.get(id)! ? 'script' : 'human'].keystrokeIntervalsMs!.length, truth.get(id)!] as [number, boolean]);
    expect(thresholdAccuracy(leaky(train), leaky(test))).toBe(1);
    // ~200 test participants: chance is 0.5 +- 0.035; a real leak would score near 1.
    if (process.env.OPACITY_REPORT) console.error(report);
    for (const [name, accuracy] of Object.entries(report)) {
      expect({ name, accuracy }).toEqual({ name, accuracy: expect.toSatisfy((a: number) => a > 0.35 && a < 0.65) });
    }
  });

  it('keeps an account\'s id across games and sessions, and gives each anonymous session a new one', async () => {
    const { engine, memory } = makeEngine();
    await engine.accounts.register('returning', 'correct horse battery');
    const ids: string[] = [];
    for (const controller of ['human', 'script', 'human'] as const) {
      const gameId = await engine.createGame(sample);
      // An anonymous human keeps the room awake, whoever drives the account.
      const anon = engine.sessions.openAnonymous();
      engine.join(anon.token, gameId);
      const { token } = await engine.sessions.login('returning', 'correct horse battery', { controller });
      engine.join(token, gameId);
      engine.say(token, gameId, { text: 'Hello again, Tobias.' });
      engine.say(anon.token, gameId, { text: 'Hello, Tobias.' });
      await engine.idle();
      ids.push(...memory.boundaryEvents.slice(-2).map((e) => e.participantId));
    }
    const [acc1, anon1, acc2, anon2, acc3, anon3] = ids;
    // The same account, whoever drives it, is one participant; anonymous sessions never repeat.
    expect(new Set([acc1, acc2, acc3]).size).toBe(1);
    expect(new Set([anon1, anon2, anon3, acc1]).size).toBe(4);
  });

  it('hides reaction time shorter than the granularity: a 40 ms script reply and a 4 s human reply look alike', async () => {
    const { engine, memory, clock } = makeEngine();
    const gameId = await engine.createGame(sample);
    const human = engine.sessions.openAnonymous({ controller: 'human' });
    const bot = engine.sessions.openAnonymous({ controller: 'script' });
    const other = engine.sessions.openAnonymous({ controller: 'human' });
    for (const s of [human, bot, other]) engine.join(s.token, gameId);
    clock.advance(5000 - (clock.now() % 5000)); // the start of a 5 s window
    engine.say(other.token, gameId, { text: 'Anyone?' });
    clock.advance(40);
    engine.say(bot.token, gameId, { text: 'Me.' });
    clock.advance(3960);
    engine.say(human.token, gameId, { text: 'Me too.' });
    await engine.idle();
    const ts = memory.boundaryEvents.slice(-3).map((e) => e.ts);
    expect(new Set(ts).size).toBe(1);
  });
});

