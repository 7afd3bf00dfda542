import type { GameEngine } from '../engine/engine.js';
import type { ParticipantMessage } from '../engine/game.js';
import type { NpcHost, RoomMessageEvent } from './runtime.js';

/**
 * The engine as seen by the NPC runtime. Create it first, pass `publish` to the engine as
 * `onParticipantMessage` and `publishEnded` as `onGameEnded`, then `attach` the engine.
 */
export class EngineNpcHost implements NpcHost {
  private readonly listeners = new Set<(event: RoomMessageEvent) => void>();
  private readonly endListeners = new Set<(gameId: string) => void>();
  private engine?: GameEngine;

  readonly publish = (message: ParticipantMessage): void => {
    for (const listener of this.listeners) listener(message);
  };

  /** Pass to the engine as `onGameEnded`. */
  readonly publishEnded = (gameId: string): void => {
    for (const listener of this.endListeners) listener(gameId);
  };

  onGameEnded(listener: (gameId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  attach(engine: GameEngine): this {
    this.engine = engine;
    return this;
  }

  onRoomMessage(listener: (event: RoomMessageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  npcsIn(gameId: string, roomId: string) {
    return this.attached().npcsIn(gameId, roomId);
  }

  view(gameId: string, npcId: string) {
    return this.attached().npcView(gameId, npcId);
  }

  act(gameId: string, npcId: string, action: Parameters<NpcHost['act']>[2]) {
    return this.attached().proposeNpcAction(gameId, npcId, action);
  }

  say(gameId: string, npcId: string, text: string): void {
    this.attached().npcSay(gameId, npcId, text);
  }

  private attached(): GameEngine {
    if (!this.engine) throw new Error('EngineNpcHost used before attach(engine)');
    return this.engine;
  }
}
