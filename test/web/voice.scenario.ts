import { describe, expect, it } from 'vitest';
import { createGame, joinGame, newPlayer, playAnonymously, type WebWorld } from './support/web.js';

/**
 * Optional voice between the players of one room: two browsers connect over WebRTC with the
 * engine's signaling relay (src/voice/); a fake microphone stands in for a real one.
 */
export function voice(ctx: { world: WebWorld }): void {
  describe('voice between players', () => {
    it('connects two players in the same room, and never appears in the text stream', async () => {
      const world = ctx.world;
      const [one, two] = [await newPlayer(world), await newPlayer(world)];
      await playAnonymously(one.page, 'Vi');
      await playAnonymously(two.page, 'Wes');
      const gameId = await createGame(one.page);
      await joinGame(two.page, gameId);
      const linesBefore = await one.page.locator('#stream li[data-cursor]').count();
      for (const p of [one.page, two.page]) await p.getByRole('button', { name: 'Turn voice on' }).click();
      for (const p of [one.page, two.page]) await p.locator('#voice-status', { hasText: 'Voice on: 1 of 1 other player connected.' }).waitFor();
      expect(await one.page.getByRole('button', { name: 'Turn voice off' }).getAttribute('aria-pressed')).toBe('true');
      expect(await one.page.locator('#stream li[data-cursor]').count()).toBe(linesBefore);
      await one.page.getByRole('button', { name: 'Turn voice off' }).click();
      await two.page.locator('#voice-status', { hasText: 'nobody else' }).waitFor();
      await Promise.all([one.context.close(), two.context.close()]);
    });
  });
}
