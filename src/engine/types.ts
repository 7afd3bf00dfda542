/**
 * Glossary of the engine (Escape.GamesFor.Me). Every engine file uses these words in these senses.
 *
 * - game definition: the authored JSON file of a game (rooms, exits, doors, items, puzzles, the
 *   NPC roster); validated once when loaded (`game-definition/`).
 * - game: one running instance of a definition (`GameId`), held in memory by the engine.
 * - room: a node of the game's location graph (`RoomId`); each has one ordered text stream.
 * - exit: a directed edge from a room to a neighbour, optionally through a door.
 * - door: a shared barrier between rooms; locked doors open with a key item or a solved puzzle.
 *   A hidden door (a secret passage) is not even listed until it opens.
 * - puzzle: something solved by an answer (a safe's code, a riddle); solving it may open doors and
 *   reveal hidden items. Its answer is a game secret.
 * - secret: a code, a hidden item's location, or a solution; registered with the memory service
 *   at game start so it can never leave its game as a social memory.
 * - npc: a canonical character from the name registry (`NpcId`). A game's roster holds at most 10.
 * - session: a credential held by a client: an account session (after login) or an anonymous one.
 *   Every session also has a controller (human or script) that only the engine knows.
 * - participant: a session that has joined a game; sits in exactly one room of that game.
 *   A scripted participant (bot) is a participant whose controller is a script; it uses the same API.
 * - actor: whoever performs an action: a participant or an NPC. Both are validated the same way.
 * - physical failure: an action the world does not allow (a locked door); returned, never thrown.
 * - stream entry: one line of a room's text stream, numbered by `seq`, seen identically by every
 *   participant present.
 * - targeted: a message addressed to an NPC (`@First` or an explicit target); emphasis only.
 * - suspension: the state of a room's NPCs while no human is in the room: no outbound call for
 *   them leaves the engine; they resume, told how long they were away, when a human returns.
 * - boundary event: the only shape that leaves the engine for the memory service (made by the
 *   anonymization proxy, `src/boundary/events.ts`).
 */

export type GameId = string;
export type RoomId = string;
export type NpcId = string;
export type ItemId = string;
export type DoorId = string;
export type PuzzleId = string;
/** Opaque, random; what a client presents. Never leaves the engine. */
export type SessionToken = string;
/** Internal, random; identifies a session inside the engine. Never leaves the engine. */
export type SessionId = string;

/** Who drives a session. Known inside the engine only; the proxy strips it. */
export type Controller = 'human' | 'script';

export type SessionKind = 'account' | 'anonymous';

export interface Session {
  readonly sessionId: SessionId;
  readonly kind: SessionKind;
  readonly controller: Controller;
  /** Set for account sessions. */
  readonly accountId?: string;
  /** Set for anonymous sessions: the random participant id minted for this session. */
  readonly anonymousParticipantId?: string;
  readonly openedAtMs: number;
}

/**
 * What a transport knows about a request. The engine accepts it so that the proxy is the one
 * place that provably strips it; none of it is stored or forwarded.
 */
export interface ClientContext {
  readonly headers?: Readonly<Record<string, string>>;
  readonly remoteAddress?: string;
  readonly userAgent?: string;
  readonly clientSentAtMs?: number;
  readonly keystrokeIntervalsMs?: readonly number[];
}

export type Speaker =
  | { readonly kind: 'participant'; readonly displayName: string }
  | { readonly kind: 'npc'; readonly npcId: NpcId; readonly displayName: string }
  | { readonly kind: 'narrator' };

export interface StreamEntry {
  /** Per room, from 1, no gaps: the total order every participant sees. */
  readonly seq: number;
  readonly roomId: RoomId;
  readonly kind: 'say' | 'event';
  readonly speaker: Speaker;
  readonly text: string;
  /** NPCs this message addresses; never affects `seq`. */
  readonly targets: readonly NpcId[];
}

/** A participant's message as the engine saw it: input to the anonymization proxy. */
export interface EngineMessageEvent {
  readonly gameId: GameId;
  readonly roomId: RoomId;
  readonly seq: number;
  readonly receivedAtMs: number;
  readonly session: Session;
  readonly text: string;
  readonly targets: readonly NpcId[];
  readonly client?: ClientContext;
}

export type PhysicalFailureCode =
  | 'NO_EXIT'
  | 'DOOR_LOCKED'
  | 'NO_KEY'
  | 'ALREADY_OPEN'
  | 'NOT_HERE'
  | 'NOT_HOLDING'
  | 'NOT_PORTABLE'
  | 'WRONG_ANSWER'
  | 'ALREADY_SOLVED'
  | 'ROOM_FULL'
  | 'ROOM_NPC_CAP'
  | 'UNKNOWN_ROOM';

export type ActionResult =
  | { readonly ok: true; readonly narration: string }
  | { readonly ok: false; readonly code: PhysicalFailureCode; readonly failure: string };

export interface NpcSuspensionRecord {
  readonly roomId: RoomId;
  readonly suspendedAtMs: number;
  readonly resumedAtMs: number;
  readonly durationMs: number;
}

/** What the NPC runtime needs to know about an NPC; engine-internal. */
export interface NpcStatus {
  readonly npcId: NpcId;
  readonly roomId: RoomId;
  /** dormant: no human has been with it yet in this game. */
  readonly state: 'dormant' | 'active' | 'suspended';
  readonly suspendedSinceMs?: number;
  readonly lastSuspension?: NpcSuspensionRecord;
  readonly holding: readonly ItemId[];
}
