import type { GameEngine } from '../engine/engine.js';
import type { NpcHost, RoomMessageEvent } from './runtime.js';

/**
 * The engine as seen by the NPC runtime: what the NPCs hear (`engine.listen`) and what they may do
 * (speak, propose actions, look at their view). Made from a running engine, it listens as long as the engine runs.
 */
export class EngineNpcHost implements NpcHost {
  private readonly listeners = new Set<(event: RoomMessageEvent) => void>();
  private readonly endListeners = new Set<(gameId: string) => void>();
  constructor(private readonly engine: GameEngine) {
    engine.listen({
      onParticipantMessage: (message) => {
        for (const listener of this.listeners) listener(message);
      },
      onGameEnded: (gameId) => {
        for (const listener of this.endListeners) listener(gameId);
      },
    });
  }

  onGameEnded(listener: (gameId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  onRoomMessage(listener: (event: RoomMessageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  npcsIn(gameId: string, roomId: string) {
    return this.engine.npcsIn(gameId, roomId);
  }

  view(gameId: string, npcId: string) {
    return this.engine.npcView(gameId, npcId);
  }

  act(gameId: string, npcId: string, action: Parameters<NpcHost['act']>[2]) {
    return this.engine.proposeNpcAction(gameId, npcId, action);
  }

  say(gameId: string, npcId: string, text: string): void {
    this.engine.npcSay(gameId, npcId, text);
  }
}
