import { beforeAll, describe, expect, it } from 'vitest';
import { act, ask, createGame, go, newPlayer, playAnonymously, screenshot, signIn, signUp, type WebWorld } from './support/web.js';
import type { Page } from 'playwright-core';

/**
 * What NPCs remember, seen from the browser with the embedded default's offline responder:
 * a code found in one game stays in that game, and a signed-in player is recognized in the next.
 */
export function npcMemory(ctx: { world: WebWorld }): void {
  describe('NPC memory through the page', () => {
    let world: WebWorld;
    beforeAll(() => {
      world = ctx.world;
    });

    /** Everything said so far has reached the memory service and been consolidated. */
    const settle = async () => {
      await world.system.engine.idle();
      await world.system.memory.jobs.drain();
    };

    /** From the foyer to the study, where Wren is: the key from the cloakroom opens the iron door. */
    async function walkToWren(page: Page): Promise<void> {
      await go(page, 'east', /Cloakroom/);
      await act(page, 'Take a brass key');
      await page.locator('#carrying li', { hasText: 'a brass key' }).waitFor();
      await go(page, 'west', /Foyer/);
      await go(page, 'north', /Reading Room/);
      await act(page, 'Unlock west');
      await page.locator('#stream li.local', { hasText: 'is now open' }).waitFor();
      await go(page, 'west', /Study/);
      await page.locator('#npcs-here li[data-npc="npc-wren-callow"]').waitFor();
    }

    it('two games in parallel: the safe code found in one is unknown to Wren in the other', async () => {
      const ana = await newPlayer(world);
      const bruno = await newPlayer(world);
      await playAnonymously(ana.page, 'Ana');
      await playAnonymously(bruno.page, 'Bruno');
      const alpha = await createGame(ana.page);
      const beta = await createGame(bruno.page);
      expect(alpha).not.toBe(beta);
      await Promise.all([walkToWren(ana.page), walkToWren(bruno.page)]);

      // Alpha finds the code (puzzle input) and tells Wren.
      await ana.page.getByLabel('Answer for the wall safe').fill('1847');
      await ana.page.getByLabel('Answer for the wall safe').press('Enter');
      await ana.page.locator('#stream li[data-cursor]', { hasText: 'safe door swings open' }).waitFor();
      await ask(ana.page, '@Wren we cracked it: the safe code is 1847.', 'npc-wren-callow');
      await settle();
      expect(await ask(ana.page, '@Wren what was the safe code again?', 'npc-wren-callow')).toContain('1847');

      // Beta, running at the same time with the same NPC, never heard of it.
      const inBeta = await ask(bruno.page, '@Wren do you know the safe code?', 'npc-wren-callow');
      expect(inBeta).toBe("I don't know the code; we haven't found any clues yet.");
      expect(inBeta).not.toContain('1847');
      await screenshot(bruno.page, '05-parallel-game-code-unknown');
      await Promise.all([ana.context.close(), bruno.context.close()]);
    });

    it('greets a returning signed-in player with what Mara learned in an earlier game', async () => {
      const first = await newPlayer(world);
      await signUp(first.page, 'ada-binder', 'a long enough passphrase');
      await createGame(first.page);
      await go(first.page, 'north', /Reading Room/);
      await ask(first.page, '@Mara my name is Ada.', 'npc-mara-quenby');
      await ask(first.page, '@Mara I work as a bookbinder, mostly on old atlases.', 'npc-mara-quenby');
      await settle();
      await first.page.getByRole('button', { name: 'Sign out' }).click();
      await first.context.close();

      // Another day, another browser, a new game: same account.
      const again = await newPlayer(world);
      await signIn(again.page, 'ada-binder', 'a long enough passphrase');
      await createGame(again.page);
      await go(again.page, 'north', /Reading Room/);
      const greeting = await ask(again.page, '@Mara Hello again!', 'npc-mara-quenby');
      expect(greeting).toMatch(/Welcome back, Ada/);
      expect(greeting).toMatch(/bookbinder/);
      await screenshot(again.page, '06-returning-player-greeted');
      await again.context.close();
    });
  });
}
