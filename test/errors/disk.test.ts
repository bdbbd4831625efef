/**
 * A write that found no room or no rights (lib/disk.ts): which failures it is, and each of its
 * errors rendered once from fixed facts (a file system's free space moves; the real small file
 * systems are test/reliability/full-disk.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diskError, fileSystemOf, writeFailure, writeFailureCode, type FileSystem, type WriteTarget } from '../../lib/disk.ts';
import { renderUserError } from '../../lib/errors.ts';
import { tmpDir } from '../helpers/rbp.ts';

const tmpfs: FileSystem = { mountPoint: '/var/cache/rbp', type: 'tmpfs', size: 12 * 2 ** 20, free: 3.3 * 2 ** 20 };
const cache: WriteTarget = {
  folder: '/var/cache/rbp/downloads',
  what: 'the download cache',
  writing: 'node 24.0.0',
  needed: { bytes: 221 * 2 ** 20, how: 'a 49.1 MiB download and about 171.9 MiB unpacked' },
  elsewhere: 'set RBP_DOWNLOAD_CACHE to a folder on a larger file system (or to off: each build downloads its tools itself)',
};

const errno = (code: string, syscall: string, p?: string) =>
  Object.assign(new Error(`${code}: ${syscall}${p ? ` '${p}'` : ''}`), { code, syscall, ...(p ? { path: p } : {}) });

describe('a write without room or rights, rendered', () => {
  it('disk/full: the folder, its file system, the room needed and free, the fix', () => {
    expect(renderUserError(diskError('ENOSPC', cache, tmpfs, 'ENOSPC: no space left on device, write').data)).toMatchSnapshot();
  });

  it('disk/full over a quota, where the room needed is not known', () => {
    const layers: WriteTarget = { folder: '/srv/build/layers/rbp_node', what: "the buildpack's layers" };
    const ext4: FileSystem = { mountPoint: '/srv', type: 'ext4', size: 2 ** 40, free: 200 * 2 ** 30 };
    expect(
      renderUserError(diskError('EDQUOT', layers, ext4, "EDQUOT: disk quota exceeded, write '/srv/build/layers/rbp_node/node.toml'").data),
    ).toMatchSnapshot();
  });

  it('disk/read-only and disk/not-writable', () => {
    const layer: WriteTarget = { folder: '/workspace/out/layers/rbp_node/node', what: 'the layer node', writing: 'node 24.0.0', elsewhere: 'build elsewhere' };
    expect(renderUserError(diskError('EROFS', layer, tmpfs, "EROFS: mkdir '/workspace/out/layers/rbp_node/node'").data)).toMatchSnapshot();
    expect(
      renderUserError(diskError('EACCES', layer, undefined, "EACCES: permission denied, mkdir '/workspace/out/layers/rbp_node/node/bin' (as uid 1000)").data),
    ).toMatchSnapshot();
  });
});

describe('which failures are a disk that takes no more', () => {
  it('a full disk, a quota, a read-only mount: from Node.js and from a child (tar) alike', () => {
    expect(writeFailureCode(errno('ENOSPC', 'write'))).toBe('ENOSPC');
    expect(writeFailureCode(errno('EDQUOT', 'write'))).toBe('EDQUOT');
    expect(writeFailureCode(errno('EROFS', 'open', '/x/y'))).toBe('EROFS');
    const tar = Object.assign(new Error('Command failed with exit code 2: tar -xzf …'), {
      stderr: 'tar: package/bin/node: Cannot write: No space left on device\ntar: Exiting with failure status',
    });
    expect(writeFailureCode(tar)).toBe('ENOSPC');
    expect(writeFailure(tar, cache)?.data.details).toEqual(['tar: package/bin/node: Cannot write: No space left on device']);
    // GNU tar's own words for a short write, where no errno is said.
    expect(writeFailureCode(Object.assign(new Error('Command failed'), { stderr: 'tar: tool: Wrote only 9216 of 10240 bytes' }))).toBe('ENOSPC');
  });

  it('not a missing file, a network error, a damaged archive, or a file that cannot be read', () => {
    const dir = tmpDir('rbp-disk-');
    expect(writeFailureCode(errno('ENOENT', 'open', path.join(dir, 'gone')))).toBeUndefined();
    expect(writeFailureCode(errno('ECONNRESET', 'read'))).toBeUndefined();
    expect(writeFailureCode(Object.assign(new Error('Command failed'), { stderr: 'gzip: stdin: invalid compressed data--format violated' }))).toBeUndefined();
    expect(writeFailureCode(errno('EACCES', 'scandir', '/root/private'))).toBeUndefined();
    // EACCES where the folder takes writes: the file itself, not the disk.
    expect(writeFailureCode(errno('EACCES', 'open', path.join(dir, 'file')))).toBeUndefined();
    // Node.js's recursive mkdir says ENOENT for a folder it could not make; in a writable one it is a real ENOENT.
    expect(writeFailureCode(errno('ENOENT', 'mkdir', path.join(dir, 'a', 'b')))).toBeUndefined();
    expect(writeFailure(new Error('a bug'), cache)).toBeUndefined();
  });

  it('the file system of a folder, found from its nearest existing parent', () => {
    const dir = tmpDir('rbp-disk-');
    const found = fileSystemOf(path.join(dir, 'not', 'made', 'yet'))!;
    expect(found.size).toBeGreaterThan(0);
    expect(found.free).toBeLessThanOrEqual(found.size);
    if (fs.existsSync('/proc/self/mountinfo')) {
      const real = fs.realpathSync(dir);
      expect(real === found.mountPoint || real.startsWith(`${found.mountPoint === '/' ? '' : found.mountPoint}/`)).toBe(true);
      expect(found.type).toMatch(/^\S+$/);
    }
  });
});
