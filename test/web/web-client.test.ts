import { afterAll, beforeAll } from 'vitest';
import { startWebWorld, type WebWorld } from './support/web.js';
import { playTogether } from './play-together.scenario.js';
import { npcMemory } from './npc-memory.scenario.js';
import { inspector } from './inspector.scenario.js';
import { voice } from './voice.scenario.js';

/**
 * The web client in a real browser (Debian's chromium through playwright-core), against the whole
 * system as `npm start` runs it. One system and one browser for every scenario: starting them is
 * most of the cost. Screenshots of the main screens go to test-results/screenshots/
 * (docs/screenshots/ with UPDATE_SCREENSHOTS=1).
 */
const ctx = {} as { world: WebWorld };
beforeAll(async () => {
  ctx.world = await startWebWorld();
});
afterAll(() => ctx.world?.stop());

playTogether(ctx);
npcMemory(ctx);
voice(ctx);
inspector(ctx);
