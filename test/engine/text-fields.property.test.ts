import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isText, nastyText as nasty } from '../helpers/text.js';
import { EngineClient } from '../../src/engine/http/client.js';
import { startEngineServer } from './support/engine-server.js';

describe('every text field of the engine, with arbitrary strings', () => {
  let server: Awaited<ReturnType<typeof startEngineServer>>;
  beforeAll(async () => (server = await startEngineServer({ rateLimit: { max: 10_000, timeWindowMs: 1000 } })));
  afterAll(async () => server.close());

  it('never answers 5xx to a say or a display name, refuses what is not text with 400, and posts a line exactly as sent', async () => {
    const ann = await EngineClient.anonymous(server.url);
    const gameId = await ann.createGame();
    await ann.join(gameId);
    let posted = 0;
    await fc.assert(
      fc.asyncProperty(nasty, async (text) => {
        const response = await fetch(`${server.url}/v1/games/${gameId}/say`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ann.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
        });
        expect(response.status).toBeLessThan(500);
        if (!isText(text)) expect(response.status).toBe(400);
        if (response.status === 201) {
          const { entries } = await ann.feed(gameId);
          expect(entries.at(-1)?.entry).toMatchObject({ kind: 'say', text });
          posted++;
        }
        const session = await fetch(`${server.url}/v1/sessions/anonymous`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ displayName: text }) });
        expect(session.status).toBeLessThan(500);
        if (!isText(text)) expect(session.status).toBe(400);
      }),
      { numRuns: 60, seed: 15 },
    );
    expect(posted).toBeGreaterThan(5);
  }, 120_000);
});
