import { randomBytes } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { BoundaryEvent } from '../../src/boundary/events.js';
import { AnonymizationProxy, mintAnonymousParticipantId } from '../../src/engine/anonymization-proxy.js';
import type { EngineMessageEvent, Session } from '../../src/engine/types.js';

const secret = randomBytes(32);
const proxy = new AnonymizationProxy({ secret });
const validate = Compile(BoundaryEvent);

const account = (accountId: string, controller: Session['controller'] = 'human'): Session => ({
  sessionId: randomBytes(8).toString('hex'),
  kind: 'account',
  accountId,
  controller,
  openedAtMs: 0,
});
const anonymous = (controller: Session['controller'] = 'human'): Session => ({
  sessionId: randomBytes(8).toString('hex'),
  kind: 'anonymous',
  anonymousParticipantId: mintAnonymousParticipantId(),
  controller,
  openedAtMs: 0,
});

const message = (session: Session, extra: Partial<EngineMessageEvent> = {}): EngineMessageEvent => ({
  gameId: 'g-1',
  roomId: 'reading-room',
  seq: 17,
  receivedAtMs: Date.UTC(2026, 0, 1, 12, 0, 7, 321),
  session,
  text: '  @Mara   raw text, kept exactly  ',
  targets: ['npc-mara-quenby'],
  client: { userAgent: 'HeadlessChrome', remoteAddress: '10.0.0.7', keystrokeIntervalsMs: [], clientSentAtMs: 1 },
  ...extra,
});

describe('the anonymization proxy', () => {
  it('emits exactly the boundary fields, one event per listening NPC, flagged for the targeted one', () => {
    const events = proxy.toBoundaryEvents(message(anonymous('script')), ['npc-mara-quenby', 'npc-osric-thorne']);
    expect(events).toHaveLength(2);
    for (const e of events) expect(validate.Check(e)).toBe(true);
    expect(events[0]).toEqual({
      gameId: 'g-1',
      roomId: 'reading-room',
      npcId: 'npc-mara-quenby',
      participantId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      ts: Math.floor(Date.UTC(2026, 0, 1, 12, 0, 5) / 1000),
      text: '  @Mara   raw text, kept exactly  ',
      targeted: true,
      anonymous: true,
    });
    expect(events[1]?.targeted).toBe(false);
    expect(proxy.toBoundaryEvents(message(account('acc-1', 'script')), ['npc-mara-quenby'])[0]?.anonymous).toBe(false);
  });

  it('hashes an account into the same id in every session and game, whoever controls it', () => {
    const a = proxy.participantIdOf(account('acc-1', 'human'));
    const b = proxy.participantIdOf(account('acc-1', 'script'));
    expect(a).toBe(b);
    expect(proxy.participantIdOf(account('acc-2'))).not.toBe(a);
    expect(a).not.toContain('acc-1');
  });

  it('makes the account hash depend on the engine secret', () => {
    const other = new AnonymizationProxy({ secret: randomBytes(32) });
    expect(other.participantIdOf(account('acc-1'))).not.toBe(proxy.participantIdOf(account('acc-1')));
  });

  it('gives anonymous and account ids the same shape', () => {
    const ids = [proxy.participantIdOf(account('acc-1')), proxy.participantIdOf(anonymous())];
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('rounds timestamps down to whole multiples of the granularity', () => {
    expect(proxy.granularitySeconds).toBe(5);
    expect(proxy.coarseTimestamp(9_999)).toBe(5);
    expect(proxy.coarseTimestamp(10_000)).toBe(10);
    const oneSecond = new AnonymizationProxy({ secret, granularitySeconds: 1 });
    expect(oneSecond.coarseTimestamp(9_999)).toBe(9);
  });

  it('refuses a short secret and a fractional granularity', () => {
    expect(() => new AnonymizationProxy({ secret: randomBytes(16) })).toThrowError(RangeError);
    expect(() => new AnonymizationProxy({ secret, granularitySeconds: 0.5 })).toThrowError(RangeError);
  });

  it('is refused by the boundary schema if any field is added', () => {
    const [event] = proxy.toBoundaryEvents(message(account('acc-1')), ['npc-mara-quenby']);
    expect(validate.Check({ ...event, controller: 'human' })).toBe(false);
    expect(validate.Check({ ...event, latencyMs: 12 })).toBe(false);
  });
});
