/**
 * The room view the web page draws: who is here, the exits, the items, the open puzzles, the
 * NPCs (with their state) and what the player carries. The engine's API answers a room as one
 * description sentence; this module turns it into lists the page can make buttons of.
 *
 * Everything here is read from the engine's public methods and from what the engine's own routes
 * answered (observed by hooks in plugin.ts); nothing is written to the engine, and no secret
 * (a puzzle's solution, a hidden item's place) is kept: `PublicCatalog` has no field for one.
 */
import type { GameEngine } from '../engine/engine.js';
import type { GameDefinition } from '../engine/game-definition/index.js';
import type { RegistryClient } from '../registry/registry-client.js';
import type { GameId, SessionToken } from '../engine/types.js';

/** The parts of a game definition a player may see: ids and names, never solutions. */
export interface PublicCatalog {
  title: string;
  intro: string;
  rooms: { id: string; name: string }[];
  items: { id: string; name: string }[];
  puzzles: { id: string; room: string; name: string; prompt: string; kind: string }[];
  npcs: string[];
}

export function publicCatalog(definition: GameDefinition): PublicCatalog {
  return {
    title: definition.title,
    intro: definition.intro ?? '',
    rooms: definition.rooms.map((r) => ({ id: r.id, name: r.name })),
    items: definition.items.map((i) => ({ id: i.id, name: i.name })),
    puzzles: definition.puzzles.map((p) => ({ id: p.id, room: p.room, name: p.name, prompt: p.prompt, kind: p.kind })),
    npcs: definition.npcs.map((n) => n.npcId),
  };
}

export interface RoomView {
  gameId: GameId;
  title: string;
  intro: string;
  roomId: string;
  roomName: string;
  description: string;
  exits: string[];
  items: { id: string; name: string }[];
  puzzles: { id: string; name: string; prompt: string; kind: string }[];
  present: { displayName: string; you: boolean }[];
  npcs: { npcId: string; name: string; state: 'dormant' | 'active' | 'suspended' }[];
  /** Every NPC of the game's roster: where it is and whether it is suspended. */
  roster: { npcId: string; name: string; roomName: string; state: 'dormant' | 'active' | 'suspended'; suspendedForMs?: number }[];
  carrying: { id: string; name: string }[];
}

/** What the web layer remembers per game, from the engine's answers. Lost on restart, like the games. */
export class RoomViews {
  readonly #catalogs = new Map<GameId, PublicCatalog>();
  readonly #members = new Map<GameId, Set<SessionToken>>();
  readonly #carrying = new Map<string, Set<string>>();
  readonly #names = new Map<string, string>();

  constructor(
    private readonly engine: GameEngine,
    private readonly registry: RegistryClient,
  ) {}

  created(gameId: GameId, definition: GameDefinition): void {
    this.#catalogs.set(gameId, publicCatalog(definition));
  }

  joined(token: SessionToken, gameId: GameId): void {
    const set = this.#members.get(gameId) ?? new Set();
    set.add(token);
    this.#members.set(gameId, set);
  }

  left(token: SessionToken, gameId: GameId): void {
    this.#members.get(gameId)?.delete(token);
    this.#carrying.delete(`${token}\0${gameId}`);
  }

  signedOut(token: SessionToken): void {
    for (const gameId of this.#members.keys()) this.left(token, gameId);
  }

  took(token: SessionToken, gameId: GameId, itemId: string): void {
    const key = `${token}\0${gameId}`;
    this.#carrying.set(key, (this.#carrying.get(key) ?? new Set()).add(itemId));
  }

  dropped(token: SessionToken, gameId: GameId, itemId: string): void {
    this.#carrying.get(`${token}\0${gameId}`)?.delete(itemId);
  }

  async view(token: SessionToken, gameId: GameId): Promise<RoomView> {
    const { displayName } = this.engine.sessions.get(token);
    const roomId = this.engine.whereAmI(token, gameId);
    const look = this.engine.act(token, gameId, { type: 'look' });
    const description = look.ok ? look.narration : '';
    const catalog = this.#catalogs.get(gameId);
    const roomName = (id: string) => catalog?.rooms.find((r) => r.id === id)?.name ?? id;

    const exitsText = /Exits: ([^.]*)\.$/.exec(description)?.[1] ?? '';
    const exits = exitsText === 'none' ? [] : exitsText.split(', ').filter(Boolean);
    const seen = /You see (.*?)\.(?: Here: | Exits: )/.exec(description)?.[1] ?? '';
    const items = (catalog?.items ?? []).filter((i) => seen.includes(i.name));
    const puzzles = (catalog?.puzzles ?? []).filter((p) => p.room === roomId && description.includes(p.prompt)).map(({ room: _room, ...p }) => p);

    const present: RoomView['present'] = [];
    for (const member of this.#members.get(gameId) ?? []) {
      try {
        if (this.engine.whereAmI(member, gameId) !== roomId) continue;
        const name = member === token ? displayName : this.engine.sessions.get(member).displayName;
        present.push({ displayName: name, you: member === token });
      } catch {
        this.#members.get(gameId)?.delete(member); // signed out or left outside the API
      }
    }
    if (!present.some((p) => p.you)) present.unshift({ displayName, you: true });

    const roster: RoomView['roster'] = [];
    for (const npcId of catalog?.npcs ?? []) {
      const where = this.engine.whereIs(npcId).find((w) => w.gameId === gameId);
      if (!where) continue;
      const status = this.engine.npcStatus(gameId, npcId);
      roster.push({
        npcId,
        name: await this.#nameOf(npcId),
        roomName: roomName(where.roomId),
        state: status.state,
        ...(status.state === 'suspended' && status.suspendedSinceMs !== undefined ? { suspendedForMs: this.engine.clock.now() - status.suspendedSinceMs } : {}),
      });
    }
    const npcs = roster
      .filter((n) => this.engine.whereIs(n.npcId).some((w) => w.gameId === gameId && w.roomId === roomId))
      .map(({ npcId, name, state }) => ({ npcId, name, state }));

    const held = this.#carrying.get(`${token}\0${gameId}`) ?? new Set<string>();
    const carrying = (catalog?.items ?? []).filter((i) => held.has(i.id));
    return {
      gameId,
      title: catalog?.title ?? 'A game',
      intro: catalog?.intro ?? '',
      roomId,
      roomName: roomName(roomId),
      description,
      exits,
      items,
      puzzles,
      present,
      npcs,
      roster,
      carrying,
    };
  }

  async #nameOf(npcId: string): Promise<string> {
    let name = this.#names.get(npcId);
    if (name === undefined) {
      const npc = await this.registry.getNpc(npcId).catch(() => undefined);
      name = npc?.fullName ?? npcId;
      this.#names.set(npcId, name);
    }
    return name;
  }
}
