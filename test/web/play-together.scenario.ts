import { beforeAll, describe, expect, it } from 'vitest';
import { act, createGame, go, joinGame, newPlayer, npcLineAfter, PHONE, playAnonymously, say, screenshot, signUp, streamOf, type WebWorld } from './support/web.js';

/**
 * Two players in two browser contexts play part of the sample game together, through the page
 * only: the same messages in the same order for both, a targeted message emphasized where it was
 * said, the room view (who is here, exits, items, puzzles, characters and their state).
 */
export function playTogether(ctx: { world: WebWorld }): void {
  describe('two players in the browser', () => {
    let world: WebWorld;
    beforeAll(() => {
      world = ctx.world;
    });

    it('see the same stream in the same order, with the targeted message marked and not moved', async () => {
      const ann = await newPlayer(world);
      await screenshot(ann.page, '01-sign-in');
      await playAnonymously(ann.page, 'Ann');
      await screenshot(ann.page, '02-lobby');
      const gameId = await createGame(ann.page);
      expect(gameId).toMatch(/\S/);

      const bob = await newPlayer(world);
      await signUp(bob.page, 'bob-reader', 'a long enough passphrase');
      await joinGame(bob.page, gameId);
      await ann.page.locator('#present li', { hasText: 'bob-reader' }).waitFor();

      // The cloakroom: an item to take, then back and north to Mara and Osric.
      await go(ann.page, 'east', /Cloakroom/);
      await ann.page.locator('#items li', { hasText: 'a brass key' }).waitFor();
      await act(ann.page, 'Take a brass key');
      await ann.page.locator('#carrying li', { hasText: 'a brass key' }).waitFor();
      await go(ann.page, 'west', /Foyer/);
      await go(ann.page, 'north', /Reading Room/);
      await go(bob.page, 'north', /Reading Room/);
      for (const p of [ann.page, bob.page]) {
        await p.locator('#present li', { hasText: 'Ann' }).waitFor();
        await p.locator('#present li', { hasText: 'bob-reader' }).waitFor();
        await p.locator('#npcs-here li[data-npc="npc-mara-quenby"]').waitFor();
        await p.locator('#puzzles [data-puzzle="whale-shelf"]').waitFor();
      }
      // Suspended: the characters no human is with (Wren in the locked study) are shown as such.
      await ann.page.locator('#roster li[data-npc="npc-tobias-fenn"][data-state="suspended"]').waitFor();

      const first = await say(ann.page, 'Bob, look at the verse on the mantel.');
      const targeted = await say(bob.page, '@Mara what does the verse on the mantel mean?');
      const maraReply = await npcLineAfter(ann.page, targeted, 'npc-mara-quenby');
      await say(ann.page, 'I think the white whale is a book.');
      expect(maraReply.length).toBeGreaterThan(0);
      const last = await say(bob.page, 'Let us try the shelf.');
      await ann.page.locator('#stream li[data-cursor]', { hasText: 'Let us try the shelf.' }).waitFor();
      expect(first).toBeLessThan(targeted);
      expect(targeted).toBeLessThan(last);

      // Same lines, same order, from Bob's arrival in the reading room to the last line.
      const between = async (page: typeof ann.page) => {
        const lines = (await streamOf(page)).filter((l) => l.room === 'reading-room');
        const from = lines.findIndex((l) => l.text.includes('bob-reader arrives from'));
        const to = lines.findIndex((l) => l.text.includes('Let us try the shelf.'));
        return lines.slice(from, to + 1);
      };
      const [annSees, bobSees] = [await between(ann.page), await between(bob.page)];
      expect(annSees.length).toBeGreaterThanOrEqual(5);
      expect(bobSees).toEqual(annSees);
      expect(annSees.map((l) => l.seq)).toEqual([...annSees.map((l) => l.seq)].sort((a, b) => a - b));
      expect(annSees.some((l) => l.text.includes('Mara:'))).toBe(true);

      // The targeted line is emphasized, with a visible marker, in its place in the order.
      for (const p of [ann.page, bob.page]) {
        const line = p.locator(`#stream li[data-room="reading-room"][data-seq="${targeted}"]`);
        expect(await line.getAttribute('class')).toContain('targeted');
        expect(await line.locator('.marker').isVisible()).toBe(true);
        expect(await line.locator('.marker').textContent()).toContain('Mara');
      }
      expect(annSees.filter((l) => l.targeted).map((l) => l.seq)).toEqual([targeted]);

      // Puzzle input: the shelf, by keyboard. Bob walks out while Ann types: the room view is
      // redrawn under her, and her half-typed answer is still there when she presses Enter.
      const answer = ann.page.getByLabel('Answer for the gap on the shelf');
      await answer.fill('Moby-Dick');
      await go(bob.page, 'south', /Foyer/);
      await ann.page.locator('#present li', { hasText: 'bob-reader' }).waitFor({ state: 'detached' });
      expect(await answer.inputValue()).toBe('Moby-Dick');
      await answer.press('Enter');
      await ann.page.locator('#exits li', { hasText: 'bookcase' }).waitFor();
      await go(bob.page, 'north', /Reading Room/);
      await bob.page.locator('#exits li', { hasText: 'bookcase' }).waitFor();
      await screenshot(ann.page, '03-room-laptop');

      // The front desk: exact full names only.
      const desk = ann.page.locator('#screen-room .front-desk');
      await desk.getByLabel('Full name').fill('Wren Adaeze Callow');
      await desk.getByRole('button', { name: 'Ask' }).click();
      await desk.locator('.desk-answer', { hasText: 'in this game' }).waitFor();
      await desk.getByLabel('Full name').fill('Wren Callow');
      await desk.getByRole('button', { name: 'Ask' }).click();
      await desk.locator('.desk-answer', { hasText: 'Character not recognized' }).waitFor();

      // Readable on a phone: the same game, narrow.
      const phone = await newPlayer(world, PHONE);
      await playAnonymously(phone.page, 'Cyd');
      await joinGame(phone.page, gameId);
      await say(phone.page, 'Hello from a phone, anyone here?');
      await screenshot(phone.page, '04-room-phone');
      const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      for (const p of [ann, bob, phone]) await p.context.close();
    });
  });
}
