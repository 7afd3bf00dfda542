/**
 * The memory service's secrets, game end, erasure and admin routes (cloning, lineage, the audit
 * ledger, consents, inspection) under arbitrary strings in every string field: path parameters,
 * query parameters and body fields. See test/helpers/text.ts for what each field must do.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParticipantId, ScopeId } from '../../src/boundary/events.js';
import { SECRET_KINDS } from '../../src/boundary/lifecycle.js';
import { createTenant } from '../../src/memory/credentials.js';
import { LocalHashEmbedder } from '../../src/memory/embeddings/local.js';
import { loadSecrets } from '../../src/memory/consolidation/secrets.js';
import { inScope } from '../../src/memory/scope.js';
import { buildMemorySystem, type MemorySystem } from '../../src/memory/system.js';
import { openTestDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { expectFieldAnswer, fieldText, isText, patternOf, receivedInQuery, urlPart, type Answer } from '../helpers/text.js';

const SCOPE_ID = patternOf(ScopeId);
const PARTICIPANT_ID = patternOf(ParticipantId);
const ROW_ID = '^[\\x21-\\x7e]{1,200}$';
const P = 'part-admin0001';
/** Length as the schemas count it: code points. */
const chars = (s: string) => [...s].length;
const matches = (pattern: string, max = Infinity) => (s: string) => new RegExp(pattern).test(s) && chars(s) <= max;
/** A path parameter the schema lets through: text of at most `max` characters, within the router's limit, not a dot segment. */
const pathText = (max: number) => (s: string) => isText(s) && chars(s) <= max && s.length <= 128 && s !== '' && s !== '.' && s !== '..';

describe('the secrets, game end, erasure and admin routes of the memory service, with arbitrary strings', () => {
  let database: TestDatabase;
  let system: MemorySystem;
  let removeKeys: () => Promise<void>;

  beforeAll(async () => {
    database = await openTestDatabase();
    const keys = await tempDir('keyring');
    removeKeys = keys.remove;
    system = await buildMemorySystem(database.db, { keyringDir: keys.dir, logger: false, embedder: new LocalHashEmbedder() });
  });
  afterAll(async () => {
    await system.app.close();
    await removeKeys();
    await database.drop();
  });

  /** A tenant of its own for each field, so that one field's games and consents do not meet another's. */
  const tenant = () => createTenant(database.db, `admin-prop-${Math.random().toString(36).slice(2)}`);
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, bearer: string, payload?: unknown): Promise<Answer> => {
    const r = await system.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${bearer}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
  };
  const secretsOf = (tenantId: string, gameId: string) =>
    inScope(system.db, { tenantId, gameId, role: 'runtime' }, (tx) => loadSecrets(tx, system.service, tenantId, gameId));

  it('keeps a game secret exactly as sent, and refuses one that is not text or too long with 400 without repeating it', async () => {
    const { tenantId, runtimeKey } = await tenant();
    let kept = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(), async (text) => {
        const answer = await call('PUT', '/v1/games/g-secrets/secrets', runtimeKey, { secrets: [{ kind: 'code', text }] });
        if (expectFieldAnswer(answer, text, { valid: isText(text) && chars(text) >= 1 && chars(text) <= 500, ok: [200] })) {
          expect(await secretsOf(tenantId, 'g-secrets')).toEqual([{ kind: 'code', text }]);
          kept++;
        }
      }),
      { numRuns: 30, seed: 1501 },
    );
    expect(kept).toBeGreaterThan(5);
  }, 60_000);

  it("registers secrets under exactly the game id and kind sent, and refuses any other id or kind with 400 or 414", async () => {
    const { tenantId, runtimeKey } = await tenant();
    let kept = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fieldText(`^(${SECRET_KINDS.join('|')})$`), async (gameId, kind) => {
        const byId = await call('PUT', `/v1/games/${urlPart(gameId)}/secrets`, runtimeKey, { secrets: [{ kind: 'code', text: '1847' }] });
        if (expectFieldAnswer(byId, gameId, { valid: matches(SCOPE_ID)(gameId), ok: [200], refused: [400, 404, 414] })) {
          expect(byId.body).toEqual({ gameId, registered: 1 });
          expect(await secretsOf(tenantId, gameId)).toEqual([{ kind: 'code', text: '1847' }]);
          kept++;
        }
        const byKind = await call('PUT', '/v1/games/g-kinds/secrets', runtimeKey, { secrets: [{ kind, text: '1847' }] });
        if (expectFieldAnswer(byKind, kind, { valid: (SECRET_KINDS as readonly string[]).includes(kind), ok: [200] })) {
          expect(await secretsOf(tenantId, 'g-kinds')).toEqual([{ kind, text: '1847' }]);
        }
      }),
      { numRuns: 30, seed: 1502 },
    );
    expect(kept).toBeGreaterThan(5);
  }, 60_000);

  it('ends exactly the game named in the path, whose tokens are refused from then on, and refuses any other id with 400 or 414', async () => {
    const { runtimeKey } = await tenant();
    let ended = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), async (gameId) => {
        const answer = await call('POST', `/v1/games/${urlPart(gameId)}/end`, runtimeKey);
        if (expectFieldAnswer(answer, gameId, { valid: matches(SCOPE_ID)(gameId), ok: [200], refused: [400, 404, 414] })) {
          expect(answer.body).toMatchObject({ gameId });
          const token = await call('POST', '/v1/tokens', runtimeKey, { gameId, participantIds: [P] });
          const read = token.status === 200 ? await call('GET', '/v1/npcs/npc-mara/memories/count?tier=clue', (token.body as { token: string }).token) : token;
          expect(read).toMatchObject({ status: 409, body: { error: { code: 'GAME_ENDED' } } });
          ended++;
        }
      }),
      { numRuns: 30, seed: 1503 },
    );
    expect(ended).toBeGreaterThan(5);
  }, 60_000);

  it('erases exactly a participant id of the right shape, lists anomalies for exactly an NPC id of the right shape, and refuses anything else', async () => {
    const { adminKey } = await tenant();
    await fc.assert(
      fc.asyncProperty(fieldText(PARTICIPANT_ID), fieldText(SCOPE_ID), async (participantId, npcId) => {
        const erasure = await call('POST', `/v1/participants/${urlPart(participantId)}/erasure`, adminKey);
        if (expectFieldAnswer(erasure, participantId, { valid: matches(PARTICIPANT_ID)(participantId), ok: [200], refused: [400, 404, 414] })) {
          expect(erasure.body).toMatchObject({ erasedAt: expect.any(String), receiptHash: expect.any(String) });
        }
        const anomalies = await call('GET', `/v1/npcs/${urlPart(npcId)}/anomalies`, adminKey);
        if (expectFieldAnswer(anomalies, npcId, { valid: matches(SCOPE_ID)(npcId), ok: [200], refused: [400, 404, 414] })) {
          expect(anomalies.body).toEqual({ anomalies: [] });
        }
      }),
      { numRuns: 30, seed: 1504 },
    );
  }, 60_000);

  it('dry-runs a clone between exactly the NPCs named, checks every consent token of the right shape, and refuses anything else', async () => {
    const { adminKey } = await tenant();
    const put = await call('PUT', '/v1/npcs/npc-source/procedural', adminKey, { persona: 'a careful archivist', directives: [], core: {} });
    expect(put.status).toBe(201);
    let planned = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(SCOPE_ID), fieldText('^[\\x21-\\x7e]{1,80}$'), async (npcId, consentToken) => {
        // Only npc-source has memory (any other source: 404 SOURCE_NOT_FOUND); the same NPC on both sides: 400 SAME_NPC.
        const from = await call('POST', '/v1/clones', adminKey, { from: npcId, to: 'npc-target', dryRun: true });
        expectFieldAnswer(from, npcId, { valid: matches(SCOPE_ID)(npcId), ok: npcId === 'npc-target' ? [400] : npcId === 'npc-source' ? [200] : [404] });
        const to = await call('POST', '/v1/clones', adminKey, { from: 'npc-source', to: npcId, dryRun: true });
        if (expectFieldAnswer(to, npcId, { valid: matches(SCOPE_ID)(npcId), ok: npcId === 'npc-source' ? [400] : [200] })) {
          expect((to.body as { manifest: { source: string; target: string } }).manifest).toMatchObject({ source: 'npc-source', target: npcId });
          planned++;
        }
        const tokens = await call('POST', '/v1/clones', adminKey, { from: 'npc-source', to: 'npc-target', dryRun: true, consentTokens: [consentToken] });
        if (expectFieldAnswer(tokens, consentToken, { valid: matches('^[\\x21-\\x7e]+$', 4096)(consentToken), ok: [200] })) {
          expect((tokens.body as { manifest: { consent: unknown } }).manifest.consent).toMatchObject({ tokensChecked: 1, byStatus: { malformed: 1 } });
        }
      }),
      { numRuns: 30, seed: 1505 },
    );
    expect(planned).toBeGreaterThan(5);
  }, 60_000);

  it('traces and invalidates exactly the row id sent, looks up any operation id, and refuses anything else without a 5xx', async () => {
    const { adminKey } = await tenant();
    let traced = 0;
    await fc.assert(
      fc.asyncProperty(fieldText(ROW_ID), fieldText('^[0-9a-f-]{1,64}$'), async (rowId, operationId) => {
        const trace = await call('GET', `/v1/lineage/trace?row=${urlPart(rowId)}`, adminKey);
        const received = receivedInQuery(rowId);
        if (expectFieldAnswer(trace, rowId, { valid: matches(ROW_ID)(received), ok: [200] })) {
          expect(trace.body).toEqual({ start: { rowId: received }, rows: [], operations: [], npcs: [] });
          traced++;
        }
        const invalidate = await call('POST', '/v1/lineage/invalidate', adminKey, { rowId });
        if (expectFieldAnswer(invalidate, rowId, { valid: matches(ROW_ID)(rowId), ok: [200] })) {
          expect(invalidate.body).toMatchObject({ start: { rowId }, rows: [] });
        }
        // Any operation id that is not one of the tenant's clones is simply not found.
        const byOperation = await call('GET', `/v1/clones/${urlPart(operationId)}/trace`, adminKey);
        expectFieldAnswer(byOperation, operationId, { valid: pathText(64)(operationId), ok: [404], refused: [400, 404, 414] });
        const invalidateOperation = await call('POST', '/v1/lineage/invalidate', adminKey, { operationId });
        expectFieldAnswer(invalidateOperation, operationId, { valid: isText(operationId) && chars(operationId) <= 64, ok: [404] });
      }),
      { numRuns: 30, seed: 1506 },
    );
    expect(traced).toBeGreaterThan(5);
  }, 60_000);

  it('pages the audit ledger from exactly the sequence number and limit sent, and refuses any other with 400', async () => {
    const { adminKey } = await tenant();
    const FROM = '^[1-9][0-9]{0,15}$';
    const LIMIT = '^(?:[1-9][0-9]{0,2}|1000)$';
    await fc.assert(
      fc.asyncProperty(fieldText(FROM), fieldText(LIMIT), async (fromSeq, limit) => {
        const byFrom = await call('GET', `/v1/audit/records?fromSeq=${urlPart(fromSeq)}`, adminKey);
        if (expectFieldAnswer(byFrom, fromSeq, { valid: matches(FROM)(receivedInQuery(fromSeq)), ok: [200] })) expect(byFrom.body).toEqual({ records: expect.any(Array) });
        const byLimit = await call('GET', `/v1/audit/records?limit=${urlPart(limit)}`, adminKey);
        if (expectFieldAnswer(byLimit, limit, { valid: matches(LIMIT)(receivedInQuery(limit)), ok: [200] })) {
          expect((byLimit.body as { records: unknown[] }).records.length).toBeLessThanOrEqual(Number(limit));
        }
      }),
      { numRuns: 30, seed: 1507 },
    );
  }, 60_000);

  it('records a consent for exactly the participant, NPCs and purpose sent, revokes it by its id, and refuses anything else', async () => {
    const { tenantId } = await tenant();
    const { token } = await system.credentials.issueGameToken(tenantId, 'g-consent', [P], 3600);
    const PURPOSE = '^[a-z_]{1,40}$';
    let recorded = 0;
    const record = async (body: Record<string, string>, sent: string, valid: boolean, ok: number[]) => {
      const answer = await call('POST', '/v1/consents', token, { participantId: P, sourceNpc: 'npc-source', targetNpc: 'npc-target', ...body });
      if (expectFieldAnswer(answer, sent, { valid, ok })) {
        const { consentId } = answer.body as { consentId: string };
        expect(await call('POST', `/v1/consents/${consentId}/revoke`, token, { participantId: P })).toMatchObject({ status: 204 });
        recorded++;
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.oneof(fieldText(PARTICIPANT_ID), fc.constant(P)), fieldText(SCOPE_ID), fieldText(PURPOSE), async (participantId, npcId, purpose) => {
        // A participant id of the right shape that the token does not cover: 403, nothing recorded.
        await record({ participantId }, participantId, matches(PARTICIPANT_ID)(participantId), participantId === P ? [201] : [403]);
        await record({ sourceNpc: npcId }, npcId, matches(SCOPE_ID)(npcId), [201]);
        await record({ targetNpc: npcId }, npcId, matches(SCOPE_ID)(npcId), [201]);
        await record({ purpose }, purpose, matches(PURPOSE)(purpose), [201]);
      }),
      { numRuns: 25, seed: 1508 },
    );
    expect(recorded).toBeGreaterThan(20);
  }, 60_000);

  it('looks up any consent id and context id of the right length, and refuses any other path or body value without a 5xx', async () => {
    const { tenantId, adminKey } = await tenant();
    const { token } = await system.credentials.issueGameToken(tenantId, 'g-lookups', [P], 3600);
    await fc.assert(
      fc.asyncProperty(fieldText('^[0-9a-f-]{1,64}$'), fieldText(PARTICIPANT_ID), fieldText(SCOPE_ID), async (id, participantId, gameId) => {
        const revoke = await call('POST', `/v1/consents/${urlPart(id)}/revoke`, token, { participantId: P });
        expectFieldAnswer(revoke, id, { valid: pathText(64)(id), ok: [404], refused: [400, 404, 414] });
        const revokeFor = await call('POST', `/v1/consents/${randomUUID()}/revoke`, token, { participantId });
        expectFieldAnswer(revokeFor, participantId, { valid: matches(PARTICIPANT_ID)(participantId), ok: [204, 403, 404] });
        const inspect = await call('POST', `/v1/admin/contexts/${urlPart(id)}/memories`, adminKey, { gameId: 'g-lookups' });
        expectFieldAnswer(inspect, id, { valid: pathText(64)(id), ok: [404], refused: [400, 404, 414] });
        const inspectIn = await call('POST', `/v1/admin/contexts/${randomUUID()}/memories`, adminKey, { gameId });
        expectFieldAnswer(inspectIn, gameId, { valid: matches(SCOPE_ID)(gameId), ok: [404] });
      }),
      { numRuns: 30, seed: 1509 },
    );
  }, 60_000);
});
