/**
 * Loading a game definition: the schema first (shape, types, closed objects), then the semantic
 * checks a schema cannot express (references between ids, caps per room). Every problem names
 * the field by JSON pointer so an author can go straight to it.
 */
import { readFile } from 'node:fs/promises';
import { Compile } from 'typebox/compile';
import { EngineError } from '../errors.js';
import { GameDefinition, MAX_NPCS_PER_ROOM } from './schema.js';

export interface DefinitionProblem {
  /** JSON pointer into the definition, e.g. `/rooms/2/exits/0/to`. */
  readonly path: string;
  readonly message: string;
}

export class GameDefinitionError extends EngineError {
  constructor(
    readonly problems: readonly DefinitionProblem[],
    options?: { cause?: unknown },
  ) {
    super(
      'INVALID_GAME_DEFINITION',
      `The game definition is invalid: ${problems
        .slice(0, 10)
        .map((p) => `${p.path || '/'}: ${p.message}`)
        .join('; ')}`,
      { ...options, details: problems },
    );
    this.name = 'GameDefinitionError';
  }
}

const validator = Compile(GameDefinition);

export const SAMPLE_GAME_FILE = new URL('../games/sample/game.json', import.meta.url);

/** Validates a parsed definition; throws `GameDefinitionError` listing every problem found. */
export function parseGameDefinition(json: unknown): GameDefinition {
  if (!validator.Check(json)) {
    // Union branches each report; keep one message per pointer and keyword, in document order.
    const seen = new Set<string>();
    const problems: DefinitionProblem[] = [];
    for (const e of validator.Errors(json)) {
      const key = `${e.instancePath} ${e.message}`;
      if (seen.has(key) || e.keyword === 'boolean') continue;
      seen.add(key);
      problems.push({ path: e.instancePath, message: e.message });
    }
    throw new GameDefinitionError(problems);
  }
  const problems = semanticProblems(json);
  if (problems.length > 0) throw new GameDefinitionError(problems);
  return json;
}

export async function loadGameDefinition(file: string | URL): Promise<GameDefinition> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    throw new GameDefinitionError([{ path: '', message: 'is not readable JSON' }], { cause });
  }
  return parseGameDefinition(json);
}

export const loadSampleGame = () => loadGameDefinition(SAMPLE_GAME_FILE);

function semanticProblems(def: GameDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const bad = (path: string, message: string) => problems.push({ path, message });

  const idsOf = <T>(list: readonly T[], key: (t: T) => string, base: string, what: string) => {
    const ids = new Set<string>();
    list.forEach((x, i) => {
      const id = key(x);
      if (ids.has(id)) bad(`${base}/${i}/${base === '/npcs' ? 'npcId' : 'id'}`, `duplicate ${what} id "${id}"`);
      ids.add(id);
    });
    return ids;
  };
  const rooms = idsOf(def.rooms, (r) => r.id, '/rooms', 'room');
  const doors = idsOf(def.doors, (d) => d.id, '/doors', 'door');
  idsOf(def.items, (i) => i.id, '/items', 'item');
  const puzzles = idsOf(def.puzzles, (p) => p.id, '/puzzles', 'puzzle');
  idsOf(def.npcs, (n) => n.npcId, '/npcs', 'npc');

  if (!rooms.has(def.startRoom)) bad('/startRoom', `unknown room "${def.startRoom}"`);
  if (!rooms.has(def.escapeRoom)) bad('/escapeRoom', `unknown room "${def.escapeRoom}"`);

  const doorsUsed = new Set<string>();
  def.rooms.forEach((room, r) => {
    const directions = new Set<string>();
    room.exits.forEach((exit, x) => {
      const at = `/rooms/${r}/exits/${x}`;
      if (directions.has(exit.direction)) bad(`${at}/direction`, `duplicate direction "${exit.direction}" in this room`);
      directions.add(exit.direction);
      if (!rooms.has(exit.to)) bad(`${at}/to`, `exit to unknown room "${exit.to}"`);
      if (exit.to === room.id) bad(`${at}/to`, 'an exit must lead to another room');
      if (exit.door !== undefined) {
        if (!doors.has(exit.door)) bad(`${at}/door`, `unknown door "${exit.door}"`);
        doorsUsed.add(exit.door);
      }
    });
  });

  const itemById = new Map(def.items.map((i) => [i.id, i]));
  def.doors.forEach((door, d) => {
    const at = `/doors/${d}`;
    if (!doorsUsed.has(door.id)) bad(at, `door "${door.id}" is on no exit`);
    if (door.locked && door.opensWith === undefined) bad(`${at}/opensWith`, 'a locked door needs a key item or a puzzle that opens it');
    if (door.hidden === true && !door.locked) bad(`${at}/hidden`, 'a hidden door must start locked, or it is not hidden');
    if (door.opensWith && 'item' in door.opensWith) {
      const key = itemById.get(door.opensWith.item);
      if (!key) bad(`${at}/opensWith/item`, `unknown item "${door.opensWith.item}"`);
      else if (!key.portable) bad(`${at}/opensWith/item`, `the key "${key.id}" must be portable`);
    }
    if (door.opensWith && 'puzzle' in door.opensWith && !puzzles.has(door.opensWith.puzzle)) {
      bad(`${at}/opensWith/puzzle`, `unknown puzzle "${door.opensWith.puzzle}"`);
    }
  });

  def.items.forEach((item, i) => {
    const loc = item.location;
    if ('room' in loc && !rooms.has(loc.room)) bad(`/items/${i}/location/room`, `unknown room "${loc.room}"`);
    if ('hiddenIn' in loc && !puzzles.has(loc.hiddenIn)) bad(`/items/${i}/location/hiddenIn`, `unknown puzzle "${loc.hiddenIn}"`);
  });

  def.puzzles.forEach((p, i) => {
    if (!rooms.has(p.room)) bad(`/puzzles/${i}/room`, `unknown room "${p.room}"`);
    if (p.kind === 'code' && !/^[0-9]{1,32}$/.test(p.solution)) bad(`/puzzles/${i}/solution`, 'a code is 1-32 digits');
  });

  const perRoom = new Map<string, number>();
  def.npcs.forEach((npc, n) => {
    if (!rooms.has(npc.startRoom)) {
      bad(`/npcs/${n}/startRoom`, `NPC start room "${npc.startRoom}" is unknown`);
      return;
    }
    const count = (perRoom.get(npc.startRoom) ?? 0) + 1;
    perRoom.set(npc.startRoom, count);
    if (count === MAX_NPCS_PER_ROOM + 1) {
      bad(`/npcs/${n}/startRoom`, `more than ${MAX_NPCS_PER_ROOM} NPCs start in room "${npc.startRoom}"`);
    }
  });

  if (rooms.has(def.startRoom) && rooms.has(def.escapeRoom) && !reachable(def, def.startRoom).has(def.escapeRoom)) {
    bad('/escapeRoom', `no chain of exits leads from "${def.startRoom}" to "${def.escapeRoom}"`);
  }
  return problems;
}

/** Rooms reachable through any exit, locked or not: a game that cannot be won is a typo. */
function reachable(def: GameDefinition, from: string): Set<string> {
  const exits = new Map(def.rooms.map((r) => [r.id, r.exits.map((e) => e.to)]));
  const seen = new Set([from]);
  const queue = [from];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const to of exits.get(next) ?? []) {
      if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return seen;
}
