/**
 * A synthetic player on the engine's public API: an account (or an anonymous session) that
 * joins games and talks to NPCs exactly as a person at the web page would. The only extra is a
 * stopwatch: `ask` times the HTTP request that posts the line plus the wait for the NPC's reply
 * on the room's WebSocket stream (no polling interval in the measurement).
 */
import { EngineClient, type StreamItem } from '../engine/http/client.js';
import type { GameId, StreamEntry } from '../engine/types.js';

export interface Exchange {
  sent: string;
  reply: string | undefined;
  latencyMs: number;
  /** Sequence number of the line sent, in its room. */
  seq: number;
}

export class Player {
  private constructor(
    readonly client: EngineClient,
    readonly label: string,
  ) {}

  /** A fresh account (sign up, sign in); `label` is only for reports. */
  static async account(engineUrl: string, username: string, label = username): Promise<Player> {
    const password = `pw-${username}-eval-only`;
    await EngineClient.signUp(engineUrl, username, password);
    return new Player(await EngineClient.signIn(engineUrl, username, password), label);
  }

  static async anonymous(engineUrl: string, displayName: string, controller: 'human' | 'script' = 'human'): Promise<Player> {
    return new Player(await EngineClient.anonymous(engineUrl, { displayName, controller }), displayName);
  }

  /** Creates a game from `definition` (the sample game when undefined) and joins it. */
  async newGame(definition?: unknown): Promise<GameId> {
    const gameId = await this.client.createGame(definition);
    await this.client.join(gameId);
    return gameId;
  }

  /**
   * Says `text` in the game and waits for `npcName`'s next line after it (or `timeoutMs`).
   * Latency: from just before the HTTP request to the arrival of the reply on the stream.
   */
  async ask(gameId: GameId, text: string, npcName: string, timeoutMs = 10_000): Promise<Exchange> {
    const seen: StreamEntry[] = [];
    let wake: () => void = () => {};
    const stream = this.client.stream(gameId, (item: StreamItem) => {
      seen.push(item.entry);
      wake();
    });
    try {
      await stream.ready;
      const started = performance.now();
      const said = await this.client.say(gameId, text);
      const deadline = started + timeoutMs;
      for (;;) {
        const reply = seen.find((e) => e.roomId === said.roomId && e.seq > said.seq && e.speaker.kind === 'npc' && e.speaker.displayName === npcName);
        if (reply) return { sent: text, reply: reply.text, latencyMs: round(performance.now() - started), seq: said.seq };
        const left = deadline - performance.now();
        if (left <= 0) return { sent: text, reply: undefined, latencyMs: round(timeoutMs), seq: said.seq };
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      stream.close();
    }
  }

  /** Says something without waiting for an answer. */
  async say(gameId: GameId, text: string): Promise<number> {
    return (await this.client.say(gameId, text)).seq;
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
