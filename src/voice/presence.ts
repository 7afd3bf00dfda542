/**
 * What voice needs to know about the game, and nothing more: which room a session is in.
 * The composition root (the engine's HTTP app) supplies it; voice imports nothing of the engine.
 */
export interface VoicePresence {
  /**
   * An opaque key of the room the session is in within this game (equal keys: same room), or
   * undefined when the token is not a session in that game. Must not throw.
   */
  roomOf(token: string, gameId: string): string | undefined;
}
