import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkListed,
  checkListedFolders,
  checkUntil,
  listedFilesDamage,
  listingFile,
  movedStamps,
  orderedStamps,
  parseUntil,
  sameStamps,
  scanTree,
  STAMP_SETTLE_MS,
  takeStamps,
  treeDigest,
  untilRecord,
  writeListing,
} from './cache-check.ts';

function tree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-scan-'));
  fs.mkdirSync(path.join(root, 'bin'));
  fs.mkdirSync(path.join(root, 'lib', 'x'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bin', 'tool'), 'abcd', { mode: 0o755 });
  fs.writeFileSync(path.join(root, 'lib', 'x', 'a.js'), 'x');
  fs.writeFileSync(path.join(root, 'lib-b'), 'hello');
  fs.symlinkSync('../lib/x/a.js', path.join(root, 'bin', 'a'));
  return root;
}

/** Sets every folder's times `ageMs` into the past, as a layer left since an earlier build. */
function age(root: string, ageMs: number): void {
  const t = new Date(Date.now() - ageMs);
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    fs.utimesSync(d, t, t);
  };
  walk(root);
}

describe('scanTree', () => {
  it('hashes every path in name order, folders before their contents, with type, mode, size and link target', () => {
    const root = tree();
    const mode = (p: string) => fs.lstatSync(path.join(root, p)).mode & 0o7777;
    // The record format caches of earlier builds hold: it must not change.
    const lines = [
      `d\0bin\0${mode('bin')}\n`,
      `l\0bin/a\0../lib/x/a.js\n`,
      `f\0bin/tool\0${mode('bin/tool')}\x004\n`,
      `d\0lib\0${mode('lib')}\n`,
      `d\0lib/x\0${mode('lib/x')}\n`,
      `f\0lib/x/a.js\0${mode('lib/x/a.js')}\x001\n`,
      `f\0lib-b\0${mode('lib-b')}\x005\n`,
    ];
    const scan = scanTree(root);
    expect(scan.digest).toBe(crypto.createHash('sha256').update(lines.join('')).digest('hex'));
    expect(scan.dirs).toEqual(['', 'bin', 'lib', 'lib/x']);
  });

  it('links a copy with the same digest, and then has no stamps (they would be the source’s)', () => {
    const root = tree();
    const to = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-scan-to-')), 'copy');
    const linked = scanTree(root, to);
    expect(linked.stamps).toBeUndefined();
    expect(scanTree(to).digest).toBe(linked.digest);
    expect(fs.statSync(path.join(to, 'bin', 'tool')).ino).toBe(fs.statSync(path.join(root, 'bin', 'tool')).ino);
  });

  it('stamps each folder from its own walk, as takeStamps would, so a change to any folder shows', () => {
    const root = tree();
    const scan = scanTree(root);
    expect(scan.stamps).toEqual(takeStamps(root, scan.dirs));
    expect(sameStamps(root, scan.stamps!)).toBe(true);
    // Past any clock tick, so the change gets a later time than the stamp.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STAMP_SETTLE_MS + 5);
    fs.writeFileSync(path.join(root, 'lib', 'x', 'new.js'), '');
    expect(sameStamps(root, scan.stamps!)).toBe(false);
    // A file where a stamped folder's parent was: not the same, and no error.
    fs.rmSync(path.join(root, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(root, 'lib'), '');
    expect(sameStamps(root, scan.stamps!)).toBe(false);
  });
});

describe('movedStamps', () => {
  it('keeps the walked stamps of a moved folder, and needs no wait when its folders changed long ago', () => {
    const root = tree();
    age(root, 60_000);
    const scan = scanTree(root);
    const moved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-moved-')), 'layer');
    fs.renameSync(root, moved);
    const m = movedStamps(moved, scan);
    expect(m.settleMs).toBe(0);
    expect(sameStamps(moved, m.stamps)).toBe(true);
    fs.mkdirSync(path.join(moved, 'bin', 'more'));
    expect(sameStamps(moved, m.stamps)).toBe(false);
  });

  it('waits out the clock tick when a folder may have changed within one of the move', () => {
    const root = tree();
    age(root, 60_000);
    // Stamped as late as the move (a later time than the move's, so however slow this machine is):
    // a change in the same tick could keep that stamp.
    const late = new Date(Date.now() + 10_000);
    fs.utimesSync(path.join(root, 'lib'), late, late);
    const scan = scanTree(root);
    const moved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-moved-')), 'layer');
    fs.renameSync(root, moved);
    expect(movedStamps(moved, scan).settleMs).toBe(STAMP_SETTLE_MS);
  });
});

describe('checkListed (its folders, then its files, by the listing)', () => {
  const tick = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STAMP_SETTLE_MS + 5);
  /** A tree, aged, its walk, and its listing in a cache of its own. */
  function listed(root = tree()) {
    age(root, 60_000);
    const scan = scanTree(root, undefined, true);
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-listing-'));
    writeListing(cache, 'bp/layer', root, scan, scan.stamps!);
    return { root, scan, cache };
  }

  it('gives the walk’s scan without reading a folder while nothing changed, and none once a file changed in place', () => {
    for (const change of [
      // Written in place (a package manager appending to its index): no folder changes, the size does.
      (root: string) => fs.appendFileSync(path.join(root, 'lib', 'x', 'a.js'), 'more'),
      (root: string) => fs.chmodSync(path.join(root, 'bin', 'tool'), 0o700),
      (root: string) => fs.chmodSync(path.join(root, 'lib'), 0o750),
    ]) {
      const { root, scan, cache } = listed();
      expect(checkListed(cache, 'bp/layer', root, scan.digest)).toMatchObject({
        digest: scan.digest,
        dirs: scan.dirs,
        stamps: scan.stamps,
        text: scan.text,
        listed: true,
      });
      change(root);
      expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
      expect(scanTree(root).digest).not.toBe(scan.digest);
    }
  });

  it('gives up (a walk is needed) when a name came or went in any folder, the root too', () => {
    for (const change of [
      (root: string) => fs.writeFileSync(path.join(root, 'lib', 'x', 'new.js'), ''),
      (root: string) => fs.rmSync(path.join(root, 'bin', 'a')),
      (root: string) => fs.writeFileSync(path.join(root, 'top'), ''),
      (root: string) => fs.renameSync(path.join(root, 'lib-b'), path.join(root, 'lib', 'b')),
    ]) {
      const { root, scan, cache } = listed();
      tick();
      change(root);
      expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    }
  });

  it('gives up for a file that is gone or became a folder though no folder’s stamp moved (as a copy of old stamps would show)', () => {
    for (const change of [
      (root: string) => fs.mkdirSync(path.join(root, 'lib-b')),
      (root: string) => fs.symlinkSync('lib', path.join(root, 'lib-b')),
      () => {},
    ]) {
      const { root, scan, cache } = listed();
      fs.rmSync(path.join(root, 'lib-b'));
      change(root);
      // The listing rewritten with the stamps the folders have now: only the files' half can tell.
      writeListing(cache, 'bp/layer', root, scan, takeStamps(root, scan.dirs));
      expect(checkListedFolders(cache, 'bp/layer', root, scan.digest)).toBeDefined();
      expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    }
  });

  it('gives up with a stamp short, or for a digest its listing does not name', () => {
    const { root, scan, cache } = listed();
    const ordered = orderedStamps(scan.text!, scan.stamps!);
    const file = listingFile(cache, 'bp/layer', root);
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(`\n${ordered.length}\n${ordered.join('\n')}\n`, `\n${ordered.length - 1}\n${ordered.slice(0, -1).join('\n')}\n`),
    );
    expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    const other = listed();
    expect(checkListed(other.cache, 'bp/layer', other.root, 'f'.repeat(64))).toBeUndefined();
  });
});

describe('listings', () => {
  it('check a folder as its walk would, and give way to a walk for a listing of another shape', () => {
    const root = tree();
    age(root, 60_000);
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-listing-'));
    const scan = scanTree(root, undefined, true);
    writeListing(cache, 'bp/layer', root, scan, scan.stamps!);
    const listed = checkListed(cache, 'bp/layer', root, scan.digest);
    expect(listed?.digest).toBe(scan.digest);
    expect(listed?.listed).toBe(true);
    // Another digest recorded: not trusted.
    expect(checkListed(cache, 'bp/layer', root, 'f'.repeat(64))).toBeUndefined();
    // A file written in place: the listing no longer gives the digest.
    fs.appendFileSync(path.join(root, 'lib-b'), '!');
    expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    // A listing of another form: no exception, a walk instead. An older rbp's JSON is no listing;
    // nor is one cut short, or whose stamps are not one per folder.
    const file = listingFile(cache, 'bp/layer', root);
    const written = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(path.join(root, 'lib-b'), '!');
    const intact = scanTree(root, undefined, true);
    writeListing(cache, 'bp/layer', root, intact, intact.stamps!);
    expect(checkListed(cache, 'bp/layer', root, intact.digest)?.listed).toBe(true);
    const good = fs.readFileSync(file, 'utf8');
    const [head, digest, count] = good.split('\n');
    for (const other of [
      JSON.stringify({ digest: intact.digest, lines: [1, 2], stamps: [...intact.stamps!] }),
      good.slice(0, `${head}\n${digest}\n${count}\n`.length + 3),
      good.replace(`${head}\n${digest}\n${count}\n`, `${head}\n${digest}\n${Number(count) - 1}\n`),
      good.replace(`${head}\n${digest}\n${count}\n`, `${head}\n${digest}\nmany\n`),
    ]) {
      fs.writeFileSync(file, other);
      expect(checkListed(cache, 'bp/layer', root, intact.digest)).toBeUndefined();
      expect(checkListedFolders(cache, 'bp/layer', root, intact.digest)).toBeUndefined();
    }
    expect(written).not.toBe(good);
  });
});

describe('a listing of names that hold newlines, non-ASCII letters, a link whose target holds a newline', () => {
  function oddTree(): string {
    const root = tree();
    fs.mkdirSync(path.join(root, 'dir\nwith newline'));
    fs.writeFileSync(path.join(root, 'dir\nwith newline', 'f\nd\u0000'.replace('\u0000', '')), 'abc');
    fs.writeFileSync(path.join(root, 'café ünï 名前.js'), '12345');
    fs.symlinkSync('target\nf\nlib-b', path.join(root, 'link\nname'));
    fs.writeFileSync(path.join(root, 'zz-after-link'), 'z');
    age(root, 60_000);
    return root;
  }

  it('is checked as the walk would: every record found, damage to any of them named', () => {
    const root = oddTree();
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-listing-'));
    const scan = scanTree(root, undefined, true);
    writeListing(cache, 'bp/layer', root, scan, scan.stamps!);
    expect(checkListed(cache, 'bp/layer', root, scan.digest)).toMatchObject({ digest: scan.digest, listed: true });
    const early = checkListedFolders(cache, 'bp/layer', root, scan.digest)!;
    expect(early.dirs).toEqual(scan.dirs);
    expect(listedFilesDamage(root, early.text!)).toBeUndefined();
    // The files after the odd names are still checked, each by its own record.
    for (const [file, size] of [
      ['café ünï 名前.js', 5],
      ['zz-after-link', 1],
      ['dir\nwith newline/f\nd', 3],
    ] as const) {
      fs.truncateSync(path.join(root, file), 0);
      expect(listedFilesDamage(root, early.text!)).toBe(`its files differ from what the build that cached it stored (${file}: 0 bytes, ${size} stored)`);
      expect(checkListed(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
      fs.writeFileSync(path.join(root, file), 'x'.repeat(size));
    }
    expect(checkListed(cache, 'bp/layer', root, scan.digest)).toMatchObject({ digest: scanTree(root).digest, listed: true });
  });
});

describe('a listing checked in two halves (its folders, then, while the build starts, its files)', () => {
  function listedTree() {
    const root = tree();
    age(root, 60_000);
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-listing-'));
    const scan = scanTree(root, undefined, true);
    writeListing(cache, 'bp/layer', root, scan, scan.stamps!);
    return { root, cache, scan };
  }

  it('intact: the folders prove the names, the files their sizes; the scan is the listing’s, to carry on', () => {
    const { root, cache, scan } = listedTree();
    const early = checkListedFolders(cache, 'bp/layer', root, scan.digest);
    expect(early).toMatchObject({ digest: scan.digest, listed: true, text: scan.text });
    expect(early?.dirs).toEqual(scan.dirs);
    expect(early?.stamps).toEqual(scan.stamps);
    // Moved, as restore moves a spare in: the files are checked where they are now.
    const moved = `${root}-moved`;
    fs.renameSync(root, moved);
    expect(listedFilesDamage(moved, early!.text!)).toBeUndefined();
  });

  it('a name added or removed shows in the folders’ half: not trusted, walked', () => {
    for (const change of [(r: string) => fs.writeFileSync(path.join(r, 'lib', 'x', 'new.js'), ''), (r: string) => fs.rmSync(path.join(r, 'bin', 'tool'))]) {
      const { root, cache, scan } = listedTree();
      change(root);
      expect(checkListedFolders(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    }
  });

  it('a file truncated or made executable in place keeps its folder’s stamp: the files’ half names it', () => {
    const { root, cache, scan } = listedTree();
    fs.truncateSync(path.join(root, 'bin', 'tool'), 2);
    const early = checkListedFolders(cache, 'bp/layer', root, scan.digest);
    expect(early).toBeDefined();
    expect(listedFilesDamage(root, early!.text!)).toBe('its files differ from what the build that cached it stored (bin/tool: 2 bytes, 4 stored)');
    const other = listedTree();
    fs.chmodSync(path.join(other.root, 'lib-b'), 0o755);
    expect(listedFilesDamage(other.root, checkListedFolders(other.cache, 'bp/layer', other.root, other.scan.digest)!.text!)).toBe(
      'its files differ from what the build that cached it stored (lib-b: mode 755, 644 stored)',
    );
  });

  it('a file the build removed or replaced by a folder after the folders’ half is its own change, not damage', () => {
    const { root, cache, scan } = listedTree();
    const early = checkListedFolders(cache, 'bp/layer', root, scan.digest)!;
    fs.rmSync(path.join(root, 'bin', 'tool'));
    fs.rmSync(path.join(root, 'lib-b'));
    fs.mkdirSync(path.join(root, 'lib-b'));
    expect(listedFilesDamage(root, early.text!)).toBeUndefined();
  });

  it('a listing whose lines do not give the digest it says is not trusted', () => {
    const { root, cache, scan } = listedTree();
    const file = listingFile(cache, 'bp/layer', root);
    const l = fs.readFileSync(file, 'utf8');
    // Leaves a file out: its files' half would have nothing to compare.
    const record = /f\0bin\/tool\0[0-9]+\0[0-9]+\n/.exec(l)![0];
    fs.writeFileSync(file, l.replace(record, ''));
    expect(checkListedFolders(cache, 'bp/layer', root, scan.digest)).toBeUndefined();
    expect(checkListedFolders(cache, 'bp/layer', root, 'f'.repeat(64))).toBeUndefined();
    expect(checkListedFolders(undefined, 'bp/layer', root, scan.digest)).toBeUndefined();
  });
});

describe('until: records (a cache-only layer moved on as the build left it)', () => {
  /** The file system's time now, as export takes it: a file written and read back. */
  const fsNow = (dir: string) => {
    const f = path.join(dir, '.now');
    fs.writeFileSync(f, '');
    const t = fs.lstatSync(f).mtimeMs;
    fs.rmSync(f);
    return t;
  };
  const tick = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STAMP_SETTLE_MS + 5);

  it('say their time and digest, and nothing else parses as one', () => {
    const digest = 'a'.repeat(64);
    expect(parseUntil(untilRecord(1795682412106.5442, digest))).toEqual({ time: 1795682412106.5442, digest });
    for (const other of [digest, `out:${digest}`, `until:x:${digest}`, 'until:12:abc', undefined]) expect(parseUntil(other)).toBeUndefined();
  });

  it('take what the build changed before the time, moved folder and all', () => {
    const root = tree();
    fs.appendFileSync(path.join(root, 'lib', 'x', 'a.js'), 'appended by the build');
    fs.writeFileSync(path.join(root, 'lib', 'x', 'new.js'), 'added by the build');
    const time = fsNow(os.tmpdir());
    tick();
    // Moved, as restore and export move it: its own change time moves, not its names'.
    const moved = `${root}-moved`;
    fs.renameSync(root, moved);
    const r = checkUntil(moved, time);
    expect(r.damage).toBeUndefined();
    expect(r.scan?.digest).toBe(treeDigest(moved));
    expect(r.scan?.text).toBeDefined();
  });

  it('take a hard link to one of its files made or removed elsewhere after the time: no change of it', () => {
    // pnpm and bun link their store's files into node_modules; a later build removes those links.
    const root = tree();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-links-'));
    fs.linkSync(path.join(root, 'lib-b'), path.join(elsewhere, 'b'));
    const time = fsNow(os.tmpdir());
    tick();
    fs.rmSync(path.join(elsewhere, 'b'));
    fs.linkSync(path.join(root, 'bin', 'tool'), path.join(elsewhere, 'tool'));
    expect(checkUntil(root, time).damage).toBeUndefined();
  });

  it('refuse a change after the time: a file written in place, a name removed at the top or below', () => {
    const changes = [
      (r: string) => fs.appendFileSync(path.join(r, 'lib', 'x', 'a.js'), '!'),
      (r: string) => fs.rmSync(path.join(r, 'lib-b')),
      (r: string) => fs.rmSync(path.join(r, 'bin', 'tool')),
    ];
    for (const change of changes) {
      const root = tree();
      const time = fsNow(os.tmpdir());
      tick();
      change(root);
      expect(checkUntil(root, time).damage).toBe('something in it changed after the build that cached it ended');
    }
  });
});
