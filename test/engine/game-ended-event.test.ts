import { describe, expect, it } from 'vitest';
import { makeEngine, sample } from './support/engine-fixture.js';

describe('the end of a game, as the engine announces it', () => {
  it('tells onGameEnded once per game, whether ended at once or through the queue', async () => {
    const ended: string[] = [];
    const { engine } = makeEngine({ onGameEnded: (gameId) => ended.push(gameId) });
    const [a, b] = [await engine.createGame(sample), await engine.createGame(sample)];
    engine.endGame(a);
    engine.endGame(a);
    await engine.endGameNow(b, 100);
    await engine.endGameNow(b, 100);
    expect(ended).toEqual([a, b]);
    engine.close();
  });
});
