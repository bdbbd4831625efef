/**
 * Checksums of downloaded artifacts. Pinned values are hex (`sha256` in buildpack.toml, sha256sum
 * files), npm publishes SRI (`sha512-<base64>`): both become one `Checksum` holding hex, so one
 * comparison serves every source. Hashing is streamed: a file is never read into memory.
 */
import crypto from 'node:crypto';
import { Transform } from 'node:stream';

export type ChecksumAlgorithm = 'sha256' | 'sha512';

export interface Checksum {
  algorithm: ChecksumAlgorithm;
  /** Lower-case hex digest. */
  hex: string;
  /** Where the value came from, for messages: `buildpack.toml`, `the mirror`, a checksum file URL. */
  source?: string;
}

const HEX_LENGTH: Record<ChecksumAlgorithm, number> = { sha256: 64, sha512: 128 };

/** A hex digest; the algorithm is taken from its length when not given. */
export function checksumFromHex(hex: string, algorithm?: ChecksumAlgorithm, source?: string): Checksum | undefined {
  const h = hex.trim().toLowerCase();
  if (!/^[0-9a-f]+$/.test(h)) return undefined;
  const algo = algorithm ?? (Object.keys(HEX_LENGTH) as ChecksumAlgorithm[]).find((a) => HEX_LENGTH[a] === h.length);
  if (!algo || HEX_LENGTH[algo] !== h.length) return undefined;
  return { algorithm: algo, hex: h, ...(source ? { source } : {}) };
}

/** An SRI string (`sha512-<base64>`, possibly several, space-separated): the strongest supported one. */
export function checksumFromSri(sri: string, source?: string): Checksum | undefined {
  let best: Checksum | undefined;
  for (const part of sri.trim().split(/\s+/)) {
    const m = /^(sha256|sha512)-([A-Za-z0-9+/]+={0,2})(\?.*)?$/.exec(part);
    if (!m) continue;
    const c = checksumFromHex(Buffer.from(m[2]!, 'base64').toString('hex'), m[1] as ChecksumAlgorithm, source);
    if (c && (!best || HEX_LENGTH[c.algorithm] > HEX_LENGTH[best.algorithm])) best = c;
  }
  return best;
}

/** `sha256:<hex>`: how checksums are shown and stored in layer metadata. */
export function formatChecksum(c: Checksum): string {
  return `${c.algorithm}:${c.hex}`;
}

/**
 * Reads a checksum file: `sha256sum`/`sha512sum` output (`<hex>  <name>` or `<hex> *<name>`, one line
 * per file) or a lone digest. Returns the digest listed for `fileName`.
 */
export function parseChecksumFile(text: string, fileName: string, source?: string): Checksum | undefined {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const line of lines) {
    const m = /^([0-9a-fA-F]+)\s+\*?(?:\.\/)?(.+)$/.exec(line);
    if (m && (m[2] === fileName || m[2]!.split('/').at(-1) === fileName)) return checksumFromHex(m[1]!, undefined, source);
  }
  if (lines.length === 1 && /^[0-9a-fA-F]+$/.test(lines[0]!)) return checksumFromHex(lines[0]!, undefined, source);
  return undefined;
}

/** A pass-through stream that hashes what flows through it with each algorithm. */
export function hashingStream(algorithms: Iterable<ChecksumAlgorithm>): { stream: Transform; digests: () => Checksum[] } {
  const hashes = [...new Set(algorithms)].map((a) => ({ algorithm: a, hash: crypto.createHash(a) }));
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (const h of hashes) h.hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, digests: () => hashes.map((h) => ({ algorithm: h.algorithm, hex: h.hash.digest('hex') })) };
}

/** The one verification: every expected checksum must equal the digest computed for its algorithm. */
export function verifyDigests(expected: Checksum[], actual: Checksum[]): { expected: Checksum; actual: Checksum } | undefined {
  for (const e of expected) {
    const a = actual.find((d) => d.algorithm === e.algorithm);
    if (!a) throw new Error(`no ${e.algorithm} digest was computed`);
    if (a.hex !== e.hex) return { expected: e, actual: a };
  }
  return undefined;
}

/** Whether two checksums name the same digest (their sources may differ). */
export function sameChecksum(a: Checksum, b: Checksum): boolean {
  return a.algorithm === b.algorithm && a.hex === b.hex;
}
