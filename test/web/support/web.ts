/**
 * Browser tests of the web client: the whole system as `npm start` runs it (fresh in-memory
 * PGlite, or a fresh native database when DATABASE_URL is set), and Debian's chromium driven by
 * playwright-core (never a downloaded browser). Helpers wait for elements; no fixed sleeps.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startEphemeralSystem, type RunningSystem } from '../../../src/system.js';
import { openTestDatabase } from '../../helpers/database.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Every run writes screenshots of the main screens to test-results/screenshots/ (not tracked);
 * UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/, the copies the README links to.
 */
export const SCREENSHOTS = path.resolve(import.meta.dirname, process.env.UPDATE_SCREENSHOTS ? '../../../docs/screenshots' : '../../../test-results/screenshots');
const WAIT_MS = 15_000;

export interface WebWorld {
  system: RunningSystem;
  url: string;
  browser: Browser;
  stop(): Promise<void>;
}

export async function startWebWorld(): Promise<WebWorld> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`The browser tests drive Debian's chromium at ${CHROMIUM}: run "apt-get install -y chromium" (or set CHROMIUM_PATH); no browser is downloaded.`);
  }
  const database = process.env.DATABASE_URL ? await openTestDatabase({ migrate: false }) : undefined;
  const { system, stop: stopSystem } = await startEphemeralSystem({ databaseUrl: database?.url });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Voice: a fake microphone, allowed without a prompt.
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
  });
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    system,
    url: system.urls.engine,
    browser,
    async stop() {
      await browser.close().catch(() => {});
      await stopSystem();
      await database?.drop();
    },
  };
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function newPlayer(world: WebWorld, viewport = LAPTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await world.browser.newContext({ viewport, baseURL: world.url });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  page.on('pageerror', (error) => console.error('page error:', error.message));
  await page.goto('/');
  return { context, page };
}

export const screenshot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

export async function playAnonymously(page: Page, name: string): Promise<void> {
  await page.getByLabel('Name shown to others (optional)').fill(name);
  await page.getByRole('button', { name: 'Play anonymously' }).click();
  await page.locator('#screen-lobby').waitFor();
}

export async function signUp(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.locator('#screen-lobby').waitFor();
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('#screen-lobby').waitFor();
}

export async function createGame(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Create a new game' }).click();
  await page.locator('#screen-room').waitFor();
  await page.locator('#game-id').filter({ hasText: /\S/ }).waitFor();
  return (await page.locator('#game-id').textContent())!.trim();
}

export async function joinGame(page: Page, gameId: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Game id' }).fill(gameId);
  await page.getByRole('button', { name: 'Join', exact: true }).click();
  await page.locator('#screen-room').waitFor();
}

/** Walks through an exit and waits until the room view shows the destination. */
export async function go(page: Page, direction: string, arriveIn: RegExp): Promise<void> {
  await page.getByRole('button', { name: `Go ${direction}`, exact: true }).click();
  await page.locator('#room-name').filter({ hasText: arriveIn }).waitFor();
}

export async function act(page: Page, label: string): Promise<void> {
  await page.getByRole('button', { name: label, exact: true }).click();
}

/** Says `text` through the form and returns the seq the stream gave it. */
export async function say(page: Page, text: string): Promise<number> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
  const line = page.locator('#stream li[data-cursor]').filter({ hasText: text }).last();
  await line.waitFor();
  return Number(await line.getAttribute('data-seq'));
}

/** The NPC's first line after `seq` in the player's current room, once it arrives. */
export async function npcLineAfter(page: Page, seq: number, npcId: string): Promise<string> {
  const handle = await page.waitForFunction(
    ({ seq, npcId }) => {
      const items = [...document.querySelectorAll<HTMLElement>('#stream li[data-cursor]')];
      const last = items.at(-1);
      const found = items.find((li) => li.dataset.npc === npcId && Number(li.dataset.seq) > seq && li.dataset.room === last?.dataset.room);
      return found?.querySelector('.text')?.textContent ?? undefined;
    },
    { seq, npcId },
    { timeout: WAIT_MS },
  );
  return (await handle.jsonValue()) as string;
}

/** Asks an NPC and returns its answer. */
export async function ask(page: Page, text: string, npcId: string): Promise<string> {
  return npcLineAfter(page, await say(page, text), npcId);
}

export interface SeenLine {
  room: string;
  seq: number;
  text: string;
  targeted: boolean;
}

export function streamOf(page: Page): Promise<SeenLine[]> {
  return page.$$eval('#stream li[data-cursor]', (items) =>
    items.map((li) => ({
      room: (li as HTMLElement).dataset.room!,
      seq: Number((li as HTMLElement).dataset.seq),
      text: li.textContent ?? '',
      targeted: li.classList.contains('targeted'),
    })),
  );
}
