/**
 * The engine's front door: games, sessions and the calls a client (web page, transport or bot)
 * makes with its session token. Holds every running game in memory; talks to the name registry
 * through `RegistryClient` and to the memory service only through `MemoryPort`, with every
 * participant message passed through the anonymization proxy first.
 */
import { randomBytes } from 'node:crypto';
import type { RegistryClient } from '../registry/registry-client.js';
import type { CanonicalNpc } from '../registry/name-registry.js';
import { AccountStore, type ScryptCost } from './accounts.js';
import { AnonymizationProxy } from './anonymization-proxy.js';
import { systemClock, type Clock } from './clock.js';
import { EngineError } from './errors.js';
import { Game, type NpcResumedEvent, type NpcView, type ParticipantMessage, type StreamListener } from './game.js';
import { parseGameDefinition } from './game-definition/validate.js';
import type { MemoryPort } from './memory-port.js';
import { Outbox, type OutboundErrorHandler, type OutboxOptions } from './outbox/index.js';
import { SessionStore } from './sessions.js';
import type { EngineDatabase } from './store/database.js';
import { within } from './within.js';
import type { ActionResult, ClientContext, GameId, NpcId, NpcStatus, RoomId, SessionToken, StreamEntry } from './types.js';

export interface GameEngineOptions {
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
  /** Told when a suspended NPC wakes, with how long it was suspended; the NPC runtime's cue. */
  onNpcResumed?: (event: NpcResumedEvent) => void;
  /** Every participant message heard by an awake NPC, anonymized (the NPC runtime's trigger). */
  onParticipantMessage?: (message: ParticipantMessage) => void;
  /** Told when a game ends (after its memory was told): the NPC runtime drops what it held for it. */
  onGameEnded?: (gameId: GameId) => void;
  /** An attempt to call the memory service failed (Default: first failures and dead letters to stderr). */
  onOutboundError?: OutboundErrorHandler;
  /** The engine's own database: accounts and sessions survive a restart (Default: none, in memory). */
  store?: EngineDatabase;
  /** How long a session lasts (Default: 7 days). */
  sessionTtlMs?: number;
  /** Store, retry policy and concurrency of the outbox (Default: in process, 200 ms..30 s backoff, 32 in flight). */
  outbox?: Omit<OutboxOptions, 'onError'>;
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
  readonly #games = new Map<GameId, { game: Game }>();

  constructor(private readonly options: GameEngineOptions) {
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
    this.outbox = new Outbox(options.memory, {
      ...options.outbox,
      ...(options.onOutboundError ? { onError: options.onOutboundError } : {}),
    });
  }

  // ---- games ----------------------------------------------------------------------------------

  /** Validates the definition, checks every roster NPC with the registry, registers the secrets. */
  async createGame(definition: unknown): Promise<GameId> {
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
    const gameId = `g-${randomBytes(12).toString('base64url')}`;
    const outbox = this.outbox;
    const game = new Game(gameId, def, roster, {
      clock: this.clock,
      proxy: this.#proxy,
      outbound: {
        ingest: (roomId, events) => outbox.ingest(gameId, roomId, events),
        flushWorkingMemory: (request) => outbox.flushWorkingMemory(request),
      },
      onNpcResumed: this.options.onNpcResumed ?? (() => {}),
      onParticipantMessage: (message) => this.options.onParticipantMessage?.(message),
      onListenerError: (error) => console.error('A stream listener threw; the entry was still delivered to everyone else.', error),
    });
    // Accepted before the game exists for anyone: no event of it can leave ahead of its secrets.
    outbox.registerSecrets({ gameId, secrets: game.secrets() });
    this.#games.set(gameId, { game });
    return gameId;
  }

  /** Ends a game: no more play, and the memory service is told its game memory expires now. */
  endGame(gameId: GameId): void {
    const { game } = this.#entry(gameId);
    if (game.status === 'ended') return;
    game.end();
    this.outbox.endGame(gameId);
    this.options.onGameEnded?.(gameId);
  }

  /**
   * Ends a game and closes its memory at once (ahead of what is still queued for it); true once
   * the memory service confirmed within `timeoutMs`, false while the end is still on its way.
   */
  async endGameNow(gameId: GameId, timeoutMs: number): Promise<boolean> {
    const { game } = this.#entry(gameId);
    const first = game.status !== 'ended';
    if (first) game.end();
    const closed = await this.outbox.endNow(gameId, timeoutMs);
    if (first) this.options.onGameEnded?.(gameId);
    return closed;
  }

  /** Adds a registry NPC to a running game (roster cap 10, room cap 6). */
  async addNpc(gameId: GameId, npcId: NpcId, roomId: RoomId, persona: string): Promise<void> {
    const game = this.#game(gameId);
    game.checkCanAddNpc(npcId, roomId); // caps first: no registry call for an NPC that cannot come in
    const npc = await this.options.registry.getNpc(npcId);
    if (!npc) throw new EngineError('UNKNOWN_NPC', `NPC "${npcId}" is not in the name registry.`);
    game.addNpc(npc, persona, roomId);
  }

  // ---- participants (all by session token) -----------------------------------------------------

  join(token: SessionToken, gameId: GameId, options: JoinOptions = {}): { roomId: RoomId; description: string } {
    const { session, displayName } = this.sessions.get(token);
    const game = this.#game(gameId);
    const { roomId } = game.join(session, displayName, options.listener);
    return { roomId, description: game.describe(roomId) };
  }

  leave(token: SessionToken, gameId: GameId): void {
    const { session } = this.sessions.get(token);
    this.#game(gameId).leave(session.sessionId);
  }

  /** `message` is `{ text, target? }`; `@First` in the text also targets an NPC present. */
  say(token: SessionToken, gameId: GameId, message: unknown, client?: ClientContext): StreamEntry {
    const { session } = this.sessions.get(token);
    return this.#game(gameId).say(session.sessionId, message, client);
  }

  act(token: SessionToken, gameId: GameId, action: unknown): ActionResult {
    const { session } = this.sessions.get(token);
    return this.#game(gameId).perform({ kind: 'participant', sessionId: session.sessionId }, action);
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
    return this.#game(gameId).perform({ kind: 'npc', npcId }, action);
  }

  npcSay(gameId: GameId, npcId: NpcId, text: unknown): StreamEntry {
    return this.#game(gameId).npcSay(npcId, text);
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
    return this.#game(gameId, { allowEnded: true }).npcStatus(npcId);
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
    let n = 0;
    for (const { game } of this.#games.values()) if (game.status === 'running') n += 1;
    return n;
  }

  /** Stops the outbox's retry timers and closes its store; undelivered calls stay in a file store. */
  close(): void {
    this.outbox.close();
  }

  #entry(gameId: GameId) {
    const entry = typeof gameId === 'string' ? this.#games.get(gameId) : undefined;
    if (!entry) throw new EngineError('UNKNOWN_GAME', `No game "${String(gameId)}" is running here.`);
    return entry;
  }

  #game(gameId: GameId, options: { allowEnded?: boolean } = {}): Game {
    const { game } = this.#entry(gameId);
    if (game.status === 'ended' && !options.allowEnded) throw new EngineError('GAME_ENDED', 'This game has ended; start or join another.');
    return game;
  }
}
