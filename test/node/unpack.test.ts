/**
 * lib/deps/unpack.ts, tar.gz: the system `tar` when PATH has one (the Node.js tarball unpacks in ~1-3 s
 * instead of ~9 s), else the `tar` package. Both give the same tree: components stripped, modes and
 * symlinks kept, files owned by the build user.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpack } from '../../lib/deps/unpack.ts';
import { tmpDir } from '../helpers/rbp.ts';

let work: string;
let archive: string;
const savedPath = process.env.PATH;

beforeAll(async () => {
  work = tmpDir('rbp-unpack-');
  const src = path.join(work, 'src');
  fs.mkdirSync(path.join(src, 'package', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(src, 'package', 'bin', 'tool'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
  fs.writeFileSync(path.join(src, 'package', 'README'), 'readme\n', { mode: 0o644 });
  fs.symlinkSync('bin/tool', path.join(src, 'package', 'tool-link'));
  archive = path.join(work, 'tool.tgz');
  // Owned by another uid inside the archive: unpacked, it must belong to whoever runs the build.
  await execa('tar', ['-czf', archive, '-C', src, '--owner=4242', '--group=4242', 'package']);
  expect((await execa('tar', ['-tvzf', archive])).stdout).toContain('4242/4242');
});
afterAll(() => {
  process.env.PATH = savedPath;
  fs.rmSync(work, { recursive: true, force: true });
});

function tree(dir: string) {
  return {
    tool: fs.readFileSync(path.join(dir, 'bin', 'tool'), 'utf8'),
    toolMode: fs.statSync(path.join(dir, 'bin', 'tool')).mode & 0o777,
    readmeMode: fs.statSync(path.join(dir, 'README')).mode & 0o777,
    link: fs.readlinkSync(path.join(dir, 'tool-link')),
    uid: fs.statSync(path.join(dir, 'bin', 'tool')).uid,
    top: fs.readdirSync(dir).sort(),
  };
}

const spec = { id: 'tool', version: '1.0.0', archive: 'tar.gz' as const, stripComponents: 1, bin: 'bin/tool' };

describe('unpack tar.gz', () => {
  it('uses the system tar when there is one', async () => {
    // A PATH whose `tar` records its arguments and runs the real one.
    const bin = path.join(work, 'spy');
    fs.mkdirSync(bin);
    const calls = path.join(work, 'calls');
    const real = ['/usr/bin/tar', '/bin/tar'].find((p) => fs.existsSync(p))!;
    fs.writeFileSync(path.join(bin, 'tar'), `#!/bin/sh\necho "$@" >> '${calls}'\nexec ${real} "$@"\n`, { mode: 0o755 });
    process.env.PATH = `${bin}:${savedPath}`;
    const dest = path.join(work, 'system');
    try {
      await unpack(archive, dest, spec);
    } finally {
      process.env.PATH = savedPath;
    }
    expect(fs.readFileSync(calls, 'utf8').trim()).toBe(`-xzf ${archive} -C ${dest} --strip-components=1 --no-same-owner`);
    expect(tree(dest)).toEqual({
      tool: '#!/bin/sh\necho tool\n',
      toolMode: 0o755,
      readmeMode: 0o644,
      link: 'bin/tool',
      uid: process.getuid!(),
      top: ['README', 'bin', 'tool-link'],
    });
  });

  it('falls back to the tar package without a system tar, with the same result', async () => {
    process.env.PATH = path.join(work, 'empty-path');
    const dest = path.join(work, 'node-tar');
    try {
      await unpack(archive, dest, spec);
    } finally {
      process.env.PATH = savedPath;
    }
    expect(tree(dest)).toEqual(tree(path.join(work, 'system')));
  });
});
