/** The digest of a lock file (or manifest) that keys a dependency cache: unchanged digest, same install. */
import crypto from 'node:crypto';
import fs from 'node:fs';

/** sha256 of the file, hex, shortened to 16 characters (64 bits: a key, not a checksum). */
export function lockDigest(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 16);
}
