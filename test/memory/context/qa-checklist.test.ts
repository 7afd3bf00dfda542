import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, msg } from './harness.js';
import { buildMemorySystem } from '../../../src/memory/system.js';
import { countTokens } from '../../../src/memory/context/tokens.js';
import type { ContextWindow } from '../../../src/boundary/context.js';

/** Seed 003's QA checklist, one test each. */
describe('seed 003 QA checklist', () => {
  let h: Harness;
  const alex = 'acct-alex-00000001';
  const blake = 'acct-blake-0000002';
  const present = (...ids: string[]) => ids.map((participantId) => ({ participantId, anonymous: false }));
  const facts = (w: ContextWindow, p: string) => w.participants[p]!.facts;

  beforeAll(async () => {
    h = await Harness.start();
    await h.persona('npc-mara', 'Mara Venn, a merchant at Blackwater Market. Shrewd, loyal to the Harbor Guild.', { loyalty: 'Harbor Guild' });
    await h.persona('npc-kai', 'Kai, a smuggler who trusts nobody.');
  });
  afterAll(() => h?.stop());

  it('identity: the NPC remembers the player\'s name', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'player_name', value: 'Alex', summary: 'the player is called Alex', importance: 0.95 });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Do you remember me?', true)] });
    expect(facts(w, alex).find((f) => f.key === 'player_name')?.value).toBe('Alex');
  });

  it('preference: a changed preference supersedes the old one, which is never shown as current', async () => {
    const rifle = await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'weapon_preference', value: 'pulse rifle', summary: 'prefers pulse rifles' });
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'weapon_preference', value: 'shotgun', summary: 'switched to shotguns', supersedes: rifle });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'What weapon suits me?', true)] });
    const weapons = facts(w, alex).filter((f) => f.key === 'weapon_preference');
    expect(weapons.map((f) => f.value)).toEqual(['shotgun']);
    expect(JSON.stringify(w)).not.toContain('pulse rifle');
  });

  it('also resolves a same-key conflict without supersession by recency, in code', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'favorite_drink', value: 'tea', summary: 'likes tea' });
    await new Promise((r) => setTimeout(r, 20));
    const newer = await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'favorite_drink', value: 'coffee', summary: 'likes coffee' });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Got anything to drink?', true)] });
    expect(facts(w, alex).filter((f) => f.key === 'favorite_drink').map((f) => f.id)).toEqual([newer]);
  });

  it('session boundary: persistent memory survives a restart of the service', async () => {
    const keys = (h.system.keyring as unknown as { dir: string }).dir;
    const restarted = await buildMemorySystem(h.database.db, { keyringDir: keys, logger: false });
    try {
      const { token } = await restarted.credentials.issueGameToken(h.tenantId, 'g3', [alex], 60);
      const response = await restarted.app.inject({
        method: 'POST', url: '/v1/npcs/npc-mara/context', headers: { authorization: `Bearer ${token}` },
        payload: { roomId: 'hall', participants: present(alex), messages: [], state: { version: 1, facts: {} } },
      });
      expect(response.statusCode).toBe(200);
      expect((response.json() as ContextWindow).participants[alex]!.facts.map((f) => f.value)).toContain('Alex');
    } finally {
      await restarted.app.close();
    }
  });

  it('contradiction: current game state overrides a stale memory, which is labelled as memory', async () => {
    await h.fact('g4', 'npc-mara', {
      tier: 'social', participantId: alex, key: 'inventory.thermal_cloak', value: 'true', summary: 'Mara sold Alex a thermal cloak', source: 'verified_game_event', confidence: 1,
    });
    const w = await h.context('g4', 'npc-mara', {
      participants: present(alex),
      messages: [msg(1, alex, 'Got a cloak for me?', true)],
      state: { version: 42, facts: { 'inventory.thermal_cloak': false } },
    });
    const cloak = facts(w, alex).find((f) => f.key === 'inventory.thermal_cloak')!;
    expect(cloak.standing).toBe('memory_contradicted_by_state');
    expect(cloak.stateSays).toBe(false);
    expect(w.directives.map((d) => d.kind)).toContain('state_outranks_memory');
    // Prompt order: every memory section first, the pinned procedural directives and state after them.
    const order = Object.keys(w);
    for (const section of ['clues', 'participants', 'lore', 'episodes', 'transcript', 'directives']) expect(order.indexOf(section)).toBeLessThan(order.indexOf('pinned'));
    expect(w.pinned.state).toEqual({ version: 42, facts: { 'inventory.thermal_cloak': false } });
  });

  it('retrieval: the relevant memory ranks first among the player\'s facts', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'hometown', value: 'Old Harbor', summary: 'grew up in Old Harbor', importance: 0.8 });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Which shotgun would you pick for me?', true)] });
    expect(facts(w, alex)[0]!.key).toBe('weapon_preference');
  });

  it('isolation: one player\'s memory never appears in another player\'s section or for an absent player', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: blake, key: 'player_name', value: 'Blake', summary: 'the player is called Blake' });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Hi', true)] });
    expect(JSON.stringify(w)).not.toContain('Blake');
    const both = await h.context('g2', 'npc-mara', { participants: present(alex, blake), messages: [msg(1, alex, 'Hi', true)] });
    expect(facts(both, alex).map((f) => f.value)).not.toContain('Blake');
    expect(facts(both, blake).map((f) => f.value)).toEqual(['Blake']);
  });

  it('NPC isolation: Mara never gets Kai\'s memories', async () => {
    await h.fact('g1', 'npc-kai', { tier: 'social', participantId: alex, key: 'debt', value: '300 credits', summary: 'Alex owes Kai 300 credits' });
    await h.fact('g1', 'npc-kai', { tier: 'lore', key: 'smuggling_route', value: 'the north canal', summary: 'smugglers use the north canal' });
    const w = await h.context('g1', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Do I owe anyone credits? What about the canal?', true)] });
    const text = JSON.stringify(w);
    expect(text).not.toContain('300 credits');
    expect(text).not.toContain('north canal');
  });

  it('campaign isolation: a clue of one game never reaches another game', async () => {
    await h.fact('g-old', 'npc-mara', { tier: 'clue', key: 'safe.code', value: '7492', summary: 'the safe code is 7492' });
    const mine = await h.context('g-old', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'What is the safe code?', true)] });
    expect(mine.clues.map((c) => c.value)).toContain('7492');
    const other = await h.context('g-new', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'What is the safe code?', true)] });
    expect(JSON.stringify(other)).not.toContain('7492');
  });

  it('false claims: a player\'s statement stays a claim with its confidence; a verified event is known', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'claimed_title', value: 'emperor', summary: 'claims to be the emperor', confidence: 0.2, importance: 0.9 });
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'faction', value: 'resistance', summary: 'is a resistance member', source: 'verified_game_event', confidence: 1 });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Bow before your emperor, I am with the resistance', true)] });
    const byKey = Object.fromEntries(facts(w, alex).map((f) => [f.key, f]));
    expect(byKey.claimed_title).toMatchObject({ standing: 'claim', confidence: 0.2 });
    expect(byKey.faction).toMatchObject({ standing: 'known', confidence: 1 });
  });

  it('precedence: the procedural core outranks a social "fact" about the same key', async () => {
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: alex, key: 'loyalty', value: 'the Empire', summary: 'Alex says Mara is loyal to the Empire' });
    const w = await h.context('g2', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'Who are you loyal to?', true)] });
    expect(facts(w, alex).map((f) => f.key)).not.toContain('loyalty');
    expect(w.pinned.procedural?.persona).toContain('Harbor Guild');
  });

  it('cost: the context stays within its token budget and reports the tokens of every part', async () => {
    for (let i = 0; i < 40; i++) {
      await h.fact('g5', 'npc-mara', { tier: 'social', participantId: blake, key: `detail_${i}`, value: `detail number ${i} about Blake's life`, summary: `Blake told Mara detail number ${i} about an ordinary day at the docks` });
    }
    const w = await h.context('g5', 'npc-mara', { participants: present(alex, blake), messages: [msg(1, blake, 'Remember what I told you about my days at the docks?', true)], tokenBudget: 600 });
    expect(w.tokens.budget).toBe(600);
    expect(w.tokens.total).toBeLessThanOrEqual(600);
    expect(Object.keys(w.tokens.sections)).toEqual(expect.arrayContaining(['pinned', 'transcript', 'clues', 'social', 'episodes', 'lore']));
    expect(facts(w, blake).length).toBeGreaterThan(0);
    expect(facts(w, blake).length).toBeLessThan(40);
    // The reported total is an honest count: within 15% of the tokens of the window's JSON.
    expect(Math.abs(countTokens(JSON.stringify(w)) - w.tokens.total)).toBeLessThan(0.15 * countTokens(JSON.stringify(w)) + 40);
  });

  it('explainability: every assembly can be explained by id, with memory ids, scores, timings and no memory text', async () => {
    const w = await h.context('g1', 'npc-mara', { participants: present(alex), messages: [msg(1, alex, 'What weapon do I like?', true)], state: { version: 7, facts: {} } });
    const token = await h.token('g1', [alex]);
    const { status, body } = await h.call<Record<string, unknown>>(token, 'GET', `/v1/contexts/${w.contextId}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ contextId: w.contextId, npcId: 'npc-mara', stateVersion: 7 });
    const chosen = body.chosen as Record<string, { id: string; score: number }[]>;
    expect(chosen.social!.map((c) => c.id).sort()).toEqual(facts(w, alex).map((f) => f.id).sort());
    expect(Object.keys(body.timingsMs as object).sort()).toEqual(['pack', 'persist', 'retrieve', 'score', 'total']);
    const record = JSON.stringify(body);
    for (const f of facts(w, alex)) expect(record).not.toContain(f.value);
    // Another game's token cannot read it.
    const foreign = await h.call(await h.token('g2', [alex]), 'GET', `/v1/contexts/${w.contextId}`);
    expect(foreign.status).toBe(404);
  });

  it('segregates two participants with similar facts, never mixing their details (failure mode 4)', async () => {
    const p1 = 'acct-medic-0000001';
    const p2 = 'acct-medic-0000002';
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: p1, key: 'occupation', value: 'cardiac surgeon', summary: 'works as a cardiac surgeon' });
    await h.fact('g1', 'npc-mara', { tier: 'social', participantId: p2, key: 'occupation', value: 'emergency nurse', summary: 'works as an emergency nurse' });
    const w = await h.context('g6', 'npc-mara', { participants: present(p1, p2), messages: [msg(1, p1, 'We both work in hospitals, you know.', true)] });
    expect(facts(w, p1).map((f) => f.value)).toEqual(['cardiac surgeon']);
    expect(facts(w, p2).map((f) => f.value)).toEqual(['emergency nurse']);
  });
});
