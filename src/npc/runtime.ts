/**
 * The NPC runtime: decides which NPC answers a room message, bounds how many turns a room can
 * cost, and runs each turn (src/npc/turn.ts). It lives in the engine process and sees the game
 * only through `NpcHost`, which the engine implements; the memory service only through
 * `contextFor` (HTTP in production).
 *
 * Who answers (documented policy):
 * - a message that targets NPCs (`@Mara ...`): each targeted NPC in the room, in order;
 * - an untargeted message: at most one NPC, the one that spoke last in the room (else the first
 *   NPC present), so a conversation keeps its partner;
 * - an NPC that is suspended (no human in its room) takes no turn at all.
 * How much (rate limits, per game):
 * - each room has a bucket of `roomBurst` turns refilled at `roomPerMinute`;
 * - an untargeted message triggers a turn at most once per `untargetedCooldownMs` per speaker;
 * a limited message still reaches memory (the engine ingests it); it gets no reply, but a player
 *   who addressed an NPC is told in the room that it is busy (once per NPC and room per
 *   `busyNoticeMs`, so a flood does not turn into a flood of notices).
 * Turns of one NPC run one at a time, in message order; a line addressed to an NPC does not wait
 *   behind its replies to chatter: turns for untargeted lines still queued when it arrives are
 *   dropped (their room budget given back), so a direct question is answered next.
 * While the memory service is unreachable (a network error or a 5xx), a turn waits and retries
 * its context with backoff; the NPC is seen "lost in thought" in the room (once per outage), and
 * the line is answered when the service is back.
 * After a suspension (seed 000, the empty library), the first turn is told how long it lasted
 * and acknowledges it; nothing runs while the room is empty, so the pause costs no inference.
 */
import type { ContextRequest, ContextWindow } from '../boundary/context.js';
import type { NpcView } from '../engine/game.js';
import type { ActionResult } from '../engine/types.js';
import type { TurnMetrics } from './metrics.js';
import { runTurn, type TurnReport } from './turn.js';
import type { ModelProvider, ProposedAction } from './types.js';

export interface RoomMessageEvent {
  gameId: string;
  roomId: string;
  seq: number;
  /** The speaker as the memory service knows them (anonymized by the proxy). */
  speaker: { participantId: string; anonymous: boolean };
  text: string;
  targets: readonly string[];
}

/** What an NPC can see of its room at the moment of its turn, anonymized by the engine: the engine's own type. */
export type { NpcView };

export interface NpcHost {
  onRoomMessage(listener: (event: RoomMessageEvent) => void): () => void;
  /** Called with each game that ends; the runtime forgets what it held for it. */
  onGameEnded?(listener: (gameId: string) => void): () => void;
  /** NPCs in a room, in roster order, with whether they are awake (a human is present). */
  npcsIn(gameId: string, roomId: string): { npcId: string; active: boolean }[];
  /** Undefined when the NPC is gone or suspended: then it takes no turn. */
  view(gameId: string, npcId: string): NpcView | undefined;
  act(gameId: string, npcId: string, action: ProposedAction): ActionResult;
  say(gameId: string, npcId: string, text: string): void;
}

export interface NpcRuntimeOptions {
  /** (Default: 6) */
  roomBurst?: number;
  /** (Default: 12) */
  roomPerMinute?: number;
  /** (Default: 10000) */
  untargetedCooldownMs?: number;
  /** At most one "busy" notice per NPC and room in this long. (Default: 10000) */
  busyNoticeMs?: number;
  /** Retries of a turn's context while the memory service is unreachable. (Default: 8, about 90 s) */
  contextRetries?: number;
  /** The first retry's delay, doubled each time up to 30 s. (Default: 500) */
  contextRetryMs?: number;
  /** Turns kept per game for operators. (Default: 200) */
  keepTurns?: number;
  now?: () => number;
  onError?: (error: unknown, event: RoomMessageEvent, npcId: string) => void;
}

export interface TurnRecord extends Omit<TurnReport, 'lines'> {
  npcId: string;
  roomId: string;
  /** The message that triggered the turn. */
  triggerSeq: number;
  /** How long the turn waited behind the NPC's earlier turns in the game before it started. */
  queuedMs: number;
  lines: string[];
  at: number;
}

export class NpcRuntime {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly lastUntargeted = new Map<string, number>();
  private readonly lastSpeaker = new Map<string, string>();
  private readonly lastBusyNotice = new Map<string, number>();
  /** NPCs (game, npc) already seen lost in thought during the current outage. */
  private readonly lostInThought = new Set<string>();
  /** Retry waits in progress: `stop()` cuts them short. */
  private readonly waits = new Set<() => void>();
  private stopped = false;
  private readonly queues = new Map<string, Promise<void>>();
  /** Turns for untargeted lines not started yet, per (game, npc): a direct question drops them. */
  private readonly chatter = new Map<string, Set<{ dropped: boolean; room: string }>>();
  private readonly turns = new Map<string, TurnRecord[]>();
  private unsubscribe?: () => void;
  private readonly now: () => number;

  constructor(
    private readonly host: NpcHost,
    private readonly contextFor: (gameId: string, npcId: string, request: ContextRequest) => Promise<ContextWindow>,
    private readonly provider: ModelProvider,
    private readonly metrics: TurnMetrics,
    private readonly options: NpcRuntimeOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    if (this.unsubscribe) return;
    const offMessages = this.host.onRoomMessage((event) => this.onMessage(event));
    const offEnds = this.host.onGameEnded?.((gameId) => this.forget(gameId));
    this.unsubscribe = () => {
      offMessages();
      offEnds?.();
    };
  }

  /** Drops everything held for a game that ended: its buckets, partners, cooldowns and turn records. */
  forget(gameId: string): void {
    this.turns.delete(gameId);
    for (const [table, key] of this.heldFor(gameId)) table.delete(key);
  }

  /** How many entries the runtime holds for a game (tests: it drops them at game end). */
  held(gameId: string): number {
    return (this.turns.get(gameId)?.length ?? 0) + this.heldFor(gameId).length;
  }

  /** Every entry of the per-game tables (keyed "game\0...") that belongs to `gameId`. */
  private heldFor(gameId: string): [Map<string, unknown> | Set<string>, string][] {
    const tables: (Map<string, unknown> | Set<string>)[] = [this.buckets, this.lastUntargeted, this.lastSpeaker, this.lastBusyNotice, this.lostInThought, this.chatter];
    return tables.flatMap((table) => [...table.keys()].filter((key) => key.startsWith(`${gameId}\0`)).map((key) => [table, key] as [Map<string, unknown> | Set<string>, string]));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    // A turn waiting for the memory service gives up now instead of delaying shutdown.
    this.stopped = true;
    for (const wake of this.waits) wake();
  }

  /** Resolves when every queued turn has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /** The recent turns of a game, newest last: which context each reply was given (for operators). */
  turnsOf(gameId: string): readonly TurnRecord[] {
    return this.turns.get(gameId) ?? [];
  }

  /** The NPCs that will answer this message under the policy and the limits (and reserves them). */
  responders(event: RoomMessageEvent): string[] {
    const awake = this.host.npcsIn(event.gameId, event.roomId).filter((n) => n.active).map((n) => n.npcId);
    if (awake.length === 0) return [];
    let chosen: string[];
    if (event.targets.length > 0) {
      chosen = event.targets.filter((t) => awake.includes(t));
    } else {
      const speakerKey = `${event.gameId}\0${event.speaker.participantId}`;
      const last = this.lastUntargeted.get(speakerKey);
      if (last !== undefined && this.now() - last < (this.options.untargetedCooldownMs ?? 10_000)) return [];
      this.lastUntargeted.set(speakerKey, this.now());
      const partner = this.lastSpeaker.get(`${event.gameId}\0${event.roomId}`);
      chosen = [partner && awake.includes(partner) ? partner : awake[0]!];
    }
    const answering = chosen.filter(() => this.take(`${event.gameId}\0${event.roomId}`));
    // Addressed but over the room's limit: say so in the room rather than stay silent.
    for (const npcId of chosen) if (event.targets.includes(npcId) && !answering.includes(npcId)) this.busy(event, npcId);
    return answering;
  }

  /** The turn's context, waiting out an unreachable memory service (a 4xx is not retried). */
  private async contextWhenAvailable(event: RoomMessageEvent, npcId: string, firstName: string, request: ContextRequest): Promise<ContextWindow> {
    const key = `${event.gameId}\0${npcId}`;
    for (let attempt = 0; ; attempt++) {
      try {
        const window = await this.contextFor(event.gameId, npcId, request);
        this.lostInThought.delete(key);
        return window;
      } catch (error) {
        const status = (error as { status?: unknown }).status;
        const unreachable = typeof status !== 'number' || status >= 500;
        if (!unreachable || this.stopped || attempt >= (this.options.contextRetries ?? 8)) throw error;
        if (!this.lostInThought.has(key)) {
          this.lostInThought.add(key);
          this.host.say(event.gameId, npcId, `${firstName} seems lost in thought for a moment.`);
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            this.waits.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.min(30_000, (this.options.contextRetryMs ?? 500) * 2 ** attempt));
          this.waits.add(wake);
        });
      }
    }
  }

  private busy(event: RoomMessageEvent, npcId: string): void {
    const key = `${event.gameId}\0${event.roomId}\0${npcId}`;
    const last = this.lastBusyNotice.get(key);
    if (last !== undefined && this.now() - last < (this.options.busyNoticeMs ?? 10_000)) return;
    const view = this.host.view(event.gameId, npcId);
    if (!view) return;
    this.lastBusyNotice.set(key, this.now());
    this.host.say(event.gameId, npcId, `${view.firstName} raises a hand. "One moment, please; too many of you at once. Ask me again shortly."`);
  }

  private onMessage(event: RoomMessageEvent): void {
    const heard = this.now();
    const room = `${event.gameId}\0${event.roomId}`;
    for (const npcId of this.responders(event)) {
      const key = `${event.gameId}\0${npcId}`;
      const waiting = this.chatter.get(key) ?? new Set();
      if (event.targets.includes(npcId)) {
        for (const turn of waiting) {
          turn.dropped = true;
          this.giveBack(turn.room);
        }
        waiting.clear();
        this.chatter.delete(key);
      }
      const ticket = { dropped: false, room };
      if (!event.targets.includes(npcId)) this.chatter.set(key, waiting.add(ticket));
      const previous = this.queues.get(key) ?? Promise.resolve();
      const next = previous
        .then(() => {
          waiting.delete(ticket);
          if (waiting.size === 0 && this.chatter.get(key) === waiting) this.chatter.delete(key);
          return ticket.dropped ? undefined : this.turn(event, npcId, this.now() - heard);
        })
        .catch((error: unknown) => this.options.onError?.(error, event, npcId))
        .finally(() => {
          if (this.queues.get(key) === next) this.queues.delete(key);
        });
      this.queues.set(key, next);
    }
  }

  private async turn(event: RoomMessageEvent, npcId: string, queuedMs: number): Promise<void> {
    const view = this.host.view(event.gameId, npcId);
    if (!view || view.roomId !== event.roomId) return; // suspended, or walked away meanwhile
    const request: ContextRequest = {
      roomId: view.roomId,
      participants: view.participants,
      messages: view.messages,
      state: view.state,
    };
    const report = await runTurn(
      { npcId, firstName: view.firstName },
      { participantId: event.speaker.participantId, anonymous: event.speaker.anonymous, text: event.text, targeted: event.targets.includes(npcId) },
      {
        context: () => this.contextWhenAvailable(event, npcId, view.firstName, request),
        act: (action) => this.host.act(event.gameId, npcId, action),
        say: (text) => this.host.say(event.gameId, npcId, text),
        secrets: () => view.secrets,
      },
      this.provider,
      view.resumedAfterMs !== undefined ? { resumedAfterMs: view.resumedAfterMs } : {},
    );
    this.lastSpeaker.set(`${event.gameId}\0${view.roomId}`, npcId);
    this.metrics.record(report.timings, report.guard.length);
    const list = this.turns.get(event.gameId) ?? [];
    list.push({ ...report, npcId, roomId: view.roomId, triggerSeq: event.seq, queuedMs, at: this.now() });
    if (list.length > (this.options.keepTurns ?? 200)) list.shift();
    this.turns.set(event.gameId, list);
  }

  /** A turn taken from a room's budget and not run goes back to it. */
  private giveBack(room: string): void {
    const bucket = this.buckets.get(room);
    if (bucket) bucket.tokens = Math.min(this.options.roomBurst ?? 6, bucket.tokens + 1);
  }

  /** Token bucket per room. */
  private take(room: string): boolean {
    const burst = this.options.roomBurst ?? 6;
    const perMs = (this.options.roomPerMinute ?? 12) / 60_000;
    const now = this.now();
    const bucket = this.buckets.get(room) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.buckets.set(room, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
