import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineClient, EngineClientError } from '../../src/engine/http/client.js';
import { startEngineServer } from './support/engine-server.js';

describe('per-session limits on saying and acting', () => {
  let server: Awaited<ReturnType<typeof startEngineServer>>;
  beforeAll(async () => {
    server = await startEngineServer({ rateLimit: { max: 5, timeWindowMs: 60_000 } });
  });
  afterAll(() => server?.close());

  it('answers 429 RATE_LIMITED to a flooding bot while other sessions keep playing', async () => {
    const bot = await EngineClient.anonymous(server.url, { displayName: 'Flood', controller: 'script' });
    const person = await EngineClient.anonymous(server.url, { displayName: 'Ada' });
    const gameId = await bot.createGame();
    await bot.join(gameId);
    await person.join(gameId);
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => bot.say(gameId, `spam ${i}`).then(() => 'ok', (e: unknown) => e)));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5);
    for (const refused of outcomes.filter((o) => o !== 'ok')) {
      expect(refused).toBeInstanceOf(EngineClientError);
      expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    }
    expect((await person.say(gameId, 'I can still talk')).text).toBe('I can still talk');
    expect((await person.act(gameId, { type: 'look' })).ok).toBe(true);
  });
});
