import type { Database } from '../db/types.js';
import type { Keyring } from '../crypto/keyring.js';
import { inScope } from '../scope.js';
import { readLedger, verifyChain, type AuditRecord, type ChainProblem } from './ledger.js';
import { CheckpointSigner, CheckpointStore, type SignedCheckpoint } from './checkpoints.js';

export type LedgerProblem =
  | ChainProblem
  | { kind: 'TRUNCATED'; seq: number; head: number; file: string }
  | { kind: 'CHECKPOINT_MISMATCH'; seq: number; file: string }
  | { kind: 'CHECKPOINT_FORGED'; file: string };

export interface VerifyReport {
  ok: boolean;
  tenantId: string;
  records: number;
  head: { seq: number; hash: string } | null;
  checkpointsChecked: number;
  problems: LedgerProblem[];
}

/** Verification and checkpoint export of one tenant's ledger, as the admin role in that tenant. */
export class AuditLedger {
  readonly signer: CheckpointSigner;
  readonly checkpoints: CheckpointStore;

  constructor(
    private readonly db: Database,
    keyring: Keyring,
    /** Where checkpoint files go: outside the database, ideally beside the keyring. */
    checkpointDir: string,
  ) {
    this.signer = new CheckpointSigner(keyring);
    this.checkpoints = new CheckpointStore(checkpointDir);
  }

  records(tenantId: string, options: { fromSeq?: number; limit?: number } = {}): Promise<AuditRecord[]> {
    return inScope(this.db, { tenantId, role: 'admin' }, (tx) => readLedger(tx, tenantId, options));
  }

  /**
   * Checks every link of the chain, then every signed checkpoint on file against it: a
   * checkpoint beyond the head means the tail was cut off; one whose hash differs means the
   * chain was rewritten up to there; one with a bad signature was not made here.
   */
  async verify(tenantId: string): Promise<VerifyReport> {
    const records = await this.records(tenantId);
    const problems: LedgerProblem[] = verifyChain(tenantId, records);
    const last = records.at(-1);
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    const files = await this.checkpoints.list(tenantId);
    for (const { file, checkpoint } of files) {
      if (!checkpoint || checkpoint.tenantId !== tenantId || !(await this.signer.verify(checkpoint))) {
        problems.push({ kind: 'CHECKPOINT_FORGED', file });
        continue;
      }
      const record = bySeq.get(checkpoint.seq);
      if (!record && checkpoint.seq > (last?.seq ?? 0)) {
        problems.push({ kind: 'TRUNCATED', seq: checkpoint.seq, head: last?.seq ?? 0, file });
      } else if (!record || record.hash !== checkpoint.hash) {
        problems.push({ kind: 'CHECKPOINT_MISMATCH', seq: checkpoint.seq, file });
      }
    }
    return {
      ok: problems.length === 0,
      tenantId,
      records: records.length,
      head: last ? { seq: last.seq, hash: last.hash } : null,
      checkpointsChecked: files.length,
      problems,
    };
  }

  /**
   * Signs the current head and writes it to the checkpoint directory. Refuses to checkpoint a
   * chain that does not verify (that would bless the damage).
   */
  async exportCheckpoint(tenantId: string): Promise<{ file: string; checkpoint: SignedCheckpoint } | { refused: VerifyReport }> {
    const report = await this.verify(tenantId);
    if (!report.ok || !report.head) return { refused: report };
    const checkpoint = await this.signer.sign({ tenantId, seq: report.head.seq, hash: report.head.hash, at: new Date().toISOString() });
    return { file: await this.checkpoints.write(checkpoint), checkpoint };
  }
}
