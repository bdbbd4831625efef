/**
 * The shared download cache's guarantees, with a local fill (what a download, its check and its
 * unpack produce) so that the timing is the test's: one fill for builds asking at once, every
 * build linked to a complete entry, a damaged entry filled again, litter of a killed fill swept.
 * The same with real builds, one of them killed, is test/reliability/download-cache.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Logger } from '../log.ts';
import { Writable } from 'node:stream';
import { entryName, installShared, readEntry, sweepLitter } from './download-cache.ts';
import { lock, tryLock } from './fill-lock.ts';
import { scanTree } from '../tree-digest.ts';
import { tmpDir } from '../../test/helpers/rbp.ts';
import type { DependencySpec } from './catalog.ts';

const spec: DependencySpec = {
  id: 'tool',
  version: '1.2.3',
  uri: 'https://example.test/tool-1.2.3.tgz',
  archive: 'tar.gz',
  stripComponents: 1,
  bin: 'bin/tool',
  checksum: { algorithm: 'sha256', hex: 'a'.repeat(64) },
};
const quiet = () => new Logger({ out: new Writable({ write: (_c, _e, cb) => cb() }), level: 'normal' });

/** A fill that takes `ms` and writes a small tree, counting its calls. */
function slowFill(ms: number, calls: { n: number }) {
  return async (dir: string) => {
    calls.n++;
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'tool'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
    await new Promise((r) => setTimeout(r, ms));
    fs.writeFileSync(path.join(dir, 'README'), 'x'.repeat(10_000));
    return [spec.checksum!];
  };
}

describe('download cache', () => {
  it('builds that ask at once: one fills the entry, the others wait and link it; all get the whole tree', async () => {
    const root = tmpDir('rbp-dc-');
    const calls = { n: 0 };
    const targets = [0, 1, 2, 3].map((i) => path.join(tmpDir('rbp-dc-layer-'), `layer-${i}`));
    const rs = await Promise.all(targets.map((target) => installShared({ root, spec, arch: 'amd64', target, log: quiet(), fill: slowFill(300, calls) })));
    expect(calls.n).toBe(1);
    expect(rs.map((r) => r.how).sort()).toEqual(['filled', 'linked', 'linked', 'linked']);
    const { dir, name } = entryName(spec, 'amd64');
    const entry = path.join(root, dir, name);
    const digest = readEntry(entry)!.digest;
    for (const t of targets) {
      expect(scanTree(t).digest).toBe(digest);
      // One copy on disk: the layer's file is the entry's.
      expect(fs.statSync(path.join(t, 'README')).ino).toBe(fs.statSync(path.join(entry, 'tree', 'README')).ino);
      // Read-only, so no build rewrites what the others share.
      expect(fs.statSync(path.join(t, 'bin', 'tool')).mode & 0o222).toBe(0);
    }
    expect(fs.readdirSync(path.join(root, '.incoming'))).toEqual([]);
  });

  it('a damaged entry (a truncated file) is dropped and filled again', async () => {
    const root = tmpDir('rbp-dc-');
    const calls = { n: 0 };
    await installShared({ root, spec, arch: 'amd64', target: path.join(tmpDir(), 'a'), log: quiet(), fill: slowFill(0, calls) });
    const { dir, name } = entryName(spec, 'amd64');
    const readme = path.join(root, dir, name, 'tree', 'README');
    fs.chmodSync(readme, 0o644);
    fs.truncateSync(readme, 10);
    const r = await installShared({ root, spec, arch: 'amd64', target: path.join(tmpDir(), 'b'), log: quiet(), fill: slowFill(0, calls) });
    expect(r.how).toBe('filled');
    expect(calls.n).toBe(2);
    expect(fs.statSync(readme).size).toBe(10_000);
  });

  it('a fill that fails leaves no entry and no litter; the next one fills it', async () => {
    const root = tmpDir('rbp-dc-');
    const target = path.join(tmpDir(), 'a');
    await expect(
      installShared({ root, spec, arch: 'amd64', target, log: quiet(), fill: async () => Promise.reject(new Error('checksum mismatch')) }),
    ).rejects.toThrow('checksum mismatch');
    const { dir } = entryName(spec, 'amd64');
    expect(fs.existsSync(path.join(root, dir))).toBe(false);
    expect(fs.readdirSync(path.join(root, '.incoming'))).toEqual([]);
    const calls = { n: 0 };
    expect((await installShared({ root, spec, arch: 'amd64', target, log: quiet(), fill: slowFill(0, calls) })).how).toBe('filled');
  });

  it('the litter of a fill whose process is gone is swept; a live one is left alone', () => {
    const root = tmpDir('rbp-dc-');
    const dead = path.join(root, '.incoming', '999999999-dead');
    const live = path.join(root, '.incoming', `${process.ppid}-live`);
    for (const d of [dead, live]) fs.mkdirSync(d, { recursive: true });
    expect(sweepLitter(root, 0).map((l) => l.path)).toEqual([dead]);
  });
});

describe('the fill lock', () => {
  it('is held once; a holder that is gone (its pid dead) loses it at once; a live one keeps it', async () => {
    const file = path.join(tmpDir('rbp-lock-'), 'x.lock');
    const a = tryLock(file)!;
    expect(a).toBeDefined();
    expect(tryLock(file)).toBeUndefined();
    a.release();
    expect(fs.existsSync(file)).toBe(false);
    fs.writeFileSync(file, `${os.hostname()} 999999999 deadbeef\n`);
    const b = tryLock(file);
    expect(b).toBeDefined();
    expect(fs.readFileSync(file, 'utf8')).toContain(` ${process.pid} `);
    b!.release();
    fs.writeFileSync(file, `${os.hostname()} ${process.ppid} alive\n`);
    expect(await lock(file, 300)).toBeUndefined();
  });
});
