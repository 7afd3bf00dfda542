/**
 * The front desk: a player asks to visit an NPC by full name. The name registry resolves it,
 * exactly; then the engine says where that NPC is. Anything that is not a canonical full name
 * is "Character not recognized": no suggestions, no nearest match (seed 000, failure mode 10).
 * The desk never moves anyone: getting to the NPC's room is still a walk through the location graph.
 */
import {
  CHARACTER_NOT_RECOGNIZED,
  CHARACTER_NOT_RECOGNIZED_MESSAGE,
  type CanonicalNpc,
  type NameQuery,
} from '../registry/name-registry.js';
import type { RegistryClient } from '../registry/registry-client.js';
import type { GameEngine } from './engine.js';
import type { GameId, RoomId } from './types.js';

export type FrontDeskAnswer =
  | {
      readonly ok: true;
      readonly npc: CanonicalNpc;
      /** Running games (or the one asked about) with this NPC on the roster, and its room there. */
      readonly whereabouts: readonly { gameId: GameId; roomId: RoomId }[];
    }
  | {
      readonly ok: false;
      readonly code: typeof CHARACTER_NOT_RECOGNIZED;
      readonly message: typeof CHARACTER_NOT_RECOGNIZED_MESSAGE;
    };

const notRecognized: FrontDeskAnswer = {
  ok: false,
  code: CHARACTER_NOT_RECOGNIZED,
  message: CHARACTER_NOT_RECOGNIZED_MESSAGE,
};

/** A full name as typed, or the three parts. Anything else cannot be a canonical name. */
function asNameQuery(request: unknown): NameQuery | undefined {
  if (typeof request === 'string') return { fullName: request };
  if (typeof request !== 'object' || request === null) return undefined;
  const r = request as Record<string, unknown>;
  if (typeof r.fullName === 'string' && Object.keys(r).length === 1) return { fullName: r.fullName };
  if (typeof r.first === 'string' && typeof r.middle === 'string' && typeof r.last === 'string' && Object.keys(r).length === 3) {
    return { first: r.first, middle: r.middle, last: r.last };
  }
  return undefined;
}

export class FrontDesk {
  constructor(
    private readonly registry: RegistryClient,
    private readonly engine: Pick<GameEngine, 'whereIs'>,
  ) {}

  async visit(request: unknown, options: { gameId?: GameId } = {}): Promise<FrontDeskAnswer> {
    const query = asNameQuery(request);
    if (!query) return notRecognized;
    const resolved = await this.registry.resolve(query);
    if (!resolved.ok) return notRecognized;
    const whereabouts = this.engine
      .whereIs(resolved.npc.npcId)
      .filter((w) => options.gameId === undefined || w.gameId === options.gameId);
    return { ok: true, npc: resolved.npc, whereabouts };
  }
}
