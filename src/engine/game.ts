/**
 * One running game: the authoritative world (rooms, doors, items, puzzles, who is where), the
 * ordered text stream of each room, occupancy and suspension. Players and NPCs act through the
 * same validation (`perform`), so an NPC can no more walk through a locked door than a player.
 *
 * Everything here is synchronous: a room's sequence number is assigned in the same tick the
 * message is accepted, which is what makes the order total and the same for everyone.
 */
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { MAX_TEXT_LENGTH, ScopeId } from '../boundary/events.js';
import type { CanonicalNpc } from '../registry/name-registry.js';
import type { AnonymizationProxy } from './anonymization-proxy.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import {
  LocalId,
  MAX_NPCS_PER_ROOM,
  MAX_PARTICIPANTS_PER_ROOM,
  MAX_ROSTER,
  type DoorDefinition,
  type ExitDefinition,
  type GameDefinition,
  type ItemDefinition,
  type PuzzleDefinition,
  type RoomDefinition,
} from './game-definition/schema.js';
import type { BoundaryEvent } from '../boundary/events.js';
import type { FlushWorkingMemoryRequest, GameSecret } from './memory-port.js';
import type {
  ActionResult,
  ClientContext,
  GameId,
  NpcId,
  NpcStatus,
  NpcSuspensionRecord,
  PhysicalFailureCode,
  RoomId,
  Session,
  SessionId,
  StreamEntry,
} from './types.js';

// ---- input shapes, validated once here ------------------------------------------------------

/** No control characters but tab and line breaks: the rest carry nothing a reader needs. */
const PrintableText = Type.String({
  minLength: 1,
  maxLength: MAX_TEXT_LENGTH,
  // Not blank (the lookahead), and no control character anywhere.
  pattern: '^(?=[\\s\\S]*\\S)[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$',
});

export const SayMessage = Type.Object(
  { text: PrintableText, target: Type.Optional(ScopeId) },
  { additionalProperties: false },
);
export type SayMessage = Static<typeof SayMessage>;

const Direction = Type.String({ pattern: '^[a-z][a-z-]{0,31}$' });

export const Action = Type.Union([
  Type.Object({ type: Type.Literal('move'), direction: Direction }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('move'), to: LocalId }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('take'), item: LocalId }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('drop'), item: LocalId }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('unlock'), direction: Direction }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('solve'), puzzle: LocalId, answer: Type.String({ minLength: 1, maxLength: 200 }) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('look') }, { additionalProperties: false }),
]);
export type Action = Static<typeof Action>;

const sayValidator = Compile(SayMessage);
const actionValidator = Compile(Action);

function firstError(validator: { Errors(v: unknown): { instancePath: string; message: string }[] }, value: unknown) {
  const e = validator.Errors(value)[0];
  return e ? `${e.instancePath || '/'} ${e.message}` : 'invalid';
}

// ---- state ----------------------------------------------------------------------------------

export type Actor = { readonly kind: 'participant'; readonly sessionId: SessionId } | { readonly kind: 'npc'; readonly npcId: NpcId };

type ItemPlace =
  | { readonly room: RoomId }
  | { readonly hiddenIn: string }
  | { readonly heldBy: Actor };

interface RoomState {
  readonly def: RoomDefinition;
  seq: number;
  readonly participants: Set<SessionId>;
  readonly npcs: Set<NpcId>;
  /** The latest spoken lines, with speakers as the memory service knows them (for NPC turns). */
  readonly recent: SpokenLine[];
}

/** One spoken line of a room, speaker anonymized: what an NPC's turn may see of the room. */
interface SpokenLine {
  readonly seq: number;
  readonly speaker: { readonly participantId: string } | { readonly npcId: NpcId };
  readonly text: string;
  readonly targets: readonly NpcId[];
  readonly atMs: number;
}

/** Lines kept per room for NPC turns. */
const RECENT_LINES = 16;

/** A participant's message, anonymized by the proxy: what the NPC runtime reacts to. */
export interface ParticipantMessage {
  readonly gameId: GameId;
  readonly roomId: RoomId;
  readonly seq: number;
  readonly speaker: { readonly participantId: string; readonly anonymous: boolean };
  readonly text: string;
  readonly targets: readonly NpcId[];
}

/** What an awake NPC sees at its turn: the room, who is present and what was said, anonymized. */
export interface NpcView {
  readonly roomId: RoomId;
  readonly firstName: string;
  readonly participants: { participantId: string; anonymous: boolean }[];
  readonly messages: { seq: number; speaker: { participantId: string } | { npcId: string }; text: string; targeted: boolean; ts: number }[];
  /** The authoritative state the NPC may rely on, versioned. */
  readonly state: { version: number; facts: Record<string, string | boolean> };
  /** Puzzle answers, and whether the game state lets them be said yet. */
  readonly secrets: { answer: string; revealed: boolean }[];
  /**
   * Set when the NPC was suspended (its room empty of humans) for at least a minute and has not
   * spoken since it woke: how long it was, for the NPC to acknowledge the time that passed.
   */
  readonly resumedAfterMs?: number;
}

/** Shorter suspensions (someone stepping out and back) are not worth remarking on. */
const NOTABLE_SUSPENSION_MS = 60_000;

interface ParticipantState {
  readonly session: Session;
  readonly displayName: string;
  roomId: RoomId;
  readonly received: StreamEntry[];
  readonly listeners: Set<StreamListener>;
}

/** Receives each stream entry a participant sees, with its position in that participant's feed (from 1). */
export type StreamListener = (entry: StreamEntry, cursor: number) => void;

/** Where a game's calls to the memory service go: the engine's outbox, keyed by this game. */
export interface GameOutbound {
  ingest(roomId: RoomId, events: readonly BoundaryEvent[]): void;
  flushWorkingMemory(request: FlushWorkingMemoryRequest): void;
}

interface NpcState {
  readonly names: CanonicalNpc;
  readonly persona: string;
  roomId: RoomId;
  state: 'dormant' | 'active' | 'suspended';
  suspendedSinceMs?: number;
  lastSuspension?: NpcSuspensionRecord;
  /** Woke from a suspension and has not spoken since. */
  resumeUnspoken?: boolean;
}

export interface NpcResumedEvent extends NpcSuspensionRecord {
  readonly gameId: GameId;
  readonly npcId: NpcId;
}

export interface GameContext {
  readonly clock: Clock;
  readonly proxy: AnonymizationProxy;
  readonly outbound: GameOutbound;
  readonly onNpcResumed: (event: NpcResumedEvent) => void;
  readonly onListenerError: (error: unknown) => void;
  /** Every participant message, after it is sequenced (the NPC runtime's trigger). */
  readonly onParticipantMessage?: (message: ParticipantMessage) => void;
  /**
   * Runs the delivery of new entries to listeners (Default: at once). The engine defers it until
   * the entry is kept in its database, so nobody sees a line that a crash could take back.
   */
  readonly publish?: (deliver: () => void) => void;
}

const fail = (code: PhysicalFailureCode, failure: string): ActionResult => ({ ok: false, code, failure });
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** Answers compare ignoring case, spaces and punctuation; codes compare exactly. */
const normalizeAnswer = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

export class Game {
  status: 'running' | 'ended' = 'running';
  readonly #rooms = new Map<RoomId, RoomState>();
  readonly #doors = new Map<string, { def: DoorDefinition; locked: boolean }>();
  readonly #items = new Map<string, { def: ItemDefinition; place: ItemPlace }>();
  readonly #puzzles = new Map<string, { def: PuzzleDefinition; solved: boolean }>();
  readonly #npcs = new Map<NpcId, NpcState>();
  readonly #participants = new Map<SessionId, ParticipantState>();
  /** Counts changes of the world (actions that happened): the state version NPCs are given. */
  #stateVersion = 0;

  constructor(
    readonly id: GameId,
    readonly definition: GameDefinition,
    roster: ReadonlyMap<NpcId, CanonicalNpc>,
    private readonly ctx: GameContext,
  ) {
    for (const def of definition.rooms) this.#rooms.set(def.id, { def, seq: 0, participants: new Set(), npcs: new Set(), recent: [] });
    for (const def of definition.doors) this.#doors.set(def.id, { def, locked: def.locked });
    for (const def of definition.items) this.#items.set(def.id, { def, place: def.location });
    for (const def of definition.puzzles) this.#puzzles.set(def.id, { def, solved: false });
    for (const placement of definition.npcs) {
      const names = roster.get(placement.npcId);
      if (!names) throw new EngineError('UNKNOWN_NPC', `NPC "${placement.npcId}" is not in the name registry.`);
      this.#placeNpc(names, placement.persona, placement.startRoom);
    }
  }

  // ---- secrets --------------------------------------------------------------------------------

  /** Codes, solutions and where hidden items and keys are: what must never leave this game. */
  secrets(): GameSecret[] {
    const secrets: GameSecret[] = [];
    const puzzleName = new Map(this.definition.puzzles.map((p) => [p.id, p.name]));
    const roomName = new Map(this.definition.rooms.map((r) => [r.id, r.name]));
    for (const p of this.definition.puzzles) {
      secrets.push({ kind: p.kind === 'code' ? 'code' : 'solution', text: p.solution });
      secrets.push({ kind: 'solution', text: `${p.solution} solves ${p.name}` });
    }
    const keys = new Set(this.definition.doors.flatMap((d) => (d.opensWith && 'item' in d.opensWith ? [d.opensWith.item] : [])));
    for (const item of this.definition.items) {
      const loc = item.location;
      if ('hiddenIn' in loc) secrets.push({ kind: 'item_location', text: `${item.name} is in ${puzzleName.get(loc.hiddenIn)}` });
      else if (keys.has(item.id)) secrets.push({ kind: 'item_location', text: `${item.name} is in ${roomName.get(loc.room)}` });
    }
    for (const text of this.definition.extraSecrets ?? []) secrets.push({ kind: 'solution', text });
    return secrets;
  }

  // ---- participants ---------------------------------------------------------------------------

  join(session: Session, displayName: string, listener?: StreamListener): { roomId: RoomId } {
    this.#assertRunning();
    if (this.#participants.has(session.sessionId)) throw new EngineError('ALREADY_IN_GAME', 'This session is already in the game.');
    const room = this.#room(this.definition.startRoom);
    if (room.participants.size >= MAX_PARTICIPANTS_PER_ROOM) {
      throw new EngineError('ROOM_FULL', `${capitalize(room.def.name)} already holds ${MAX_PARTICIPANTS_PER_ROOM} participants; try again when someone moves on.`);
    }
    this.#participants.set(session.sessionId, { session, displayName, roomId: room.def.id, received: [], listeners: new Set(listener ? [listener] : []) });
    room.participants.add(session.sessionId);
    this.#narrate(room, `${displayName} arrives.`);
    this.#occupancyChanged(room);
    return { roomId: room.def.id };
  }

  leave(sessionId: SessionId): void {
    const p = this.#participant(sessionId);
    const room = this.#room(p.roomId);
    // What a leaving player carried stays in the world, or keys could vanish with them.
    for (const item of this.#items.values()) {
      if ('heldBy' in item.place && item.place.heldBy.kind === 'participant' && item.place.heldBy.sessionId === sessionId) {
        item.place = { room: room.def.id };
      }
    }
    room.participants.delete(sessionId);
    this.#participants.delete(sessionId);
    this.#narrate(room, `${p.displayName} leaves the game.`);
    this.#occupancyChanged(room);
  }

  /** The session through which an account plays in this game, if it does. */
  sessionOfAccount(accountId: string): SessionId | undefined {
    for (const [id, p] of this.#participants) if (p.session.accountId === accountId) return id;
    return undefined;
  }

  /**
   * An account's player coming back through a new session (signed in again, another device, an
   * engine restart): they take their place back, in the room they were in, with what they held
   * and their feed, so a reconnecting client resumes from its cursor.
   */
  rejoin(from: SessionId, session: Session, listener?: StreamListener): { roomId: RoomId } {
    this.#assertRunning();
    const p = this.#participant(from);
    if (p.session.accountId === undefined || p.session.accountId !== session.accountId) {
      throw new EngineError('NOT_IN_GAME', 'Only the same account takes a place back.');
    }
    const moved: ParticipantState = { ...p, session, listeners: new Set(listener ? [listener] : []) };
    this.#participants.delete(from);
    this.#participants.set(session.sessionId, moved);
    const room = this.#room(p.roomId);
    room.participants.delete(from);
    room.participants.add(session.sessionId);
    for (const item of this.#items.values()) {
      if ('heldBy' in item.place && item.place.heldBy.kind === 'participant' && item.place.heldBy.sessionId === from) {
        item.place = { heldBy: { kind: 'participant', sessionId: session.sessionId } };
      }
    }
    this.#occupancyChanged(room); // the new session may be driven otherwise (human or script)
    return { roomId: p.roomId };
  }

  hasParticipant(sessionId: SessionId): boolean {
    return this.#participants.has(sessionId);
  }

  feedOf(sessionId: SessionId): readonly StreamEntry[] {
    return this.#participant(sessionId).received;
  }

  /** Adds a listener to a participant's feed; returns the function that removes it. */
  subscribe(sessionId: SessionId, listener: StreamListener): () => void {
    const p = this.#participant(sessionId);
    p.listeners.add(listener);
    return () => p.listeners.delete(listener);
  }

  roomOfParticipant(sessionId: SessionId): RoomId {
    return this.#participant(sessionId).roomId;
  }

  // ---- speech ---------------------------------------------------------------------------------

  /** A participant's message: validated, sequenced, delivered, and passed to listening NPCs. */
  say(sessionId: SessionId, message: unknown, client?: ClientContext): StreamEntry {
    this.#assertRunning();
    const p = this.#participant(sessionId);
    if (!sayValidator.Check(message)) {
      throw new EngineError('INVALID_MESSAGE', `A message is { text, target? } with 1-${MAX_TEXT_LENGTH} printable characters: ${firstError(sayValidator, message)}.`);
    }
    const room = this.#room(p.roomId);
    const targets = this.#targetsOf(room, message);
    const entry = this.#append(room, { kind: 'say', speaker: { kind: 'participant', displayName: p.displayName }, text: message.text, targets });
    // Only NPCs awake in this room hear it; a room without humans sends nothing (suspension).
    const listening = [...room.npcs].filter((id) => this.#npcs.get(id)?.state === 'active');
    if (listening.length > 0) {
      this.ctx.outbound.ingest(
        room.def.id,
        this.ctx.proxy.toBoundaryEvents(
          {
            gameId: this.id,
            roomId: room.def.id,
            seq: entry.seq,
            receivedAtMs: this.ctx.clock.now(),
            session: p.session,
            text: message.text,
            targets,
            ...(client ? { client } : {}),
          },
          listening,
        ),
      );
    }
    const speaker = { participantId: this.ctx.proxy.participantIdOf(p.session), anonymous: p.session.kind === 'anonymous' };
    this.#remember(room, { seq: entry.seq, speaker: { participantId: speaker.participantId }, text: message.text, targets, atMs: this.ctx.clock.now() });
    if (listening.length > 0) {
      this.ctx.onParticipantMessage?.({ gameId: this.id, roomId: room.def.id, seq: entry.seq, speaker, text: message.text, targets });
    }
    return entry;
  }

  /** An NPC's line, as the NPC runtime produced it. Refused while the NPC is suspended. */
  npcSay(npcId: NpcId, text: unknown): StreamEntry {
    this.#assertRunning();
    const npc = this.#awakeNpc(npcId);
    if (!sayValidator.Check({ text })) throw new EngineError('INVALID_MESSAGE', `An NPC line is 1-${MAX_TEXT_LENGTH} printable characters.`);
    const room = this.#room(npc.roomId);
    const entry = this.#append(room, {
      kind: 'say',
      speaker: { kind: 'npc', npcId, displayName: npc.names.first },
      text: text as string,
      targets: [],
    });
    this.#remember(room, { seq: entry.seq, speaker: { npcId }, text: text as string, targets: [], atMs: this.ctx.clock.now() });
    delete npc.resumeUnspoken;
    return entry;
  }

  /** The NPCs of a room in roster order, and whether each is awake (a human is present). */
  npcsIn(roomId: RoomId): { npcId: NpcId; active: boolean }[] {
    return [...this.#room(roomId).npcs].map((npcId) => ({ npcId, active: this.#npcs.get(npcId)?.state === 'active' }));
  }

  /**
   * What an awake NPC may see for its turn, anonymized like everything that leaves the engine:
   * participants by their boundary ids, the room's latest lines, the authoritative state of its
   * room and what it holds, and this game's puzzle answers with whether they may be said yet.
   * Undefined for a suspended or dormant NPC: it takes no turn.
   */
  npcView(npcId: NpcId): NpcView | undefined {
    const npc = this.#npcs.get(npcId);
    if (!npc || npc.state !== 'active' || this.status !== 'running') return undefined;
    const room = this.#room(npc.roomId);
    const facts: Record<string, string | boolean> = { 'npc.room': room.def.id };
    for (const exit of room.def.exits) {
      const door = exit.door === undefined ? undefined : this.#doors.get(exit.door);
      if (door && this.#exitVisible(exit)) facts[`door.${door.def.id}`] = door.locked ? 'locked' : 'open';
    }
    for (const [id, item] of this.#items) {
      const place = item.place;
      if ('room' in place && place.room === room.def.id) facts[`item.${id}`] = 'here';
      if ('heldBy' in place && place.heldBy.kind === 'npc' && place.heldBy.npcId === npcId) facts[`holding.${id}`] = true;
    }
    for (const [id, puzzle] of this.#puzzles) facts[`puzzle.${id}`] = puzzle.solved ? 'solved' : 'unsolved';
    return {
      roomId: room.def.id,
      firstName: npc.names.first,
      participants: [...room.participants].map((id) => {
        const session = this.#participant(id).session;
        return { participantId: this.ctx.proxy.participantIdOf(session), anonymous: session.kind === 'anonymous' };
      }),
      messages: room.recent.map((line) => ({
        seq: line.seq,
        speaker: line.speaker,
        text: line.text,
        targeted: line.targets.includes(npcId),
        ts: this.ctx.proxy.coarseTimestamp(line.atMs),
      })),
      state: { version: this.#stateVersion, facts },
      secrets: [...this.#puzzles.values()].map((p) => ({ answer: p.def.solution, revealed: p.solved })),
      ...(npc.resumeUnspoken && npc.lastSuspension && npc.lastSuspension.durationMs >= NOTABLE_SUSPENSION_MS
        ? { resumedAfterMs: npc.lastSuspension.durationMs }
        : {}),
    };
  }

  #remember(room: RoomState, line: SpokenLine): void {
    room.recent.push(line);
    if (room.recent.length > RECENT_LINES) room.recent.shift();
  }

  #targetsOf(room: RoomState, message: SayMessage): NpcId[] {
    const targets = new Set<NpcId>();
    if (message.target !== undefined) {
      if (!room.npcs.has(message.target)) {
        throw new EngineError('NPC_NOT_IN_ROOM', `No NPC "${message.target}" is in ${room.def.name}; address someone who is here.`);
      }
      targets.add(message.target);
    }
    // "@Mara": the canonical first name, exactly, of an NPC in this room (the same rule as the front desk).
    for (const [, name] of message.text.matchAll(/@([^\s@,.;:!?]+)/gu)) {
      for (const id of room.npcs) if (this.#npcs.get(id)?.names.first === name) targets.add(id);
    }
    return [...targets];
  }

  // ---- actions --------------------------------------------------------------------------------

  /** Validates and performs an action for a participant or an NPC. Physical failures are returned. */
  perform(actor: Actor, action: unknown): ActionResult {
    this.#assertRunning();
    if (actor.kind === 'npc') this.#awakeNpc(actor.npcId);
    else this.#participant(actor.sessionId);
    if (!actionValidator.Check(action)) {
      throw new EngineError('INVALID_ACTION', `Actions are move, take, drop, unlock, solve or look: ${firstError(actionValidator, action)}.`);
    }
    const result = this.#performValid(actor, action);
    if (result.ok) this.#stateVersion += 1;
    return result;
  }

  #performValid(actor: Actor, action: Action): ActionResult {
    switch (action.type) {
      case 'move':
        return this.#move(actor, action);
      case 'take':
        return this.#take(actor, action.item);
      case 'drop':
        return this.#drop(actor, action.item);
      case 'unlock':
        return this.#unlock(actor, action.direction);
      case 'solve':
        return this.#solve(actor, action.puzzle, action.answer);
      case 'look':
        return { ok: true, narration: this.describe(this.#roomOf(actor)) };
    }
  }

  describe(roomId: RoomId): string {
    const room = this.#room(roomId);
    const exits = room.def.exits.filter((e) => this.#exitVisible(e)).map((e) => e.direction);
    const items = [...this.#items.values()].filter((i) => 'room' in i.place && i.place.room === roomId).map((i) => i.def.name);
    const npcs = [...room.npcs].map((id) => this.#npcs.get(id)?.names.first);
    const puzzles = [...this.#puzzles.values()].filter((p) => p.def.room === roomId && !p.solved).map((p) => p.def.prompt);
    return [
      `${capitalize(room.def.name)}. ${room.def.description}`,
      puzzles.join(' '),
      items.length ? `You see ${items.join(', ')}.` : '',
      npcs.length ? `Here: ${npcs.join(', ')}.` : '',
      `Exits: ${exits.join(', ') || 'none'}.`,
    ]
      .filter(Boolean)
      .join(' ');
  }

  #move(actor: Actor, spec: { direction: string } | { to: string }): ActionResult {
    const from = this.#room(this.#roomOf(actor));
    let exit: ExitDefinition | undefined;
    if ('to' in spec) {
      if (!this.#rooms.has(spec.to)) return fail('UNKNOWN_ROOM', `There is no place called "${spec.to}" in this building.`);
      exit = from.def.exits.find((e) => e.to === spec.to && this.#exitVisible(e));
    } else {
      exit = from.def.exits.find((e) => e.direction === spec.direction && this.#exitVisible(e));
    }
    if (!exit) return fail('NO_EXIT', `There is no way ${'to' in spec ? `to ${this.#room(spec.to).def.name}` : spec.direction} from here.`);
    const door = exit.door === undefined ? undefined : this.#doors.get(exit.door);
    if (door?.locked) return fail('DOOR_LOCKED', `${capitalize(door.def.name)} is locked.`);
    const to = this.#room(exit.to);
    const name = this.#nameOf(actor);

    if (actor.kind === 'participant') {
      if (to.participants.size >= MAX_PARTICIPANTS_PER_ROOM) return fail('ROOM_FULL', `${capitalize(to.def.name)} is too crowded to enter.`);
      const p = this.#participant(actor.sessionId);
      from.participants.delete(actor.sessionId);
      this.#narrate(from, `${name} goes ${exit.direction}.`);
      to.participants.add(actor.sessionId);
      p.roomId = to.def.id;
      this.#narrate(to, `${name} arrives from ${from.def.name}.`);
      if (to.def.id === this.definition.escapeRoom) this.#narrate(to, `${name} has escaped!`);
      // The destination first: a returning human wakes its NPCs before the origin may go quiet.
      this.#occupancyChanged(to);
      this.#occupancyChanged(from);
    } else {
      if (to.npcs.size >= MAX_NPCS_PER_ROOM) return fail('ROOM_NPC_CAP', `${capitalize(to.def.name)} is too crowded to enter.`);
      const npc = this.#npc(actor.npcId);
      // Working memory belongs to (game, room, npc): it is flushed whenever the NPC changes rooms.
      if (npc.state === 'active') {
        this.ctx.outbound.flushWorkingMemory({ gameId: this.id, roomId: from.def.id, npcIds: [actor.npcId], reason: 'npc_moved' });
      }
      from.npcs.delete(actor.npcId);
      this.#narrate(from, `${name} goes ${exit.direction}.`);
      to.npcs.add(actor.npcId);
      npc.roomId = to.def.id;
      this.#narrate(to, `${name} arrives from ${from.def.name}.`);
      if (this.#humansIn(to) === 0) {
        npc.state = 'suspended';
        npc.suspendedSinceMs = this.ctx.clock.now();
      }
    }
    return { ok: true, narration: this.describe(to.def.id) };
  }

  #take(actor: Actor, itemId: string): ActionResult {
    const item = this.#items.get(itemId);
    const here = this.#roomOf(actor);
    if (!item || !('room' in item.place) || item.place.room !== here) return fail('NOT_HERE', 'There is no such thing here.');
    if (!item.def.portable) return fail('NOT_PORTABLE', `${capitalize(item.def.name)} will not budge.`);
    item.place = { heldBy: actor };
    this.#narrate(this.#room(here), `${this.#nameOf(actor)} picks up ${item.def.name}.`);
    return { ok: true, narration: item.def.description };
  }

  #drop(actor: Actor, itemId: string): ActionResult {
    const item = this.#items.get(itemId);
    if (!item || !this.#holds(actor, itemId)) return fail('NOT_HOLDING', 'You are not carrying that.');
    const here = this.#roomOf(actor);
    item.place = { room: here };
    this.#narrate(this.#room(here), `${this.#nameOf(actor)} puts down ${item.def.name}.`);
    return { ok: true, narration: `You put down ${item.def.name}.` };
  }

  #unlock(actor: Actor, direction: string): ActionResult {
    const room = this.#room(this.#roomOf(actor));
    const exit = room.def.exits.find((e) => e.direction === direction && this.#exitVisible(e));
    const door = exit?.door === undefined ? undefined : this.#doors.get(exit.door);
    if (!door) return fail('NO_EXIT', `There is no door ${direction} from here.`);
    if (!door.locked) return fail('ALREADY_OPEN', `${capitalize(door.def.name)} is already open.`);
    const opensWith = door.def.opensWith;
    if (!opensWith || !('item' in opensWith)) return fail('NO_KEY', `${capitalize(door.def.name)} has no keyhole.`);
    if (!this.#holds(actor, opensWith.item)) return fail('NO_KEY', `You have nothing that fits ${door.def.name}.`);
    door.locked = false;
    this.#narrate(room, `${this.#nameOf(actor)} unlocks ${door.def.name}.`);
    return { ok: true, narration: `${capitalize(door.def.name)} is now open.` };
  }

  #solve(actor: Actor, puzzleId: string, answer: string): ActionResult {
    const puzzle = this.#puzzles.get(puzzleId);
    const room = this.#room(this.#roomOf(actor));
    if (!puzzle || puzzle.def.room !== room.def.id) return fail('NOT_HERE', 'There is nothing like that here.');
    if (puzzle.solved) return fail('ALREADY_SOLVED', `${capitalize(puzzle.def.name)} has already been solved.`);
    const right =
      puzzle.def.kind === 'code' ? answer.trim() === puzzle.def.solution : normalizeAnswer(answer) === normalizeAnswer(puzzle.def.solution);
    if (!right) return fail('WRONG_ANSWER', `Nothing happens at ${puzzle.def.name}.`);
    puzzle.solved = true;
    for (const door of this.#doors.values()) {
      if (door.def.opensWith && 'puzzle' in door.def.opensWith && door.def.opensWith.puzzle === puzzleId) door.locked = false;
    }
    for (const item of this.#items.values()) {
      if ('hiddenIn' in item.place && item.place.hiddenIn === puzzleId) item.place = { room: room.def.id };
    }
    this.#narrate(room, `${this.#nameOf(actor)} solves ${puzzle.def.name}. ${puzzle.def.onSolved}`);
    return { ok: true, narration: puzzle.def.onSolved };
  }

  // ---- NPCs -----------------------------------------------------------------------------------

  get rosterSize(): number {
    return this.#npcs.size;
  }

  /** Adds an NPC to the running game's roster (at most 10, at most 6 per room). */
  addNpc(names: CanonicalNpc, persona: string, roomId: RoomId): void {
    this.checkCanAddNpc(names.npcId, roomId);
    this.#placeNpc(names, persona, roomId);
    this.#occupancyChanged(this.#room(roomId));
  }

  /** Throws ROSTER_FULL, NPC_ALREADY_ON_ROSTER, UNKNOWN_ROOM or ROOM_NPC_CAP, in that order. */
  checkCanAddNpc(npcId: NpcId, roomId: RoomId): void {
    this.#assertRunning();
    if (this.#npcs.size >= MAX_ROSTER) throw new EngineError('ROSTER_FULL', `A game's roster holds at most ${MAX_ROSTER} NPCs.`);
    if (this.#npcs.has(npcId)) throw new EngineError('NPC_ALREADY_ON_ROSTER', `NPC "${npcId}" is already in this game.`);
    if (!this.#rooms.has(roomId)) throw new EngineError('UNKNOWN_ROOM', `This game has no room "${roomId}".`);
    if (this.#room(roomId).npcs.size >= MAX_NPCS_PER_ROOM) {
      throw new EngineError('ROOM_NPC_CAP', `A room holds at most ${MAX_NPCS_PER_ROOM} NPCs; place this one elsewhere.`);
    }
  }

  hasNpc(npcId: NpcId): boolean {
    return this.#npcs.has(npcId);
  }

  npcStatus(npcId: NpcId): NpcStatus {
    const npc = this.#npc(npcId);
    const holding = [...this.#items.entries()]
      .filter(([, i]) => 'heldBy' in i.place && i.place.heldBy.kind === 'npc' && i.place.heldBy.npcId === npcId)
      .map(([id]) => id);
    return {
      npcId,
      roomId: npc.roomId,
      state: npc.state,
      ...(npc.suspendedSinceMs !== undefined ? { suspendedSinceMs: npc.suspendedSinceMs } : {}),
      ...(npc.lastSuspension ? { lastSuspension: npc.lastSuspension } : {}),
      holding,
    };
  }

  npcPersona(npcId: NpcId): string {
    return this.#npc(npcId).persona;
  }

  #placeNpc(names: CanonicalNpc, persona: string, roomId: RoomId): void {
    this.#npcs.set(names.npcId, { names, persona, roomId, state: 'dormant' });
    this.#room(roomId).npcs.add(names.npcId);
  }

  /** Human count of a room; scripts do not count, so a room of bots suspends its NPCs too. */
  #humansIn(room: RoomState): number {
    let humans = 0;
    for (const id of room.participants) if (this.#participants.get(id)?.session.controller === 'human') humans += 1;
    return humans;
  }

  /** Suspends a room's NPCs when its last human leaves; wakes them when one comes back. */
  #occupancyChanged(room: RoomState): void {
    const now = this.ctx.clock.now();
    if (this.#humansIn(room) === 0) {
      const active = [...room.npcs].filter((id) => this.#npcs.get(id)?.state === 'active');
      for (const id of active) {
        const npc = this.#npc(id);
        npc.state = 'suspended';
        npc.suspendedSinceMs = now;
      }
      // The last call for these NPCs until a human returns.
      if (active.length > 0) this.ctx.outbound.flushWorkingMemory({ gameId: this.id, roomId: room.def.id, npcIds: active, reason: 'room_empty' });
      return;
    }
    for (const id of room.npcs) {
      const npc = this.#npc(id);
      if (npc.state === 'suspended' && npc.suspendedSinceMs !== undefined) {
        const record = { roomId: room.def.id, suspendedAtMs: npc.suspendedSinceMs, resumedAtMs: now, durationMs: now - npc.suspendedSinceMs };
        npc.lastSuspension = record;
        npc.resumeUnspoken = true;
        delete npc.suspendedSinceMs;
        npc.state = 'active';
        this.ctx.onNpcResumed({ gameId: this.id, npcId: id, ...record });
      } else if (npc.state === 'dormant') {
        npc.state = 'active';
      }
    }
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  end(): void {
    this.status = 'ended';
  }

  /** Room of each NPC on the roster; for the front desk. */
  whereIs(npcId: NpcId): RoomId | undefined {
    return this.#npcs.get(npcId)?.roomId;
  }

  roomSeq(roomId: RoomId): number {
    return this.#room(roomId).seq;
  }

  // ---- helpers --------------------------------------------------------------------------------

  #append(room: RoomState, fields: Omit<StreamEntry, 'seq' | 'roomId'>): StreamEntry {
    room.seq += 1;
    const entry: StreamEntry = Object.freeze({ seq: room.seq, roomId: room.def.id, ...fields });
    const present = [...room.participants].map((id) => this.#participants.get(id)).filter((p) => p !== undefined);
    // Listeners as they are now: one added later reads this entry from the feed instead.
    const deliveries = present.map((p) => ({ cursor: p.received.push(entry), listeners: [...p.listeners] }));
    const deliver = () =>
      deliveries.forEach(({ cursor, listeners }) => {
        for (const listener of listeners) {
          try {
            listener(entry, cursor);
          } catch (error) {
            this.ctx.onListenerError(error);
          }
        }
      });
    if (this.ctx.publish) this.ctx.publish(deliver);
    else deliver();
    return entry;
  }

  #narrate(room: RoomState, text: string): void {
    this.#append(room, { kind: 'event', speaker: { kind: 'narrator' }, text, targets: [] });
  }

  #exitVisible(exit: ExitDefinition): boolean {
    const door = exit.door === undefined ? undefined : this.#doors.get(exit.door);
    return !door || !door.def.hidden || !door.locked;
  }

  #holds(actor: Actor, itemId: string): boolean {
    const place = this.#items.get(itemId)?.place;
    if (!place || !('heldBy' in place)) return false;
    const h = place.heldBy;
    return actor.kind === 'npc' ? h.kind === 'npc' && h.npcId === actor.npcId : h.kind === 'participant' && h.sessionId === actor.sessionId;
  }

  #roomOf(actor: Actor): RoomId {
    return actor.kind === 'npc' ? this.#npc(actor.npcId).roomId : this.#participant(actor.sessionId).roomId;
  }

  #nameOf(actor: Actor): string {
    return actor.kind === 'npc' ? this.#npc(actor.npcId).names.first : this.#participant(actor.sessionId).displayName;
  }

  #room(id: RoomId): RoomState {
    const room = this.#rooms.get(id);
    if (!room) throw new EngineError('UNKNOWN_ROOM', `This game has no room "${id}".`);
    return room;
  }

  #participant(sessionId: SessionId): ParticipantState {
    const p = this.#participants.get(sessionId);
    if (!p) throw new EngineError('NOT_IN_GAME', 'Join the game first.');
    return p;
  }

  #npc(npcId: NpcId): NpcState {
    const npc = this.#npcs.get(npcId);
    if (!npc) throw new EngineError('UNKNOWN_NPC', `NPC "${npcId}" is not on this game's roster.`);
    return npc;
  }

  /** NPC runtimes must not act for a suspended NPC: that would be inference in an empty room. */
  #awakeNpc(npcId: NpcId): NpcState {
    const npc = this.#npc(npcId);
    if (npc.state !== 'active') {
      throw new EngineError('NPC_SUSPENDED', `${npc.names.first} is ${npc.state}: no human is in ${this.#room(npc.roomId).def.name}.`);
    }
    return npc;
  }

  #assertRunning(): void {
    if (this.status === 'ended') throw new EngineError('GAME_ENDED', 'This game has ended; start or join another.');
  }
}
