/**
 * Builds on a full disk, with real small file systems (a 12 MiB tmpfs; Node.js takes ~180 MiB
 * unpacked): the download cache there, then OUT there. Each build ends with one user error that
 * names the folder, its file system, the room needed and the fix, never a stack trace; the
 * download cache keeps no half-filled entry, no litter, no lock, and an entry it holds stays valid;
 * the next build, with room, succeeds. A buildpack's own write into read-only layers is one error too.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execa } from 'execa';
import { writeFailureCode } from '../../lib/disk.ts';
import { readEntry } from '../../lib/deps/download-cache.ts';
import { tryLock } from '../../lib/deps/fill-lock.ts';
import { unpack } from '../../lib/deps/unpack.ts';
import { parseRenderedError } from '../../lib/errors.ts';
import { scanTree } from '../../lib/tree-digest.ts';
import { describeNeeding } from '../helpers/requirement.ts';
import { FIXTURES, RBP, ROOT, tmpDir } from '../helpers/rbp.ts';
import { mountSmallFs, smallFsRequirement, type SmallFs } from '../helpers/small-fs.ts';

const mounting = smallFsRequirement('full-disk tests');
const APP = path.join(FIXTURES, 'node-hello');

/** `rbp build APP --out out` where `fsys` is seen, with the download cache at `cache`. */
async function build(fsys: SmallFs, out: string, cache: string, more: string[] = []): Promise<{ exitCode: number; all: string }> {
  const r = await fsys.run('node', ['--', RBP, 'build', APP, '--out', out, '--type', 'node', ...more], {
    env: { NO_COLOR: '1', RBP_DOWNLOAD_CACHE: cache, XDG_CACHE_HOME: tmpDir('rbp-full-xdg-') },
    all: true,
    reject: false,
  });
  return { exitCode: r.exitCode ?? -1, all: String(r.all) };
}

/** The one error block a failed build shows, without a stack trace anywhere in its log. */
function oneError(all: string) {
  expect(all, 'no stack trace').not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  expect(all.match(/^! ERROR /gm), all).toHaveLength(1);
  return parseRenderedError(all)!;
}

/** The download cache's entries of `id` that are complete (entry.json) and match their recorded digest. */
function validEntries(cache: string, id: string): string[] {
  const dir = path.join(cache, id);
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  return names.filter((n) => {
    const record = readEntry(path.join(dir, n));
    return scanTree(path.join(dir, n, 'tree')).digest === record?.digest;
  });
}

/** No fill left behind: nothing in .incoming, no lock held. */
function noLitter(cache: string): void {
  for (const sub of ['.incoming', '.locks']) {
    const dir = path.join(cache, sub);
    expect(fs.existsSync(dir) ? fs.readdirSync(dir) : [], `${sub} of ${cache}`).toEqual([]);
  }
}

describeNeeding(mounting, 'a build on a full file system', () => {
  // One file system for each test: the first leaves Node.js in its download cache.
  const small: SmallFs[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) small.push(await mountSmallFs(mounting.value(), '12m'));
  });
  afterAll(async () => {
    for (const f of small) await f.close();
  });

  it('the download cache on a full file system: one error naming it and the room Node.js needs; no partial entry; with room, the next build fills it', async () => {
    const fsys = small[0]!;
    const cache = path.join(fsys.dir, 'downloads');
    const out = path.join(tmpDir('rbp-full-out-'), 'out');
    const first = await build(fsys, out, cache);
    expect(first.exitCode, first.all).toBe(51);
    const error = oneError(first.all);
    expect(error.id).toBe('disk/full');
    expect(error.title).toMatch(/^No room for node \S+ in the download cache: its file system is full$/);
    expect(first.all).toContain(`! Seen: folder: "${cache}" (the tmpfs file system mounted at ${fsys.dir}: 12.0 MiB, `);
    expect(error.rule).toMatch(/this needs about \d+\.\d MiB \(a \d+\.\d MiB download and about \d+\.\d MiB unpacked\), and [\d.]+ (KiB|MiB|B) is free/);
    expect(error.fix).toContain(`on the tmpfs file system mounted at ${fsys.dir}`);
    expect(error.fix).toContain('set RBP_DOWNLOAD_CACHE to a folder on a larger file system');
    expect(validEntries(fsys.seen(cache), 'node')).toEqual([]);
    noLitter(fsys.seen(cache));
    expect(fs.existsSync(out)).toBe(false);

    await fsys.resize('400m');
    const second = await build(fsys, out, cache);
    expect(second.exitCode, second.all).toBe(0);
    expect(second.all).toContain(`kept in the download cache: ${path.join(cache, 'node')}/`);
    expect(validEntries(fsys.seen(cache), 'node')).toHaveLength(1);
    noLitter(fsys.seen(cache));
  }, 300_000);

  it('OUT on a full file system: one error naming the layer and its file system; the download cache keeps its entry; with room, the next build links it', async () => {
    const fsys = small[1]!;
    // The run's shared download cache, on the ordinary disk: Node.js is downloaded once for all tests.
    const cache = process.env.RBP_DOWNLOAD_CACHE ?? tmpDir('rbp-full-downloads-');
    const out = path.join(fsys.dir, 'out');
    const first = await build(fsys, out, cache);
    expect(first.exitCode, first.all).toBe(51);
    const error = oneError(first.all);
    expect(error.id).toBe('disk/full');
    expect(error.title).toMatch(/^No room for node \S+ in the layer node: its file system is full$/);
    expect(first.all).toContain(`! Seen: folder: "${out}/layers/rbp_node/node" (the tmpfs file system mounted at ${fsys.dir}: 12.0 MiB, `);
    expect(error.rule).toMatch(/this needs about \d+\.\d MiB \(node \S+ unpacked\)/);
    expect(error.fix).toContain('an --out folder on a larger file system');
    expect(first.all).not.toContain('is damaged');
    // The shared cache may hold other Node.js versions of other tests: this build's one is valid.
    const version = /^No room for node (\S+) /.exec(error.title)![1]!;
    expect(validEntries(cache, 'node').filter((n) => n.startsWith(`${version}-`))).toHaveLength(1);
    noLitter(cache);

    await fsys.resize('400m');
    const second = await build(fsys, out, cache);
    expect(second.exitCode, second.all).toBe(0);
    expect(second.all).not.toMatch(/- download \S+node-linux/);
    expect(second.all).toContain(`linked from the download cache ${cache}`);
  }, 300_000);

  it('OUT filled up by a build that needs more: that build fails with the one error, and the previous build in OUT is as it was', async () => {
    const fsys = small[2]!;
    await fsys.resize('400m');
    const cache = process.env.RBP_DOWNLOAD_CACHE ?? tmpDir('rbp-full-downloads-');
    const out = path.join(fsys.dir, 'out');
    expect((await build(fsys, out, cache)).exitCode).toBe(0);
    const before = scanTree(fsys.seen(out)).digest;
    // What is left free now is less than another Node.js needs.
    await fsys.run('sh', ['-c', `head -c $(( $(df -k --output=avail "${fsys.dir}" | tail -n 1) * 1024 - 8 * 1048576 )) /dev/zero > "${fsys.dir}/filler"`]);
    const r = await build(fsys, out, cache, ['--env', 'CC_NODE_VERSION=22']);
    expect(r.exitCode, r.all).toBe(51);
    expect(oneError(r.all).id).toBe('disk/full');
    expect(r.all).toContain(`The previous build in ${out} is unchanged.`);
    expect(scanTree(fsys.seen(out)).digest).toBe(before);
    expect(fs.existsSync(fsys.seen(`${out}.rbp-previous`))).toBe(false);
  }, 300_000);

  it('the layer cache on a full file system: one error naming it (exit 62); OUT is not made', async () => {
    const fsys = small[3]!;
    const downloads = process.env.RBP_DOWNLOAD_CACHE ?? tmpDir('rbp-full-downloads-');
    const out = path.join(tmpDir('rbp-full-out-'), 'out');
    const layerCache = path.join(fsys.dir, 'cache');
    const r = await build(fsys, out, downloads, ['--cache', layerCache]);
    expect(r.exitCode, r.all).toBe(62);
    const error = oneError(r.all);
    expect(error.id).toBe('disk/full');
    expect(error.title).toBe('No room left in the layer cache: its file system is full');
    expect(r.all).toContain(`! Seen: folder: "${layerCache}" (the tmpfs file system mounted at ${fsys.dir}: 12.0 MiB, `);
    expect(error.fix).toContain('give --cache a folder on a larger file system');
    expect(r.all).toContain(`${out} was not created.`);
    expect(fs.existsSync(out)).toBe(false);
  }, 300_000);
});

describeNeeding(mounting, 'unpacking and locking on a full file system', () => {
  let small: SmallFs | undefined;
  let archives: { gz: string; xz: string } | undefined;
  beforeAll(async () => {
    small = await mountSmallFs(mounting.value(), '2m');
    // 3 MiB that do not compress: more than the file system holds, unpacked.
    const src = tmpDir('rbp-unpack-src-');
    fs.mkdirSync(path.join(src, 'package', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(src, 'package', 'bin', 'tool'), crypto.randomBytes(3 * 2 ** 20), { mode: 0o755 });
    archives = { gz: path.join(src, 'tool.tgz'), xz: path.join(src, 'tool.tar.xz') };
    await execa('tar', ['-czf', archives.gz, '-C', src, 'package']);
    await execa('tar', ['-cJf', archives.xz, '-C', src, 'package']);
  });
  afterAll(async () => {
    await small?.close();
  });

  it.each([
    ['tar.gz', 'the system tar'],
    ['tar.xz', 'xz and the tar package'],
  ] as const)('a %s unpacked by %s: the write failure, not a damaged archive, and not a tree missing its file', async (archive, _by) => {
    const dest = small!.seen(path.join(small!.dir, archive));
    const spec = { id: 'tool', version: '1.0.0', archive, stripComponents: 1, bin: 'bin/tool' };
    const failed = await unpack(archive === 'tar.gz' ? archives!.gz : archives!.xz, dest, spec).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(writeFailureCode(failed), String(failed)).toBe('ENOSPC');
    fs.rmSync(dest, { recursive: true, force: true });
  });

  it('a fill lock that cannot be written is not left behind empty, holding other builds off', () => {
    const dir = small!.seen(path.join(small!.dir, 'locks'));
    fs.mkdirSync(dir, { recursive: true });
    const filler = path.join(dir, 'filler');
    let room = true;
    while (room) {
      try {
        fs.appendFileSync(filler, Buffer.alloc(64 * 1024));
      } catch {
        room = false;
      }
    }
    const lockFile = path.join(dir, 'x.lock');
    expect(() => tryLock(lockFile)).toThrow(/ENOSPC/);
    expect(fs.existsSync(lockFile)).toBe(false);
    fs.rmSync(filler);
    tryLock(lockFile)!.release();
  });
});

describeNeeding(mounting, "a buildpack's own write on a read-only file system", () => {
  let readOnly: SmallFs | undefined;
  beforeAll(async () => {
    readOnly = await mountSmallFs(mounting.value(), '1m', true);
  });
  afterAll(async () => {
    await readOnly?.close();
  });

  it('layers on a read-only file system: bin/build fails with one error naming the folder, not a stack trace', async () => {
    const fsys = readOnly!;
    const app = tmpDir('rbp-ro-app-');
    fs.writeFileSync(path.join(app, 'index.html'), '<p>hi</p>\n');
    const dir = tmpDir('rbp-ro-cnb-');
    fs.mkdirSync(path.join(dir, 'platform'));
    fs.writeFileSync(path.join(dir, 'plan.toml'), '');
    const bp = path.join(ROOT, 'dist', 'buildpacks', 'static');
    const r = await fsys.run(process.execPath, [path.join(bp, 'lib', 'build.cjs')], {
      cwd: app,
      env: {
        NO_COLOR: '1',
        CNB_LAYERS_DIR: fsys.dir,
        CNB_PLATFORM_DIR: path.join(dir, 'platform'),
        CNB_BUILDPACK_DIR: bp,
        CNB_BP_PLAN_PATH: path.join(dir, 'plan.toml'),
      },
      all: true,
      reject: false,
    });
    const all = String(r.all);
    expect(r.exitCode, all).toBe(1);
    const error = oneError(all);
    expect(error.id).toBe('disk/read-only');
    expect(all).toContain(`! Seen: folder: "${fsys.dir}" (the tmpfs file system mounted at ${fsys.dir}: 1.0 MiB, `);
    expect(error.fix).toBe(`Mount the tmpfs file system mounted at ${fsys.dir} read-write.`);
  });
});
