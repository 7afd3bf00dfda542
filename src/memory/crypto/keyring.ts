import { link, mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';

/**
 * Key-encryption keys, held outside PostgreSQL. A wrapped data key in the database survives in
 * WAL, backups and dead tuples; its wrapping key here does not, so deleting an entry here is
 * what shreds a game's or a participant's data.
 */
export interface Keyring {
  /** The key named `ref`, created exactly once however many callers race to create it. */
  getOrCreate(ref: string): Promise<Uint8Array>;
  /** The key named `ref`, or undefined once it has been destroyed (or never existed). */
  get(ref: string): Promise<Uint8Array | undefined>;
  /** Irreversibly deletes the key; true if it existed. */
  destroy(ref: string): Promise<boolean>;
}

const REF = /^[a-z0-9][a-z0-9._-]{0,200}$/;
const CACHE_LIMIT = 10_000;

/**
 * The default keyring: one 32-byte file per key in a directory the operator configures
 * (mode 0700/0600). Put it on a different volume and backup regime from the database.
 *
 * Keys read are kept in memory (as the data keys they unwrap are, in DataKeys), so a hot path
 * never waits on the file system; `destroy` forgets them. Delete keys through `destroy` (the
 * lifecycle commands): a file removed by hand is noticed by a running process only at restart.
 */
export class LocalKeyring implements Keyring {
  private readonly cache = new Map<string, Uint8Array>();
  /** Counts destroys, so a read that raced one does not put the key back in the cache. */
  private destroys = 0;

  constructor(private readonly dir: string) {}

  private file(ref: string): string {
    if (!REF.test(ref)) throw new Error(`invalid key reference ${JSON.stringify(ref)}`);
    return path.join(this.dir, `${ref}.key`);
  }

  async get(ref: string): Promise<Uint8Array | undefined> {
    const file = this.file(ref);
    const cached = this.cache.get(ref);
    if (cached) return cached;
    const destroys = this.destroys;
    try {
      const key = await readFile(file);
      if (key.length !== 32) throw new Error(`key file for ${ref} is damaged (length ${key.length})`);
      if (destroys !== this.destroys) return key;
      if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(ref, key);
      return key;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async getOrCreate(ref: string): Promise<Uint8Array> {
    const existing = await this.get(ref);
    if (existing) return existing;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Write a complete temporary file, then link it into place: link() fails if the name
    // exists, so exactly one racer creates the key and nobody ever reads a partial file.
    const tmp = path.join(this.dir, `.${randomUUID()}.tmp`);
    await writeFile(tmp, randomBytes(32), { mode: 0o600, flag: 'wx' });
    try {
      await link(tmp, this.file(ref));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(tmp).catch(() => {});
    }
    const key = await this.get(ref);
    if (!key) throw new Error(`key ${ref} vanished while being created`);
    return key;
  }

  async destroy(ref: string): Promise<boolean> {
    const existed = (await this.get(ref)) !== undefined;
    this.destroys++;
    this.cache.delete(ref);
    await rm(this.file(ref), { force: true });
    return existed;
  }
}
