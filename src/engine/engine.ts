/**
 * The engine's front door: games, sessions and the calls a client (web page, transport or bot)
 * makes with its session token. Holds every running game in memory; talks to the name registry
 * through `RegistryClient` and to the memory service only through `MemoryPort`, with every
 * participant message passed through the anonymization proxy first.
 *
 * With its database (`store`), a game is its definition plus the log of the commands accepted in
 * it. A command runs in memory at once (the order of a room is fixed in the tick it is accepted),
 * its log row and the memory-service calls it caused go to the journal together, and nothing of
 * it leaves the engine (stream entries to other players, NPC cues, outbox calls) until that
 * transaction committed; `committed()` is what a client's acknowledgement waits for. At start,
 * `restore()` replays each running game's log with the clock of its time and without effects,
 * which rebuilds the same rooms, feeds and cursors. An ended game leaves memory and its log is
 * deleted.
 */
import { randomBytes } from 'node:crypto';
import { metricsText, processMetrics } from '../boundary/prometheus.js';
import type { RegistryClient } from '../registry/registry-client.js';
import type { CanonicalNpc } from '../registry/name-registry.js';
import { AccountStore, type ScryptCost } from './accounts.js';
import { AnonymizationProxy } from './anonymization-proxy.js';
import { systemClock, type Clock } from './clock.js';
import { EngineError } from './errors.js';
import { Game, type Actor, type GameContext, type NpcResumedEvent, type NpcView, type ParticipantMessage, type StreamListener } from './game.js';
import type { GameDefinition } from './game-definition/schema.js';
import { parseGameDefinition } from './game-definition/validate.js';
import type { MemoryPort } from './memory-port.js';
import { DatabaseOutboxStore, Outbox, type OutboundErrorHandler, type OutboxOptions } from './outbox/index.js';
import { SessionStore } from './sessions.js';
import type { EngineDatabase } from './store/database.js';
import { Journal, type JournalOptions } from './store/journal.js';
import { within } from './within.js';
import type { ActionResult, ClientContext, GameId, NpcId, NpcStatus, RoomId, Session, SessionId, SessionToken, StreamEntry } from './types.js';

/** What the log of a game holds: every command accepted in it, as it was given. */
type Command =
  | { readonly k: 'join'; readonly session: Session; readonly displayName: string }
  | { readonly k: 'rejoin'; readonly from: SessionId; readonly session: Session }
  | { readonly k: 'leave'; readonly sessionId: SessionId }
  | { readonly k: 'say'; readonly sessionId: SessionId; readonly message: unknown; readonly client?: ClientContext }
  | { readonly k: 'act'; readonly actor: Actor; readonly action: unknown }
  | { readonly k: 'npcSay'; readonly npcId: NpcId; readonly text: unknown }
  | { readonly k: 'addNpc'; readonly npc: CanonicalNpc; readonly persona: string; readonly roomId: RoomId };

interface GameEntry {
  readonly game: Game;
  /** The session that created it: the only one that may end it. */
  readonly creator?: SessionId;
  /** Commands logged so far. */
  n: number;
}

/** Ended games remembered (by id only) to answer GAME_ENDED rather than UNKNOWN_GAME; then forgotten. */
const ENDED_REMEMBERED_MS = 7 * 24 * 3600 * 1000;

/** What the engine tells its listeners (the NPC runtime): `listen`, or the options of the same names. */
export interface EngineListener {
  /** Told when a suspended NPC wakes, with how long it was suspended; the NPC runtime's cue. */
  onNpcResumed?: (event: NpcResumedEvent) => void;
  /** Every participant message heard by an awake NPC, anonymized (the NPC runtime's trigger). */
  onParticipantMessage?: (message: ParticipantMessage) => void;
  /** Told when a game ends (after its memory was told): the NPC runtime drops what it held for it. */
  onGameEnded?: (gameId: GameId) => void;
}

export interface GameEngineOptions extends EngineListener {
  registry: RegistryClient;
  memory: MemoryPort;
  /** Keys the participant-id hash; at least 32 bytes, kept stable so returning players stay recognisable. */
  proxySecret: Uint8Array;
  /** (Default: the system clock) */
  clock?: Clock;
  /** Boundary timestamp granularity in seconds (Default: 5). */
  timestampGranularitySeconds?: number;
  /** Password hashing cost (Default: scrypt N=16384, r=8, p=1). */
  scryptCost?: ScryptCost;
  /** An attempt to call the memory service failed (Default: first failures and dead letters to stderr). */
  onOutboundError?: OutboundErrorHandler;
  /** The engine's own database: accounts and sessions survive a restart (Default: none, in memory). */
  store?: EngineDatabase;
  /** How long a session lasts (Default: 7 days). */
  sessionTtlMs?: number;
  /** Store, retry policy and concurrency of the outbox (Default: the engine's database with `store`, else in process). */
  outbox?: Omit<OutboxOptions, 'onError'>;
  /** Group commit to the engine's database (with `store`). */
  journal?: JournalOptions;
  /** How long a client's acknowledgement waits for its command to be kept (Default: 5 s). */
  commitTimeoutMs?: number;
}

export interface JoinOptions {
  /** Receives every entry of the participant's current room, in order. */
  listener?: StreamListener;
}

export class GameEngine {
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly clock: Clock;
  /** Every call to the memory service goes through here; play never waits for it. */
  readonly outbox: Outbox;
  readonly #proxy: AnonymizationProxy;
  readonly #games = new Map<GameId, GameEntry>();
  /** Ended games by id, with when they ended: remembered for ENDED_REMEMBERED_MS. */
  readonly #ended = new Map<GameId, number>();
  readonly #journal: Journal | undefined;
  /** The time of the command being run (or replayed): every clock reading within it agrees. */
  #commandAtMs: number | undefined;
  /** Effects of the command being run: released together once its log row is kept. */
  #effects: (() => void)[] | undefined;
  #replaying = false;
  /** The options' listener first, then every one of `listen`. */
  readonly #listeners = new Set<EngineListener>();

  constructor(private readonly options: GameEngineOptions) {
    this.#listeners.add(options);
    this.clock = options.clock ?? systemClock;
    this.accounts = new AccountStore({ ...(options.scryptCost ? { cost: options.scryptCost } : {}), ...(options.store ? { db: options.store } : {}) });
    this.sessions = new SessionStore(this.accounts, this.clock, {
      ...(options.store ? { db: options.store } : {}),
      ...(options.sessionTtlMs !== undefined ? { ttlMs: options.sessionTtlMs } : {}),
    });
    this.#proxy = new AnonymizationProxy({
      secret: options.proxySecret,
      ...(options.timestampGranularitySeconds !== undefined ? { granularitySeconds: options.timestampGranularitySeconds } : {}),
    });
    this.#journal = options.store ? new Journal(options.store, options.journal) : undefined;
    this.outbox = new Outbox(options.memory, {
      ...(this.#journal ? { store: new DatabaseOutboxStore(this.#journal) } : {}),
      ...options.outbox,
      ...(options.onOutboundError ? { onError: options.onOutboundError } : {}),
    });
  }

  /**
   * Takes back what the engine's database holds (call once, before serving): sessions, the
   * outbox's undelivered calls, and every running game, replayed from its log.
   */
  async restore(): Promise<{ games: number; sessions: number; undelivered: number }> {
    const db = this.options.store;
    if (!db) return { games: 0, sessions: 0, undelivered: 0 };
    const sessions = await this.sessions.load();
    const snapshot = await DatabaseOutboxStore.load(db);
    this.outbox.restore(snapshot);
    // Ended games are kept (their definitions only) as long as they are remembered, then deleted.
    const horizon = this.clock.now() - ENDED_REMEMBERED_MS;
    await db.query('DELETE FROM engine.games WHERE ended_at_ms <= $1', [horizon]);
    const { rows: ended } = await db.query<{ game_id: string; ended_at_ms: string | number }>('SELECT game_id, ended_at_ms FROM engine.games WHERE ended_at_ms IS NOT NULL ORDER BY ended_at_ms');
    for (const row of ended) this.#ended.set(row.game_id, Number(row.ended_at_ms));
    const { rows: games } = await db.query<{ game_id: string; definition: unknown; roster: unknown; creator: string | null }>(
      'SELECT game_id, definition, roster, creator FROM engine.games WHERE ended_at_ms IS NULL ORDER BY created_at_ms',
    );
    for (const row of games) {
      const { rows: log } = await db.query<{ n: number; at_ms: string | number; command: unknown }>(
        'SELECT n, at_ms, command FROM engine.game_log WHERE game_id = $1 ORDER BY n',
        [row.game_id],
      );
      const roster = (parsed(row.roster) as CanonicalNpc[]).map((npc) => [npc.npcId, npc] as const);
      const entry = this.#open(row.game_id, parsed(row.definition) as GameDefinition, new Map(roster), row.creator ?? undefined);
      this.#replaying = true;
      try {
        for (const line of log) {
          this.#commandAtMs = Number(line.at_ms);
          try {
            this.#apply(entry.game, parsed(line.command) as Command);
          } catch {
            // It threw when it was accepted too (nothing was logged then); cannot happen, harmless.
          }
          entry.n = line.n;
        }
      } finally {
        this.#replaying = false;
        this.#commandAtMs = undefined;
      }
      this.#games.set(row.game_id, entry);
    }
    return { games: games.length, sessions, undelivered: snapshot.pending.length };
  }

  /**
   * Resolves once every command accepted so far is kept in the engine's database (at once
   * without one); STORE_UNAVAILABLE if that takes longer than the commit timeout. A client is
   * answered only after this: what it was told succeeded survives a crash.
   */
  async committed(): Promise<void> {
    if (!this.#journal) return;
    if (!(await within(this.#journal.flushed(), this.options.commitTimeoutMs ?? 5_000))) {
      throw new EngineError('STORE_UNAVAILABLE', 'The engine\'s database has not confirmed this yet; it will be kept if the database comes back in time. Look before you repeat it.');
    }
  }

  // ---- games ----------------------------------------------------------------------------------

  /** Validates the definition, checks every roster NPC with the registry, registers the secrets. */
  async createGame(definition: unknown, options: { creator?: SessionId } = {}): Promise<GameId> {
    const def = parseGameDefinition(definition);
    const roster = new Map<NpcId, CanonicalNpc>();
    for (const [i, placement] of def.npcs.entries()) {
      const npc = await this.options.registry.getNpc(placement.npcId);
      if (!npc) {
        throw new EngineError('UNKNOWN_NPC', `NPC "${placement.npcId}" is not in the name registry.`, {
          details: { path: `/npcs/${i}/npcId` },
        });
      }
      roster.set(npc.npcId, npc);
    }
    this.#assertAccepting();
    const gameId = `g-${randomBytes(12).toString('base64url')}`;
    const entry = this.#open(gameId, def, roster, options.creator);
    const created = this.#journal?.write({
      t: 'game',
      gameId,
      definition: def,
      roster: [...roster.values()],
      ...(options.creator !== undefined ? { creator: options.creator } : {}),
      atMs: this.clock.now(),
    });
    // Accepted before the game exists for anyone: no event of it can leave ahead of its secrets.
    this.outbox.registerSecrets({ gameId, secrets: entry.game.secrets() });
    await created;
    this.#games.set(gameId, entry);
    return gameId;
  }

  /** A game object wired to this engine; its effects are held back while replaying or until kept. */
  #open(gameId: GameId, def: GameDefinition, roster: ReadonlyMap<NpcId, CanonicalNpc>, creator?: SessionId): GameEntry {
    const outbox = this.outbox;
    // Effects happen only inside a command (`#run` releases them once its log row is kept), never in a replay.
    const live = (effect: () => void) => {
      if (this.#replaying) return;
      if (this.#effects) this.#effects.push(effect);
      else effect();
    };
    const ctx: GameContext = {
      clock: { now: () => this.#commandAtMs ?? this.clock.now() },
      proxy: this.#proxy,
      outbound: {
        // Accepted now, in order; the database store holds them back until this command is kept.
        ingest: (roomId, events) => {
          if (!this.#replaying) outbox.ingest(gameId, roomId, events);
        },
        flushWorkingMemory: (request) => {
          if (!this.#replaying) outbox.flushWorkingMemory(request);
        },
      },
      onNpcResumed: (event) => live(() => this.#tell((l) => l.onNpcResumed?.(event))),
      onParticipantMessage: (message) => live(() => this.#tell((l) => l.onParticipantMessage?.(message))),
      onListenerError: (error) => console.error('A stream listener threw; the entry was still delivered to everyone else.', error),
      ...(this.#journal ? { publish: (deliver: () => void) => live(deliver) } : {}),
    };
    return { game: new Game(gameId, def, roster, ctx), n: 0, ...(creator !== undefined ? { creator } : {}) };
  }

  /** Runs a command now and logs it; effects leave once the log row is kept. */
  #run<R>(gameId: GameId, command: Command, listener?: StreamListener): R {
    this.#assertAccepting();
    const entry = this.#live(gameId);
    this.#commandAtMs = this.clock.now();
    const effects: (() => void)[] = (this.#effects = []);
    try {
      const result = this.#apply(entry.game, command, listener) as R;
      entry.n += 1;
      this.#journal?.write({ t: 'log', gameId, n: entry.n, atMs: this.#commandAtMs, command });
      // After the log row (and the outbox calls) of this very command, in order; at once without a database.
      const release = () => {
        for (const effect of effects) {
          try {
            effect();
          } catch (error) {
            console.error('An effect of a command threw; the command stands.', error);
          }
        }
      };
      if (effects.length > 0) {
        if (this.#journal) this.#journal.after(release);
        else release();
      }
      return result;
    } finally {
      this.#commandAtMs = undefined;
      this.#effects = undefined;
    }
  }

  #apply(game: Game, c: Command, listener?: StreamListener): unknown {
    switch (c.k) {
      case 'join':
        return game.join(c.session, c.displayName, listener);
      case 'rejoin':
        return game.rejoin(c.from, c.session, listener);
      case 'leave':
        return game.leave(c.sessionId);
      case 'say':
        return game.say(c.sessionId, c.message, c.client);
      case 'act':
        return game.perform(c.actor, c.action);
      case 'npcSay':
        return game.npcSay(c.npcId, c.text);
      case 'addNpc':
        return game.addNpc(c.npc, c.persona, c.roomId);
    }
  }

  /** Bounded queues: a command is refused, before it changes anything, while either is full. */
  #assertAccepting(): void {
    if (this.#journal && !this.#journal.accepting) {
      throw new EngineError('STORE_UNAVAILABLE', 'The engine\'s database is not keeping up or is unavailable; nothing was changed. Try again shortly.');
    }
    if (!this.outbox.accepting) {
      throw new EngineError('MEMORY_BACKLOG', 'The NPCs\' memory is far behind; nothing was changed. Try again in a moment.');
    }
  }

  /** Hears what the engine tells (messages to NPCs, NPCs waking, games ending) until the returned function is called. */
  listen(listener: EngineListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(event: (listener: EngineListener) => void): void {
    for (const listener of this.#listeners) event(listener);
  }

  /** The session that created a running game, if one did. */
  creatorOf(gameId: GameId): SessionId | undefined {
    return this.#games.get(gameId)?.creator;
  }

  /** Ends a game: no more play, and the memory service is told its game memory expires now. */
  endGame(gameId: GameId): void {
    if (this.#ended.has(gameId)) return;
    this.#assertAccepting();
    this.#finish(this.#live(gameId));
    this.outbox.endGame(gameId);
    this.#tell((l) => l.onGameEnded?.(gameId));
  }

  /** The game leaves memory (and its log the database); its id stays known as ended. */
  #finish(entry: GameEntry): void {
    entry.game.end();
    this.#games.delete(entry.game.id);
    const now = this.clock.now();
    this.#ended.set(entry.game.id, now);
    // Map order is end order: forget the ones past the horizon.
    for (const [id, at] of this.#ended) {
      if (at > now - ENDED_REMEMBERED_MS) break;
      this.#ended.delete(id);
    }
    this.#journal?.write({ t: 'ended', gameId: entry.game.id, atMs: this.clock.now() });
  }

  /**
   * Ends a game and closes its memory at once (ahead of what is still queued for it); true once
   * the memory service confirmed within `timeoutMs`, false while the end is still on its way.
   */
  async endGameNow(gameId: GameId, timeoutMs: number, options: { by?: SessionId } = {}): Promise<boolean> {
    // A game a session created is that session's to end; a game made by the operator, anyone's.
    const creator = this.creatorOf(gameId);
    if (options.by !== undefined && creator !== undefined && creator !== options.by) {
      throw new EngineError('NOT_GAME_CREATOR', 'Only the session that created this game can end it.');
    }
    const first = !this.#ended.has(gameId);
    if (first) {
      this.#assertAccepting();
      this.#finish(this.#live(gameId));
    }
    const closed = await this.outbox.endNow(gameId, timeoutMs);
    if (first) this.#tell((l) => l.onGameEnded?.(gameId));
    return closed;
  }

  /** Adds a registry NPC to a running game (roster cap 10, room cap 6). */
  async addNpc(gameId: GameId, npcId: NpcId, roomId: RoomId, persona: string): Promise<void> {
    this.#game(gameId).checkCanAddNpc(npcId, roomId); // caps first: no registry call for an NPC that cannot come in
    const npc = await this.options.registry.getNpc(npcId);
    if (!npc) throw new EngineError('UNKNOWN_NPC', `NPC "${npcId}" is not in the name registry.`);
    this.#run(gameId, { k: 'addNpc', npc, persona, roomId });
  }

  // ---- participants (all by session token) -----------------------------------------------------

  /**
   * Joins the game; an account already playing in it through another session (signed in again,
   * or after a restart) takes its place back instead, in the room where it was.
   */
  join(token: SessionToken, gameId: GameId, options: JoinOptions = {}): { roomId: RoomId; description: string } {
    const { session, displayName } = this.sessions.get(token);
    const game = this.#game(gameId);
    const previous = session.accountId !== undefined && !game.hasParticipant(session.sessionId) ? game.sessionOfAccount(session.accountId) : undefined;
    const { roomId } = this.#run<{ roomId: RoomId }>(
      gameId,
      previous !== undefined ? { k: 'rejoin', from: previous, session } : { k: 'join', session, displayName },
      options.listener,
    );
    return { roomId, description: game.describe(roomId) };
  }

  /** The running games this session plays in (from the games themselves, so also after a restart). */
  gamesOf(token: SessionToken): GameId[] {
    const { session } = this.sessions.get(token);
    return [...this.#games].filter(([, entry]) => entry.game.hasParticipant(session.sessionId)).map(([gameId]) => gameId);
  }

  leave(token: SessionToken, gameId: GameId): void {
    const { session } = this.sessions.get(token);
    this.#run(gameId, { k: 'leave', sessionId: session.sessionId });
  }

  /** `message` is `{ text, target? }`; `@First` in the text also targets an NPC present. */
  say(token: SessionToken, gameId: GameId, message: unknown, client?: ClientContext): StreamEntry {
    const { session } = this.sessions.get(token);
    return this.#run(gameId, { k: 'say', sessionId: session.sessionId, message, ...(client ? { client } : {}) });
  }

  act(token: SessionToken, gameId: GameId, action: unknown): ActionResult {
    const { session } = this.sessions.get(token);
    return this.#run(gameId, { k: 'act', actor: { kind: 'participant', sessionId: session.sessionId }, action });
  }

  /** Pushes every entry this participant sees from now on; returns the function that stops it. */
  subscribe(token: SessionToken, gameId: GameId, listener: StreamListener): () => void {
    const { session } = this.sessions.get(token);
    return this.#game(gameId).subscribe(session.sessionId, listener);
  }

  /** Everything this participant has seen, in order. */
  feed(token: SessionToken, gameId: GameId): readonly StreamEntry[] {
    const { session } = this.sessions.get(token);
    return this.#game(gameId).feedOf(session.sessionId);
  }

  whereAmI(token: SessionToken, gameId: GameId): RoomId {
    const { session } = this.sessions.get(token);
    return this.#game(gameId).roomOfParticipant(session.sessionId);
  }

  // ---- NPC runtime side -----------------------------------------------------------------------

  /** An action the NPC's model proposed; validated like a player's. A refusal is a physical failure. */
  proposeNpcAction(gameId: GameId, npcId: NpcId, action: unknown): ActionResult {
    return this.#run(gameId, { k: 'act', actor: { kind: 'npc', npcId }, action });
  }

  npcSay(gameId: GameId, npcId: NpcId, text: unknown): StreamEntry {
    return this.#run(gameId, { k: 'npcSay', npcId, text });
  }

  /** What an awake NPC may see for its turn (anonymized); undefined while it is suspended. */
  npcView(gameId: GameId, npcId: NpcId): NpcView | undefined {
    return this.#games.get(gameId)?.game.npcView(npcId);
  }

  /** The NPCs of a room and whether each is awake. */
  npcsIn(gameId: GameId, roomId: RoomId): { npcId: NpcId; active: boolean }[] {
    return this.#games.get(gameId)?.game.npcsIn(roomId) ?? [];
  }

  npcStatus(gameId: GameId, npcId: NpcId): NpcStatus {
    return this.#game(gameId).npcStatus(npcId);
  }

  /** Running games where this NPC is on the roster, and the room it is in. */
  whereIs(npcId: NpcId): { gameId: GameId; roomId: RoomId }[] {
    const found: { gameId: GameId; roomId: RoomId }[] = [];
    for (const [gameId, { game }] of this.#games) {
      const roomId = game.status === 'running' ? game.whereIs(npcId) : undefined;
      if (roomId !== undefined) found.push({ gameId, roomId });
    }
    return found;
  }

  /** Resolves once every memory-service call accepted so far is delivered or set aside. */
  idle(): Promise<void> {
    return this.outbox.idle();
  }

  /**
   * Resolves true once the memory service has taken the game's set-up (its secrets), false if
   * that takes longer than `timeoutMs`: play never waits for the memory service, the outbox
   * keeps trying, and the order of the game's calls holds either way.
   */
  ready(gameId: GameId, timeoutMs: number): Promise<boolean> {
    return within(this.outbox.idle(gameId), timeoutMs);
  }

  /** Running (not ended) games held by this engine. */
  get runningGames(): number {
    return this.#games.size;
  }

  /** Records waiting for the engine's database, and whether new commands are taken (readiness, metrics). */
  storeStats(): { pending: number; accepting: boolean } {
    return { pending: this.#journal?.pending ?? 0, accepting: this.#journal?.accepting ?? true };
  }

  /** The engine's gauges and counters in Prometheus' text format (for `/metrics`). */
  prometheus(): string {
    const outbox = this.outbox.stats();
    const store = this.storeStats();
    return metricsText([
      { name: 'engine_running_games', type: 'gauge', help: 'Games held in memory (running).', value: this.#games.size },
      { name: 'engine_outbox_pending', type: 'gauge', help: 'Memory-service calls accepted and not yet delivered.', value: outbox.pending },
      { name: 'engine_outbox_lag_seconds', type: 'gauge', help: 'Age of the oldest undelivered memory-service call.', value: outbox.oldestPendingMs / 1000 },
      { name: 'engine_outbox_retrying', type: 'gauge', help: 'Outbox lanes waiting to retry after a failure.', value: outbox.retrying },
      { name: 'engine_outbox_delivered_total', type: 'counter', help: 'Memory-service calls delivered.', value: outbox.delivered },
      { name: 'engine_outbox_dead_letters_total', type: 'counter', help: 'Memory-service calls refused and set aside.', value: outbox.deadLetters },
      { name: 'engine_store_pending', type: 'gauge', help: 'Records waiting for a commit to the engine\'s database.', value: store.pending },
      { name: 'engine_store_accepting', type: 'gauge', help: '1 while the engine takes new commands, 0 while its database fails or lags.', value: store.accepting && this.outbox.accepting ? 1 : 0 },
      ...processMetrics(),
    ]);
  }

  /** Waits (briefly) for what was accepted to be kept, then stops the outbox's retry timers. */
  async close(): Promise<void> {
    await this.#journal?.close();
    this.outbox.close();
  }

  #live(gameId: GameId): GameEntry {
    const entry = typeof gameId === 'string' ? this.#games.get(gameId) : undefined;
    if (entry) return entry;
    if (this.#ended.has(gameId)) throw new EngineError('GAME_ENDED', 'This game has ended; start or join another.');
    throw new EngineError('UNKNOWN_GAME', `No game "${String(gameId)}" is running here.`);
  }

  #game(gameId: GameId): Game {
    return this.#live(gameId).game;
  }
}

const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
