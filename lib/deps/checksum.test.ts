import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pipeline } from 'node:stream/promises';
import { checksumFromHex, checksumFromSri, formatChecksum, hashingStream, parseChecksumFile, verifyDigests } from './checksum.ts';
import { tempDir } from '../../test/helpers/deps.ts';

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const data = Buffer.from('#!/bin/sh\necho tool\n'.repeat(5000));
const file = path.join(dir, 'tool.tar.gz');
fs.writeFileSync(file, data);
const sha256 = crypto.createHash('sha256').update(data).digest('hex');
const sha512 = crypto.createHash('sha512').update(data).digest('hex');

describe('checksums', () => {
  it('hashes a file with several algorithms in one streamed pass', async () => {
    const h = hashingStream(['sha256', 'sha512']);
    await pipeline(fs.createReadStream(file), h.stream, async (source: AsyncIterable<Buffer>) => {
      for await (const _ of source);
    });
    expect(h.digests()).toEqual([
      { algorithm: 'sha256', hex: sha256 },
      { algorithm: 'sha512', hex: sha512 },
    ]);
  });

  it('reads npm SRI integrity as the same digest in hex, preferring the strongest', () => {
    const sri = `sha256-${Buffer.from(sha256, 'hex').toString('base64')} sha512-${Buffer.from(sha512, 'hex').toString('base64')}`;
    expect(checksumFromSri(sri)).toEqual({ algorithm: 'sha512', hex: sha512 });
    expect(checksumFromSri('sha1-abc=')).toBeUndefined();
  });

  it('tells the algorithm from the length of a hex digest', () => {
    expect(checksumFromHex(sha512.toUpperCase())?.algorithm).toBe('sha512');
    expect(checksumFromHex(sha256)?.algorithm).toBe('sha256');
    expect(checksumFromHex(sha256, 'sha512')).toBeUndefined();
    expect(checksumFromHex('xyz')).toBeUndefined();
  });

  it('finds a file in sha256sum / sha512sum output', () => {
    const text = `${'0'.repeat(64)}  caddy_2.11.2_linux_arm64.tar.gz\n${sha512} *caddy_2.11.2_linux_amd64.tar.gz\n${sha256}  ./dist/other.zip\n`;
    expect(parseChecksumFile(text, 'caddy_2.11.2_linux_amd64.tar.gz')).toEqual({ algorithm: 'sha512', hex: sha512 });
    expect(parseChecksumFile(text, 'other.zip')).toEqual({ algorithm: 'sha256', hex: sha256 });
    expect(parseChecksumFile(text, 'caddy_2.11.2_linux_riscv64.tar.gz')).toBeUndefined();
    expect(parseChecksumFile(`${sha256}\n`, 'anything')).toEqual({ algorithm: 'sha256', hex: sha256 });
  });

  it('verifies every expected digest and reports the first that differs', () => {
    const actual = [
      { algorithm: 'sha256' as const, hex: sha256 },
      { algorithm: 'sha512' as const, hex: sha512 },
    ];
    expect(verifyDigests([{ algorithm: 'sha256', hex: sha256, source: 'buildpack.toml' }], actual)).toBeUndefined();
    const wrong = { algorithm: 'sha512' as const, hex: 'f'.repeat(128), source: 'the mirror' };
    expect(verifyDigests([{ algorithm: 'sha256', hex: sha256 }, wrong], actual)).toEqual({ expected: wrong, actual: actual[1] });
    expect(formatChecksum(wrong)).toBe(`sha512:${'f'.repeat(128)}`);
  });
});
