import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { onCitus, openTestDatabase, tempDir, backend, type TestDatabase } from '../../helpers/database.js';
import { createTenant } from '../../../src/memory/credentials.js';
import { inScope } from '../../../src/memory/scope.js';
import { LocalKeyring } from '../../../src/memory/crypto/keyring.js';
import { appendAudit, recordHash, readLedger, type AuditRecord } from '../../../src/memory/audit/ledger.js';
import { AuditLedger } from '../../../src/memory/audit/audit.js';

describe(`the audit ledger (${backend})`, () => {
  let database: TestDatabase;
  let keys: Awaited<ReturnType<typeof tempDir>>;
  let ledger: AuditLedger;
  let tenantId: string;

  const append = (i: number, tenant = tenantId) =>
    inScope(database.db, { tenantId: tenant, role: 'runtime' }, (tx) =>
      appendAudit(tx, { tenantId: tenant, action: 'game_end', actor: 'service', subject: `game-${i}`, details: { n: i, nested: { b: 1, a: [i, 'x'] } } }),
    );

  /** Runs `sql` as the owner with the append-only trigger disabled: what someone with the database's superuser could do. */
  const tamper = async (sql: string | string[], params: unknown[] = []) => {
    await database.db.transaction(async (tx) => {
      // On Citus, switching a trigger of a distributed table needs this (a superuser may set it).
      if (onCitus) await tx.query('SET LOCAL citus.enable_unsafe_triggers = on');
      await tx.query('ALTER TABLE memory.audit_ledger DISABLE TRIGGER audit_ledger_no_rewrite');
      for (const statement of Array.isArray(sql) ? sql : [sql]) await tx.query(statement, params);
      await tx.query('ALTER TABLE memory.audit_ledger ENABLE TRIGGER audit_ledger_no_rewrite');
    });
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    keys = await tempDir('audit');
  });
  afterAll(async () => {
    await database?.drop();
    await keys?.remove();
  });
  beforeEach(async () => {
    // A fresh tenant (and checkpoint directory) per test: each test has its own chain.
    tenantId = (await createTenant(database.db, `audit-${Math.random().toString(36).slice(2)}`)).tenantId;
    ledger = new AuditLedger(database.db, new LocalKeyring(keys.dir), `${keys.dir}/checkpoints-${tenantId}`);
  });

  it('chains records per tenant: seq 1..n, each prevHash the previous hash, and verify passes', async () => {
    for (let i = 1; i <= 5; i++) expect((await append(i)).seq).toBe(i);
    const records = await ledger.records(tenantId);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(records[0]!.prevHash).toBe('0'.repeat(64));
    for (let i = 1; i < 5; i++) expect(records[i]!.prevHash).toBe(records[i - 1]!.hash);
    expect(records[2]!.details).toEqual({ n: 3, nested: { a: [3, 'x'], b: 1 } });
    expect(await ledger.verify(tenantId)).toMatchObject({ ok: true, records: 5, problems: [] });
  });

  it('keeps tenants on separate chains that cannot see each other', async () => {
    const other = (await createTenant(database.db, `audit-other-${Math.random().toString(36).slice(2)}`)).tenantId;
    await append(1);
    await append(1, other);
    expect((await append(2)).seq).toBe(2);
    const seenFromOther = await inScope(database.db, { tenantId: other, role: 'runtime' }, (tx) => readLedger(tx, tenantId));
    expect(seenFromOther).toEqual([]);
  });

  it('lets the runtime role INSERT but never UPDATE, DELETE or TRUNCATE, and the trigger refuses the owner too', async () => {
    await append(1);
    for (const sql of [
      "UPDATE memory.audit_ledger SET actor = 'x'",
      'DELETE FROM memory.audit_ledger',
      'TRUNCATE memory.audit_ledger',
    ]) {
      await expect(inScope(database.db, { tenantId, role: 'runtime' }, (tx) => tx.query(sql))).rejects.toMatchObject({ code: '42501' });
      await expect(inScope(database.db, { tenantId, role: 'admin' }, (tx) => tx.query(sql))).rejects.toMatchObject({ code: '42501' });
    }
    // The owner (here a superuser) is refused by the trigger.
    await expect(database.db.query("UPDATE memory.audit_ledger SET actor = 'x'")).rejects.toThrow(/append-only/);
    await expect(database.db.query('DELETE FROM memory.audit_ledger')).rejects.toThrow(/append-only/);
    await expect(database.db.query('TRUNCATE memory.audit_ledger')).rejects.toThrow(/append-only/);
    const privileges = await database.db.query<Record<string, boolean>>(
      `SELECT has_table_privilege('memory_runtime', 'memory.audit_ledger', 'UPDATE') AS u,
              has_table_privilege('memory_runtime', 'memory.audit_ledger', 'DELETE') AS d,
              has_table_privilege('memory_runtime', 'memory.audit_ledger', 'TRUNCATE') AS t,
              has_table_privilege('memory_admin', 'memory.audit_ledger', 'UPDATE') AS au`,
    );
    expect(privileges.rows[0]).toEqual({ u: false, d: false, t: false, au: false });
    expect((await ledger.verify(tenantId)).ok).toBe(true);
  });

  describe('tampering in the middle of the chain is found by verify', () => {
    beforeEach(async () => {
      for (let i = 1; i <= 6; i++) await append(i);
      expect((await ledger.verify(tenantId)).ok).toBe(true);
    });

    it('a flipped byte in a middle record', async () => {
      await tamper(`UPDATE memory.audit_ledger SET subject = 'game-X' WHERE tenant_id = $1 AND seq = 3`, [tenantId]);
      const report = await ledger.verify(tenantId);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([{ kind: 'HASH_MISMATCH', seq: 3 }]);
    });

    it('a flipped byte in a stored hash', async () => {
      await tamper(`UPDATE memory.audit_ledger SET hash = overlay(hash placing (CASE WHEN substr(hash, 1, 1) = '0' THEN '1' ELSE '0' END) from 1 for 1) WHERE tenant_id = $1 AND seq = 3`, [tenantId]);
      const report = await ledger.verify(tenantId);
      expect(report.problems).toEqual(expect.arrayContaining([{ kind: 'HASH_MISMATCH', seq: 3 }, { kind: 'BROKEN_LINK', seq: 4 }]));
    });

    it('a deleted middle record', async () => {
      await tamper('DELETE FROM memory.audit_ledger WHERE tenant_id = $1 AND seq = 3', [tenantId]);
      const report = await ledger.verify(tenantId);
      expect(report.problems).toEqual(expect.arrayContaining([{ kind: 'SEQUENCE_GAP', seq: 4, expected: 3 }, { kind: 'BROKEN_LINK', seq: 4 }]));
    });

    it('two swapped records', async () => {
      await tamper(
        [
          'UPDATE memory.audit_ledger SET seq = 1000 WHERE tenant_id = $1 AND seq = 3',
          'UPDATE memory.audit_ledger SET seq = 3 WHERE tenant_id = $1 AND seq = 4',
          'UPDATE memory.audit_ledger SET seq = 4 WHERE tenant_id = $1 AND seq = 1000',
        ],
        [tenantId],
      );
      const report = await ledger.verify(tenantId);
      expect(report.ok).toBe(false);
      expect(report.problems.map((p) => p.kind)).toContain('BROKEN_LINK');
    });

    it('a middle record rewritten with a recomputed hash (its successor no longer links to it)', async () => {
      const [record] = await ledger.records(tenantId, { fromSeq: 3, limit: 1 });
      const forged: AuditRecord = { ...record!, details: { n: 999 } };
      forged.hash = recordHash(forged);
      await tamper('UPDATE memory.audit_ledger SET details = $2::jsonb, hash = $3 WHERE tenant_id = $1 AND seq = 3', [
        tenantId,
        JSON.stringify(forged.details),
        forged.hash,
      ]);
      const report = await ledger.verify(tenantId);
      expect(report.problems).toEqual([{ kind: 'BROKEN_LINK', seq: 4 }]);
    });

    it('the whole suffix rewritten with recomputed hashes is caught by a checkpoint taken before', async () => {
      const exported = await ledger.exportCheckpoint(tenantId);
      expect('file' in exported).toBe(true);
      const records = await ledger.records(tenantId);
      let prev = records[2]!.hash;
      for (const r of records.slice(3)) {
        const forged: AuditRecord = { ...r, prevHash: prev, details: { n: -r.seq } };
        forged.hash = recordHash(forged);
        prev = forged.hash;
        await tamper('UPDATE memory.audit_ledger SET details = $3::jsonb, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND seq = $2', [
          tenantId,
          r.seq,
          JSON.stringify(forged.details),
          forged.prevHash,
          forged.hash,
        ]);
      }
      const report = await ledger.verify(tenantId);
      expect(report.problems).toEqual([{ kind: 'CHECKPOINT_MISMATCH', seq: 6, file: expect.any(String) }]);
    });
  });

  it('detects a truncated tail against the exported signed checkpoint', async () => {
    for (let i = 1; i <= 5; i++) await append(i);
    const exported = await ledger.exportCheckpoint(tenantId);
    if (!('file' in exported)) throw new Error('checkpoint refused');
    expect(exported.checkpoint).toMatchObject({ tenantId, seq: 5, alg: 'Ed25519' });
    await tamper('DELETE FROM memory.audit_ledger WHERE tenant_id = $1 AND seq >= 4', [tenantId]);
    const report = await ledger.verify(tenantId);
    // The chain alone is a valid shorter chain; only the checkpoint shows what is missing.
    expect(report.problems).toEqual([{ kind: 'TRUNCATED', seq: 5, head: 3, file: exported.file }]);
  });

  it('refuses a checkpoint file whose signature is not ours', async () => {
    for (let i = 1; i <= 2; i++) await append(i);
    const exported = await ledger.exportCheckpoint(tenantId);
    if (!('file' in exported)) throw new Error('checkpoint refused');
    // A forger who rewrote the database writes a checkpoint for the shorter chain.
    const forged = { ...exported.checkpoint, seq: 9, hash: 'f'.repeat(64) };
    await ledger.checkpoints.write(forged);
    const report = await ledger.verify(tenantId);
    expect(report.problems).toEqual([{ kind: 'CHECKPOINT_FORGED', file: expect.stringMatching(/000000000009\.json$/) }]);
  });

  it('stays linear and valid under concurrent appends', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => append(i)));
    expect(results.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await ledger.verify(tenantId)).toMatchObject({ ok: true, records: 30 });
  });
});
