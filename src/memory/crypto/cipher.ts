import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** AES-256-GCM envelope: version (1) | iv (12) | tag (16) | ciphertext. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function seal(key: Uint8Array, plaintext: Uint8Array, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Throws if the key is wrong, the data was altered, or it was sealed for another `aad`. */
export function open(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (buf[0] !== VERSION || buf.length < 1 + IV_BYTES + TAG_BYTES) throw new Error('unknown ciphertext format');
  const iv = buf.subarray(1, 1 + IV_BYTES);
  const tag = buf.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  const plaintext = decipher.update(buf.subarray(1 + IV_BYTES + TAG_BYTES));
  decipher.final(); // GCM yields nothing here; it throws if the tag does not authenticate
  return plaintext;
}

export const newKey = (): Buffer => randomBytes(32);
