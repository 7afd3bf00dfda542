import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, openTestDatabase, tempDir, type TestDatabase } from '../../helpers/database.js';
import { setLocal } from '../../../src/memory/scope.js';
import { memorySystemOn } from '../../helpers/fixture.js';
import type { MemorySystem } from '../../../src/memory/system.js';
import { ConsentTokens, type ConsentClaims } from '../../../src/memory/cloning/consent.js';
import { LocalKeyring } from '../../../src/memory/crypto/keyring.js';
import type { CloneManifest } from '../../../src/memory/cloning/cloner.js';
import { bearer, gameToken, newTenant, P1, P2, populateNpc, type PopulatedNpc, type Tenant } from './support.js';

/** Each bad consent token counts as no consent: P2's fact stays behind, with the reason named. */
describe(`consent tokens (${backend})`, () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let cleanup: () => Promise<void>;
  let tenant: Tenant;
  let a: PopulatedNpc;
  const B = 'npc-consent-b';

  const claims = (overrides: Partial<ConsentClaims> = {}): ConsentClaims => {
    const now = Math.floor(Date.now() / 1000);
    return { v: 1, cid: randomUUID(), tid: tenant.tenantId, pid: P2, src: a.npcId, dst: B, pur: 'clone', iat: now, exp: now + 3600, ...overrides };
  };
  const dryRun = async (consentTokens: string[]): Promise<CloneManifest> =>
    (await system.admin.cloner.dryRun({ tenantId: tenant.tenantId, sourceNpc: a.npcId, targetNpc: B, actor: 'test', consentTokens })).manifest;
  /** What happened to P2's social fact in a dry run offered these tokens. */
  const p2Fate = async (tokens: string[]) => {
    const m = await dryRun(tokens);
    const blocked = m.sample.find((s) => s.id === a.ids.social2);
    return { cleared: m.cleared.social, rule: blocked?.rule ?? 'cleared' };
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    ({ system, cleanup } = await memorySystemOn(database.db));
    tenant = await newTenant(database.db, 'consent');
    a = await populateNpc(system, tenant, 'npc-consent-a');
  });
  afterAll(async () => {
    await cleanup?.();
    await database?.drop();
  });

  it('a valid token for P2 (source, target, purpose, tenant, not expired) clears exactly P2\'s fact', async () => {
    expect(await p2Fate([await system.admin.consents.sign(claims())])).toEqual({ cleared: 1, rule: 'cleared' });
    expect(await p2Fate([])).toEqual({ cleared: 0, rule: 'no_consent' });
  });

  it('forged: a bad signature, an edited payload, or a token signed with another key', async () => {
    const good = await system.admin.consents.sign(claims());
    const [head, body, sig] = good.split('.') as [string, string, string];
    const flipped = `${head}.${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await p2Fate([flipped])).toEqual({ cleared: 0, rule: 'consent_forged' });
    // P1's valid token with its participant edited to P2, the signature kept.
    const p1 = await system.admin.consents.sign(claims({ pid: P1 }));
    const [, p1body, p1sig] = p1.split('.') as [string, string, string];
    const edited = Buffer.from(Buffer.from(p1body, 'base64url').toString('utf8').replace(P1, P2)).toString('base64url');
    expect(await p2Fate([`mc1.${edited}.${p1sig}`])).toEqual({ cleared: 0, rule: 'consent_forged' });
    const elsewhere = await tempDir('other-keyring');
    try {
      const foreign = await new ConsentTokens(database.db, new LocalKeyring(elsewhere.dir)).sign(claims());
      expect(await p2Fate([foreign])).toEqual({ cleared: 0, rule: 'consent_forged' });
    } finally {
      await elsewhere.remove();
    }
    expect(await p2Fate(['mc1.not-json.sig', 'garbage'])).toEqual({ cleared: 0, rule: 'no_consent' });
  });

  it('expired', async () => {
    const past = Math.floor(Date.now() / 1000) - 10;
    expect(await p2Fate([await system.admin.consents.sign(claims({ iat: past - 100, exp: past }))])).toEqual({ cleared: 0, rule: 'consent_expired' });
  });

  it('mismatched: another participant, source NPC, target NPC, purpose or tenant', async () => {
    // P1's valid consent says nothing about P2.
    expect(await p2Fate([await system.admin.consents.sign(claims({ pid: P1 }))])).toEqual({ cleared: 1, rule: 'no_consent' });
    expect(await p2Fate([await system.admin.consents.sign(claims({ src: 'npc-other' }))])).toEqual({ cleared: 0, rule: 'consent_wrong_source' });
    expect(await p2Fate([await system.admin.consents.sign(claims({ dst: 'npc-other' }))])).toEqual({ cleared: 0, rule: 'consent_wrong_target' });
    expect(await p2Fate([await system.admin.consents.sign(claims({ pur: 'training' }))])).toEqual({ cleared: 0, rule: 'consent_wrong_purpose' });
    const other = await newTenant(database.db, 'consent-other');
    expect(await p2Fate([await system.admin.consents.sign(claims({ tid: other.tenantId }))])).toEqual({ cleared: 0, rule: 'consent_wrong_tenant' });
  });

  it('revoked: recorded and revoked through the API (the revocation is in the ledger)', async () => {
    const token = await gameToken(system.app, tenant, [P2]);
    const recorded = await system.app.inject({ method: 'POST', url: '/v1/consents', headers: bearer(token), payload: { participantId: P2, sourceNpc: a.npcId, targetNpc: B } });
    expect(recorded.statusCode).toBe(201);
    const { consentId } = recorded.json<{ consentId: string }>();
    expect(await p2Fate([])).toEqual({ cleared: 1, rule: 'cleared' }); // the stored token counts
    const revoked = await system.app.inject({ method: 'POST', url: `/v1/consents/${consentId}/revoke`, headers: bearer(token), payload: { participantId: P2 } });
    expect(revoked.statusCode).toBe(204);
    expect(await p2Fate([])).toEqual({ cleared: 0, rule: 'consent_revoked' });
    const records = await system.admin.ledger.records(tenant.tenantId);
    expect(records.some((r) => r.action === 'consent_revoked' && r.subject === `consent:${consentId}`)).toBe(true);
  });

  it('a game token that does not cover the participant can neither record nor revoke their consent', async () => {
    const token = await gameToken(system.app, tenant, [P1]);
    const res = await system.app.inject({ method: 'POST', url: '/v1/consents', headers: bearer(token), payload: { participantId: P2, sourceNpc: a.npcId, targetNpc: B } });
    expect(res.statusCode).toBe(403);
    const direct = await database.db
      .transaction(async (tx) => {
        await setLocal(tx, { role: 'memory_runtime', 'memory.tenant': tenant.tenantId, 'memory.participants': P1 });
        await tx.query(
          `INSERT INTO memory.consents (tenant_id, consent_id, participant_id, source_npc, target_npc, purpose, token, expires_at) VALUES ($1, gen_random_uuid(), $2, 'x', 'y', 'clone', 't', now())`,
          [tenant.tenantId, P2],
        );
      })
      .then(() => 'inserted', (e: { code?: string }) => e.code);
    expect(direct).toBe('42501');
  });
});
