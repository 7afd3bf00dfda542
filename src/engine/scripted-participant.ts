/**
 * A scripted participant (bot): a client of the engine like any other, holding an account or an
 * anonymous session and calling the same methods with its token. Only the session's controller
 * ("script") marks it, and only the engine can see that.
 */
import type { GameEngine } from './engine.js';
import type { ActionResult, ClientContext, GameId, RoomId, SessionToken, StreamEntry } from './types.js';

export class ScriptedParticipant {
  private constructor(
    private readonly engine: GameEngine,
    readonly token: SessionToken,
    readonly displayName: string,
  ) {}

  static anonymous(engine: GameEngine, displayName?: string): ScriptedParticipant {
    const opened = engine.sessions.openAnonymous({ controller: 'script', ...(displayName ? { displayName } : {}) });
    return new ScriptedParticipant(engine, opened.token, opened.displayName);
  }

  static async withAccount(engine: GameEngine, username: string, password: string): Promise<ScriptedParticipant> {
    const opened = await engine.sessions.login(username, password, { controller: 'script' });
    return new ScriptedParticipant(engine, opened.token, opened.displayName);
  }

  join(gameId: GameId): RoomId {
    return this.engine.join(this.token, gameId).roomId;
  }

  say(gameId: GameId, text: string, client?: ClientContext): StreamEntry {
    return this.engine.say(this.token, gameId, { text }, client);
  }

  act(gameId: GameId, action: unknown): ActionResult {
    return this.engine.act(this.token, gameId, action);
  }

  leave(gameId: GameId): void {
    this.engine.leave(this.token, gameId);
  }
}
