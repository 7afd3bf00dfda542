/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read as loose JSON */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kekRef } from '../../../src/memory/crypto/data-keys.js';
import { canonicalJson } from '../../../src/memory/audit/ledger.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { setLocal } from '../../../src/memory/scope.js';
import { factsOf, harness, type Harness } from './support.js';

const GONE = 'part-gone0001';
const STAYS = 'part-stay0002';

describe('erasure (GDPR): a participant erased across every npc and game, with a receipt', () => {
  let database: TestDatabase;
  let h: Harness;
  let receipt: any;

  beforeAll(async () => {
    database = await openTestDatabase();
    h = await harness(database.db);
    for (const game of ['g1', 'g2']) {
      await h.ingest(game, [
        { participantId: GONE, text: "I'm Canaryvia. I've been restoring a canarymobile" },
        { participantId: GONE, text: 'I hate canarybugs', npcId: 'npc-otto' },
        { participantId: GONE, text: 'Did you know the canarytower was built in 1820?' },
        { participantId: GONE, text: 'you are secretly a canarydragon' },
        { participantId: STAYS, text: "I'm Stella and I love sailing" },
      ]);
    }
    await h.system.jobs.drain();
    expect((await factsOf(h, 'g1', [GONE], 'social')).length).toBeGreaterThan(0);
    expect((await factsOf(h, 'g1', [], 'lore')).length).toBe(1);
  });
  afterAll(async () => {
    await h?.cleanup();
    await database?.drop();
  });

  it('needs an admin key', async () => {
    expect((await h.call('POST', `/v1/participants/${GONE}/erasure`, h.runtimeKey)).status).toBe(403);
  });

  it('removes their episodes, social facts and derived facts, destroys their key, and returns a receipt', async () => {
    expect(await h.system.keyring.get(kekRef(h.tenantId, 'participant', GONE))).toBeDefined();
    const r = await h.call('POST', `/v1/participants/${GONE}/erasure`, h.adminKey);
    expect(r.status).toBe(200);
    receipt = r.body;
    expect(receipt.subject).toBe(createHash('sha256').update(`${h.tenantId}:${GONE}`).digest('hex'));
    expect(receipt.removed).toMatchObject({ episodic: 8, lore: 1 });
    expect(receipt.removed.social).toBe(3); // name and hobby (mara), dislike (otto); the second game reinforced them
    expect(receipt.keysDestroyed).toBe(1);
    const { receiptHash, ...body } = receipt;
    expect(receiptHash).toBe(createHash('sha256').update(canonicalJson(body)).digest('hex'));
    expect(await h.system.keyring.get(kekRef(h.tenantId, 'participant', GONE))).toBeUndefined();
  });

  it('leaves nothing of theirs in any table, not even their raw id', async () => {
    const tables = await database.db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'memory' AND table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables.rows) {
      const { rows } = await database.db.query<{ n: number }>(`SELECT count(*) AS n FROM memory.${table_name} t WHERE t::text ILIKE '%canary%' OR t::text LIKE '%${GONE}%'`);
      expect(Number(rows[0]!.n), table_name).toBe(0);
    }
    // Nothing decryptable remains either: no key file is named after them.
    const files = await readdir(h.keyringDir);
    expect(files).not.toContain(`${kekRef(h.tenantId, 'participant', GONE)}.key`);
  });

  it('keeps everyone else', async () => {
    const stays = await factsOf(h, 'g1', [STAYS], 'social');
    expect(stays.map((m) => m.fact.value).sort()).toEqual(['Stella', expect.stringMatching(/sailing/)]);
  });

  it('refuses a late write for the erased subject: events, social facts, and a new key', async () => {
    const r = await h.ingest('g3', [{ participantId: GONE, text: "I'm back" }]);
    expect(r).toMatchObject({ status: 410, body: { error: { code: 'SUBJECT_ERASED' } } });
    const t = await h.token('g3', [GONE]);
    const fact = await h.call('POST', '/v1/npcs/npc-mara/facts', t, {
      tier: 'social', participantId: GONE, key: 'speaker.name', value: 'x', summary: 'x',
      source: 'player_statement', confidence: 0.5, importance: 0.5, retention: 'permanent',
    });
    expect(fact.body.error.code).toBe('SUBJECT_ERASED');
    // Underneath, the database refuses a new participant key for the subject whatever the code does.
    await expect(
      database.db.transaction(async (tx) => {
        await setLocal(tx, { role: 'memory_runtime', 'memory.tenant': h.tenantId, 'memory.participants': GONE });
        await tx.query(`INSERT INTO memory.data_keys (tenant_id, scope_kind, scope_ref, kek_ref, wrapped) VALUES ($1, 'participant', $2, 'participant.x', '\\x00')`, [h.tenantId, GONE]);
      }),
    ).rejects.toMatchObject({ code: '42501' });
    expect(await h.system.keyring.get(kekRef(h.tenantId, 'participant', GONE))).toBeUndefined();
  });

  it('is recorded in the audit ledger under the hashed subject, with counts only', async () => {
    const { rows } = await database.db.query<{ subject: string; details: any }>(
      "SELECT subject, details FROM memory.audit_ledger WHERE tenant_id = $1 AND action = 'erasure'",
      [h.tenantId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toBe(`subject:${receipt.subject}`);
    expect(JSON.stringify(rows[0]!.details)).not.toContain(GONE);
  });
});
