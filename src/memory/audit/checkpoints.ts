import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Keyring } from '../crypto/keyring.js';
import { canonicalJson } from './ledger.js';

/**
 * Signed checkpoints of the audit ledger, exported as files outside the database.
 *
 * A checkpoint states "the tenant's chain had record `seq` with hash `hash`", signed with an
 * Ed25519 key whose 32-byte seed lives in the keyring (outside PostgreSQL). Someone who can
 * rewrite the database can cut off the tail of the chain and leave a valid shorter chain;
 * they cannot make it agree with a checkpoint they cannot re-sign.
 */
export interface Checkpoint {
  tenantId: string;
  seq: number;
  hash: string;
  at: string;
}

export interface SignedCheckpoint extends Checkpoint {
  alg: 'Ed25519';
  /** The signer's public key (SPKI, base64), for readers elsewhere; verification here uses the keyring's. */
  publicKey: string;
  signature: string;
}

/** The keyring name of the checkpoint signing seed. */
export const CHECKPOINT_KEY_REF = 'service.audit-checkpoint-signing';

// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export class CheckpointSigner {
  private keys?: { privateKey: KeyObject; publicKey: KeyObject };

  constructor(private readonly keyring: Keyring) {}

  private async load(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
    if (!this.keys) {
      const seed = await this.keyring.getOrCreate(CHECKPOINT_KEY_REF);
      const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
      this.keys = { privateKey, publicKey: createPublicKey(privateKey) };
    }
    return this.keys;
  }

  async publicKey(): Promise<string> {
    return (await this.load()).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  }

  async sign(checkpoint: Checkpoint): Promise<SignedCheckpoint> {
    const { privateKey } = await this.load();
    const signature = sign(null, Buffer.from(signedText(checkpoint)), privateKey).toString('base64');
    return { ...pick(checkpoint), alg: 'Ed25519', publicKey: await this.publicKey(), signature };
  }

  /** True when the signature is this signer's over exactly these fields. */
  async verify(checkpoint: SignedCheckpoint): Promise<boolean> {
    const { publicKey } = await this.load();
    try {
      return verify(null, Buffer.from(signedText(checkpoint)), publicKey, Buffer.from(checkpoint.signature, 'base64'));
    } catch {
      return false;
    }
  }
}

const pick = (c: Checkpoint): Checkpoint => ({ tenantId: c.tenantId, seq: c.seq, hash: c.hash, at: c.at });
const signedText = (c: Checkpoint) => `memory.audit-checkpoint.v1\n${canonicalJson(pick(c))}`;

/**
 * Checkpoint files: `<dir>/<tenantId>/<seq, zero-padded>.json`, one per export, never
 * overwritten. Keep the directory on another volume and backup regime than the database.
 */
export class CheckpointStore {
  constructor(readonly dir: string) {}

  private tenantDir(tenantId: string): string {
    if (!/^[0-9a-f-]{36}$/i.test(tenantId)) throw new Error(`invalid tenant id ${JSON.stringify(tenantId)}`);
    return path.join(this.dir, tenantId);
  }

  async write(checkpoint: SignedCheckpoint): Promise<string> {
    const dir = this.tenantDir(checkpoint.tenantId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${String(checkpoint.seq).padStart(12, '0')}.json`);
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, `${JSON.stringify(checkpoint, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, file);
    return file;
  }

  /** Every checkpoint file of the tenant, oldest first; unreadable files come back as `invalid`. */
  async list(tenantId: string): Promise<{ file: string; checkpoint?: SignedCheckpoint }[]> {
    const dir = this.tenantDir(tenantId);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => /^\d{12}\.json$/.test(n)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return Promise.all(
      names.map(async (name) => {
        const file = path.join(dir, name);
        try {
          return { file, checkpoint: JSON.parse(await readFile(file, 'utf8')) as SignedCheckpoint };
        } catch {
          return { file };
        }
      }),
    );
  }
}
