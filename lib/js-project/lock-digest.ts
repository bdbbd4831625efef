/**
 * The digest that keys a dependency cache: of the lock file (or manifest), and of anything else the
 * install depends on. Unchanged digest, same install.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';

/** sha256, hex, shortened to 16 characters (64 bits: a cache key, not a checksum). */
export function keyDigest(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex').slice(0, 16);
}

export function lockDigest(file: string): string {
  return keyDigest(fs.readFileSync(file));
}
