/**
 * The game definition file format (version 1). See README.md next to this file.
 * Every object is closed (`additionalProperties: false`): a misspelt field is an error, not a
 * silently ignored default.
 */
import { Type, type Static } from 'typebox';
import { ScopeId } from '../../boundary/events.js';

/** Ids of rooms, doors, items and puzzles: lower case, digits and dashes. */
export const LocalId = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' });

const Name = Type.String({ minLength: 1, maxLength: 120 });
const Prose = Type.String({ minLength: 1, maxLength: 4000 });

export const MAX_ROSTER = 10;
export const MAX_NPCS_PER_ROOM = 6;
/** Hard cap of participants (players and bots) in one room. */
export const MAX_PARTICIPANTS_PER_ROOM = 8;
/** What matchmaking aims for; the seed's "seven to eight". */
export const TARGET_PARTICIPANTS_PER_ROOM = 7;

export const Exit = Type.Object(
  {
    /** A word players type: north, south, up, "bookcase"... unique within the room. */
    direction: Type.String({ pattern: '^[a-z][a-z-]{0,31}$' }),
    to: LocalId,
    /** The door this exit passes through; both sides of a doorway name the same door. */
    door: Type.Optional(LocalId),
  },
  { additionalProperties: false },
);

export const Room = Type.Object(
  { id: LocalId, name: Name, description: Prose, exits: Type.Array(Exit, { maxItems: 16 }) },
  { additionalProperties: false },
);

export const OpensWith = Type.Union([
  Type.Object({ item: LocalId }, { additionalProperties: false }),
  Type.Object({ puzzle: LocalId }, { additionalProperties: false }),
]);

export const Door = Type.Object(
  {
    id: LocalId,
    /** As it reads in a sentence: "the iron door". */
    name: Name,
    locked: Type.Boolean(),
    /** A secret passage: not listed, and not reported as locked, until it opens. */
    hidden: Type.Optional(Type.Boolean()),
    /** Required for a locked door: the key item that unlocks it, or the puzzle that opens it. */
    opensWith: Type.Optional(OpensWith),
  },
  { additionalProperties: false },
);

export const ItemLocation = Type.Union([
  Type.Object({ room: LocalId }, { additionalProperties: false }),
  /** Inside a puzzle (a safe, a drawer): appears in the puzzle's room when it is solved. */
  Type.Object({ hiddenIn: LocalId }, { additionalProperties: false }),
]);

export const Item = Type.Object(
  {
    id: LocalId,
    name: Name,
    description: Prose,
    portable: Type.Boolean(),
    location: ItemLocation,
  },
  { additionalProperties: false },
);

export const Puzzle = Type.Object(
  {
    id: LocalId,
    name: Name,
    room: LocalId,
    /** code: digits on a dial or keypad, compared exactly; answer: words, compared ignoring case and spacing. */
    kind: Type.Union([Type.Literal('code'), Type.Literal('answer')]),
    /** What players see when they look at it. */
    prompt: Prose,
    /** The secret. Registered with the memory service as a game clue. */
    solution: Type.String({ minLength: 1, maxLength: 200 }),
    /** Told to the room when solved. Doors it opens and items it reveals say so themselves. */
    onSolved: Prose,
  },
  { additionalProperties: false },
);

export const NpcPlacement = Type.Object(
  {
    /** A registry npc id; its canonical name comes from the registry. */
    npcId: ScopeId,
    startRoom: LocalId,
    /** Who this character is in this game: voice, wants, what they know. */
    persona: Prose,
  },
  { additionalProperties: false },
);

export const GameDefinition = Type.Object(
  {
    formatVersion: Type.Literal(1),
    id: LocalId,
    title: Name,
    intro: Prose,
    startRoom: LocalId,
    /** Reaching this room is escaping. */
    escapeRoom: LocalId,
    rooms: Type.Array(Room, { minItems: 1, maxItems: 200 }),
    doors: Type.Array(Door, { maxItems: 200 }),
    items: Type.Array(Item, { maxItems: 500 }),
    puzzles: Type.Array(Puzzle, { maxItems: 200 }),
    npcs: Type.Array(NpcPlacement, { maxItems: MAX_ROSTER }),
    /** Further solutions worth protecting that the structure does not already reveal. */
    extraSecrets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
  },
  { additionalProperties: false, $id: 'GameDefinition' },
);

export type GameDefinition = Static<typeof GameDefinition>;
export type RoomDefinition = Static<typeof Room>;
export type ExitDefinition = Static<typeof Exit>;
export type DoorDefinition = Static<typeof Door>;
export type ItemDefinition = Static<typeof Item>;
export type PuzzleDefinition = Static<typeof Puzzle>;
export type NpcPlacement = Static<typeof NpcPlacement>;
