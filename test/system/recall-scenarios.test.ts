import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, eventually } from './harness.js';
import { EngineClient } from '../../src/engine/http/client.js';
import { loadSampleGame } from '../../src/engine/game-definition/validate.js';
import type { RunningSystem } from '../../src/system.js';
import type { GameDefinition } from '../../src/engine/game-definition/schema.js';

/**
 * Seed 000's recall scenarios end to end through the engine's public API, as players and bots
 * reach it, with the offline responder: engine -> anonymization proxy -> memory service ->
 * consolidation -> context -> responder -> guard -> room stream.
 */
describe('the recall scenarios through the engine\'s public API', () => {
  let system: RunningSystem;
  let stop: () => Promise<void>;
  let url: string;
  let withElias: GameDefinition;

  beforeAll(async () => {
    ({ system, stop } = await startTestSystem());
    url = system.urls.engine;
    const sample = await loadSampleGame();
    withElias = structuredClone(sample);
    withElias.npcs.push({ npcId: 'npc-elias-vance', startRoom: 'foyer', persona: 'Elias Vance, the archivist. Warm, precise, curious about people.' });
  });
  afterAll(() => stop?.());

  /** Says something and waits for the NPC's next line in the room after it. */
  async function ask(client: EngineClient, gameId: string, text: string, npcName: string): Promise<string> {
    const said = await client.say(gameId, text);
    return eventually(async () => {
      const { entries } = await client.feed(gameId);
      return entries.map((i) => i.entry).find((e) => e.seq > said.seq && e.speaker.kind === 'npc' && e.speaker.displayName === npcName)?.text;
    }, `${npcName}'s reply to "${text}"`);
  }

  const drain = () => system.memory.jobs.drain();

  it('Elias Vance asks about the aerospace sector in a new game, and knows nothing of the old vault code', async () => {
    await EngineClient.signUp(url, 'alex-aero', 'correct horse battery');
    const alex = await EngineClient.signIn(url, 'alex-aero', 'correct horse battery');
    const heist = await alex.createGame(withElias);
    await alex.join(heist);
    await ask(alex, heist, '@Elias I work as an aerospace engineer, mostly on satellite thrusters.', 'Elias');
    await ask(alex, heist, '@Elias the vault combination is 31-41-59.', 'Elias');
    await system.engine.idle();
    await drain();

    const lighthouse = await alex.createGame(withElias);
    await alex.join(lighthouse);
    const greeting = await ask(alex, lighthouse, '@Elias Hello again!', 'Elias');
    expect(greeting).toMatch(/aerospace/i);
    const code = await ask(alex, lighthouse, '@Elias what is the vault combination?', 'Elias');
    expect(code).toBe("I don't know the code; we haven't found any clues yet.");
    expect(code).not.toContain('31-41-59');
  });

  it('answers the Mustang coincidence for anon_419 without confirming who they are', async () => {
    const anon882 = await EngineClient.anonymous(url, { displayName: 'Sam' });
    const monday = await anon882.createGame(withElias);
    await anon882.join(monday);
    await ask(anon882, monday, '@Elias I have been restoring a 1967 Mustang with my grandfather in his barn for two winters.', 'Elias');
    await system.engine.idle();
    await drain();

    const anon419 = await EngineClient.anonymous(url, { displayName: 'Sam' });
    const tuesday = await anon419.createGame(withElias);
    await anon419.join(tuesday);
    const reply = await ask(anon419, tuesday, '@Elias Have you ever seen a 1967 Mustang? I am restoring one.', 'Elias');
    expect(reply).toMatch(/heard a similar story from someone else/);
    expect(reply).not.toMatch(/same person|remember you|met before|welcome back|grandfather|barn/i);
  });

  it('keeps game alpha\'s safe code 7492 unknown to the same NPC in game beta', async () => {
    const alphaPlayer = await EngineClient.anonymous(url, { displayName: 'Ana' });
    const alpha = await alphaPlayer.createGame(withElias);
    await alphaPlayer.join(alpha);
    await ask(alphaPlayer, alpha, '@Elias we cracked it: the safe code is 7492.', 'Elias');
    await system.engine.idle();
    await drain();
    const inAlpha = await ask(alphaPlayer, alpha, '@Elias what was the safe code again?', 'Elias');
    expect(inAlpha).toContain('7492');

    const betaPlayer = await EngineClient.anonymous(url, { displayName: 'Bruno' });
    const beta = await betaPlayer.createGame(withElias);
    await betaPlayer.join(beta);
    const inBeta = await ask(betaPlayer, beta, '@Elias do you know the safe code?', 'Elias');
    expect(inBeta).toBe("I don't know the code; we haven't found any clues yet.");
  });

  it('spends no turn on the library NPCs while their room is empty, and answers again when a human is back', async () => {
    const player = await EngineClient.anonymous(url, { displayName: 'Lee' });
    const bot = await EngineClient.anonymous(url, { displayName: 'Bot', controller: 'script' });
    const gameId = await player.createGame();
    await player.join(gameId);
    await bot.join(gameId);
    for (const c of [player, bot]) await c.act(gameId, { type: 'move', direction: 'north' }); // the reading room: Mara and Osric
    await ask(player, gameId, '@Mara good evening', 'Mara');
    await player.act(gameId, { type: 'move', direction: 'south' }); // only the bot is left with them
    const turnsBefore = system.runtime.turnsOf(gameId).length;
    for (let i = 0; i < 5; i++) await bot.say(gameId, `@Mara @Osric hello? (${i})`);
    await system.runtime.idle();
    expect(system.runtime.turnsOf(gameId).length).toBe(turnsBefore);
    await player.act(gameId, { type: 'move', direction: 'north' });
    await ask(player, gameId, '@Mara I am back', 'Mara');
    expect(system.runtime.turnsOf(gameId).length).toBeGreaterThan(turnsBefore);
  });
});
