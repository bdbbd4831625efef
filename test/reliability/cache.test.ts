/**
 * Cache integrity (issue 11): a damaged cache entry (TOML that does not parse, a file where a folder
 * should be, a truncated binary) is dropped with a warning and the buildpack builds the layer again;
 * nothing damaged is restored as if it were good.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { listingFile, treeDigest } from '../../lib/cache-check.ts';
import { bpArgs, launchToml, passWith, scriptedApp, writeScripts } from '../lifecycle/helpers.ts';

/** A buildpack that reports whether its tool layer came back, and (re)writes it with a 4 KiB "binary". */
const BUILD = [
  'L="$CNB_LAYERS_DIR/tool"',
  'if [ -f "$L/bin/tool" ]; then echo "tool restored: $(wc -c < "$L/bin/tool") bytes"; else echo "tool: none"; fi',
  'if [ ! -f "$L/bin/tool" ]; then rm -rf "$L"; mkdir -p "$L/bin"; head -c 4096 /dev/zero > "$L/bin/tool"; fi',
  'printf "[types]\\nlaunch = true\\ncache = true\\n[metadata]\\nv = 1\\n" > "$L.toml"',
  'mkdir -p "$CNB_LAYERS_DIR/dl"',
  'echo cached > "$CNB_LAYERS_DIR/dl/data"',
  'printf "[types]\\ncache = true\\n" > "$CNB_LAYERS_DIR/dl.toml"',
  launchToml('[[processes]]\ntype = "web"\ncommand = ["true"]\ndefault = true'),
].join('\n');

/** Builds twice; between the builds `damage` gets the buildpack's folder in the cache and in OUT. */
async function builtTwice(
  damage: (cache: string, outLayers: string) => void,
  explicitCache = false,
): Promise<{ second: string; code: number; cache: string; out: string }> {
  const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
  const out = path.join(tmpDir('rbp-out-'), 'out');
  const cache = explicitCache ? path.join(tmpDir('rbp-cache-'), 'cache') : `${out}.rbp-cache`;
  const cacheArgs = explicitCache ? ['--cache', cache] : [];
  const first = await rbp(['build', app, '--out', out, ...bpArgs('a'), ...cacheArgs]);
  expect(first.exitCode).toBe(0);
  expect(first.stdout).toContain('tool: none');
  damage(path.join(cache, 'test_a'), path.join(out, 'layers', 'test_a'));
  const second = await rbp(['build', app, '--out', out, ...bpArgs('a'), ...cacheArgs]);
  return { second: second.all, code: second.exitCode, cache, out };
}

/** Every inode under `dir` (files only). */
function inodes(dir: string): Set<number> {
  const found = new Set<number>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) found.add(fs.statSync(p).ino);
    }
  };
  walk(dir);
  return found;
}

describe('a damaged cache entry is dropped with a warning', () => {
  it('an intact cache is restored (control)', async () => {
    const r = await builtTwice(() => undefined);
    expect(r.code).toBe(0);
    expect(r.second).toContain('tool restored: 4096 bytes');
    expect(r.second).not.toContain('damaged');
  });

  it('the cache beside OUT and OUT share no file: a launch+cache layer’s only copy is OUT', async () => {
    const r = await builtTwice(() => undefined);
    expect(r.code).toBe(0);
    const shared = [...inodes(r.cache)].filter((i) => inodes(r.out).has(i));
    expect(shared).toEqual([]);
    expect(fs.existsSync(path.join(r.cache, 'test_a', 'tool'))).toBe(false);
  });

  it('a truncated binary in a launch+cache tool layer (its copy in OUT): not reused, rebuilt whole', async () => {
    const r = await builtTwice((_c, o) => fs.truncateSync(path.join(o, 'tool', 'bin', 'tool'), 100));
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/tool in the previous OUT is damaged and is not reused');
    expect(r.second).toContain('tool: none');
    expect(r.second).not.toContain('tool restored');
    expect(fs.statSync(path.join(r.out, 'layers', 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });

  it('a truncated binary in an explicit --cache: dropped, rebuilt whole', async () => {
    const r = await builtTwice((c) => fs.truncateSync(path.join(c, 'tool', 'bin', 'tool'), 100), true);
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/tool is damaged and is dropped');
    expect(r.second).toContain('tool: none');
    expect(fs.statSync(path.join(r.cache, 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
    expect(fs.statSync(path.join(r.out, 'layers', 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });

  it('a layer TOML that does not parse', async () => {
    const r = await builtTwice((c) => fs.writeFileSync(path.join(c, 'tool.toml'), '[types\nlaunch = ='));
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/tool is damaged and is dropped');
    expect(r.second).toContain('tool: none');
    expect(r.second).not.toMatch(/\n\s+at /);
  });

  it('a file where the layer folder should be', async () => {
    const r = await builtTwice((c) => {
      fs.rmSync(path.join(c, 'dl'), { recursive: true });
      fs.writeFileSync(path.join(c, 'dl'), 'not a folder');
    });
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/dl is damaged and is dropped (a file stands where its folder should be)');
  });

  it('a removed file in a cache-only layer', async () => {
    const r = await builtTwice((c) => fs.rmSync(path.join(c, 'dl', 'data')));
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/dl is damaged and is dropped');
  });
});

/** The processes whose command line holds `mark`. */
function runningWith(mark: string): string[] {
  return fs.readdirSync('/proc').filter((p) => {
    try {
      return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(mark);
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** The digest the cache recorded for `test_a/<layer>` (without the `out:` prefix of a layer kept in OUT). */
function recorded(cache: string, layer: string): string | undefined {
  const text = fs.readFileSync(path.join(cache, '.rbp-cache'), 'utf8');
  const m = new RegExp(`"test_a/${layer}" = "(?:out:)?([0-9a-f]+)"`).exec(text);
  return m?.[1];
}

describe('a layer restore linked and nobody touched is exported without a second walk (issue 14)', () => {
  /** Builds with BUILD, then with `second` (a script run after BUILD's lines), and returns the digests. */
  async function rebuilt(second: string, explicitCache: boolean) {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = explicitCache ? path.join(tmpDir('rbp-cache-'), 'cache') : `${out}.rbp-cache`;
    const cacheArgs = explicitCache ? ['--cache', cache] : [];
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a'), ...cacheArgs])).exitCode).toBe(0);
    const cachedTool = path.join(cache, 'test_a', 'tool');
    const before = explicitCache ? fs.statSync(cachedTool).ino : undefined;
    writeScripts(app, { 'a/build': `${BUILD}\n${second}` });
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a'), ...cacheArgs]);
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    return { out, cache, r, before, cachedTool };
  }

  it.each([false, true])('unchanged (explicit cache: %s): the record still matches the layer', async (explicit) => {
    const { out, cache, before, cachedTool } = await rebuilt('true', explicit);
    expect(recorded(cache, 'tool')).toBe(treeDigest(path.join(out, 'layers', 'test_a', 'tool')));
    // An explicit cache's folder moved on whole (same folder), still sharing its files with OUT.
    if (explicit) {
      expect(fs.statSync(cachedTool).ino).toBe(before);
      expect(fs.statSync(path.join(cachedTool, 'bin', 'tool')).ino).toBe(fs.statSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool')).ino);
    }
  });

  it.each([false, true])('a file added to the restored layer (explicit cache: %s) is in the new record', async (explicit) => {
    const { out, cache, r } = await rebuilt('echo more > "$CNB_LAYERS_DIR/tool/bin/extra"', explicit);
    const digest = treeDigest(path.join(out, 'layers', 'test_a', 'tool'));
    expect(recorded(cache, 'tool')).toBe(digest);
    if (explicit) expect(fs.readFileSync(path.join(cache, 'test_a', 'tool', 'bin', 'extra'), 'utf8')).toBe('more\n');
    expect(r.all).not.toContain('damaged');
  });

  it('an export that fails after the explicit cache’s folder moved on puts it back', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = path.join(tmpDir('rbp-cache-'), 'cache');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache])).exitCode).toBe(0);
    const before = fs.statSync(path.join(cache, 'test_a', 'tool')).ino;
    // `zz` sorts after `tool`: export has moved tool's cached folder on when it finds zz empty.
    writeScripts(app, { 'a/build': `${BUILD}\nprintf "[types]\\nlaunch = true\\ncache = true\\n" > "$CNB_LAYERS_DIR/zz.toml"` });
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache]);
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('has cache = true but has no contents');
    expect(fs.statSync(path.join(cache, 'test_a', 'tool')).ino).toBe(before);
    expect(fs.statSync(path.join(cache, 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
    expect(fs.existsSync(`${cache}.rbp-new`)).toBe(false);
  });
});

describe('the previous OUT’s folder of a layer left alone is the next build’s spare (issue 14)', () => {
  async function builtThrice(beforeThird: (spare: string) => void, third = BUILD) {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = `${out}.rbp-cache`;
    for (let i = 0; i < 2; i++) expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    const layer = path.join(out, 'layers', 'test_a', 'tool');
    beforeThird(spare);
    writeScripts(app, { 'a/build': third });
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    return { r, out, cache, spare, layer };
  }

  it('is kept beside OUT (not in the cache), moves into the next OUT whole, and the record still matches', async () => {
    let spareIno = 0;
    const { r, cache, spare, layer } = await builtThrice((s) => {
      // The second build restored the layer and left it alone: its previous-OUT folder was kept.
      expect(fs.statSync(path.join(s, 'bin', 'tool')).size).toBe(4096);
      spareIno = fs.statSync(s).ino;
    });
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(fs.statSync(layer).ino).toBe(spareIno);
    expect(recorded(cache, 'tool')).toBe(treeDigest(layer));
    // And this build's previous-OUT folder is the new spare, sharing its files with OUT.
    expect(fs.statSync(path.join(spare, 'bin', 'tool')).ino).toBe(fs.statSync(path.join(layer, 'bin', 'tool')).ino);
  });

  it('a spare that no longer matches the record is not used: the layer is linked from the previous OUT', async () => {
    let spareIno = 0;
    const { r, cache, layer } = await builtThrice((s) => {
      spareIno = fs.statSync(s).ino;
      fs.writeFileSync(path.join(s, 'bin', 'stray'), 'x');
    });
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(fs.statSync(layer).ino).not.toBe(spareIno);
    expect(fs.existsSync(path.join(layer, 'bin', 'stray'))).toBe(false);
    expect(recorded(cache, 'tool')).toBe(treeDigest(layer));
  });

  it('the build that makes the layer links its spare, so the first rebuild moves it in too', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    const layer = path.join(out, 'layers', 'test_a', 'tool');
    // A second name for each file of OUT's layer, made by export, and nothing left half made.
    expect(fs.statSync(path.join(spare, 'bin', 'tool')).ino).toBe(fs.statSync(path.join(layer, 'bin', 'tool')).ino);
    expect(fs.existsSync(`${out}.rbp-spare.rbp-new`)).toBe(false);
    const spareIno = fs.statSync(spare).ino;
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(fs.statSync(layer).ino).toBe(spareIno);
    expect(recorded(`${out}.rbp-cache`, 'tool')).toBe(treeDigest(layer));
  });

  it('a build that fails after export linked a new spare leaves no half-made one', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const spareIno = fs.statSync(path.join(`${out}.rbp-spare`, 'test_a', 'tool')).ino;
    // The layer is made again (a new spare is linked at export), then export fails on another layer.
    writeScripts(app, { 'a/build': `rm -rf "$CNB_LAYERS_DIR/tool"\n${BUILD}\nprintf "[types]\\nlaunch = true\\ncache = true\\n" > "$CNB_LAYERS_DIR/zz.toml"` });
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('has cache = true but has no contents');
    expect(fs.existsSync(`${out}.rbp-spare.rbp-new`)).toBe(false);
    // The spare this build took (and then removed: the build made the layer anew) is not put back.
    expect(fs.existsSync(path.join(`${out}.rbp-spare`, 'test_a', 'tool'))).toBe(false);
    writeScripts(app, { 'a/build': BUILD });
    const next = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(next.exitCode).toBe(0);
    expect(next.all).toContain('tool restored: 4096 bytes');
    expect(fs.statSync(path.join(`${out}.rbp-spare`, 'test_a', 'tool')).ino).not.toBe(spareIno);
  });

  it('a build that fails after taking the spare puts it back for the next build', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    const spareIno = fs.statSync(spare).ino;
    writeScripts(app, {
      'a/build': `${BUILD}
exit 3`,
    });
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).not.toBe(0);
    expect(fs.statSync(spare).ino).toBe(spareIno);
    writeScripts(app, { 'a/build': BUILD });
    const next = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(next.exitCode).toBe(0);
    expect(next.all).toContain('tool restored: 4096 bytes');
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'tool')).ino).toBe(spareIno);
  });

  it('a build that fails after taking the spare leaves the previous OUT whole', async () => {
    const { r, out, layer } = await builtThrice(() => undefined, 'rm -rf "$CNB_LAYERS_DIR/tool"; exit 3');
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain(`The previous build in ${out} is unchanged.`);
    expect(fs.statSync(path.join(layer, 'bin', 'tool')).size).toBe(4096);
  });
});

describe('with an explicit --cache, the spare is used too (issue 14)', () => {
  async function thrice(damage: (cachedTool: string) => void) {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = path.join(tmpDir('rbp-cache-'), 'cache');
    for (let i = 0; i < 2; i++) expect((await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache])).exitCode).toBe(0);
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    const spareIno = fs.statSync(spare).ino;
    damage(path.join(cache, 'test_a', 'tool'));
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache]);
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    const layer = path.join(out, 'layers', 'test_a', 'tool');
    expect(fs.statSync(layer).ino).toBe(spareIno);
    return { cache, layer };
  }

  it('moves the spare in, and the cached folder on', async () => {
    const { cache, layer } = await thrice(() => undefined);
    expect(recorded(cache, 'tool')).toBe(treeDigest(layer));
    expect(fs.statSync(path.join(cache, 'test_a', 'tool', 'bin', 'tool')).ino).toBe(fs.statSync(path.join(layer, 'bin', 'tool')).ino);
  });

  it('a cached folder that lost a file is not moved on: the new cache is linked from OUT, whole', async () => {
    const { cache, layer } = await thrice((c) => fs.rmSync(path.join(c, 'bin', 'tool')));
    expect(recorded(cache, 'tool')).toBe(treeDigest(layer));
    expect(treeDigest(path.join(cache, 'test_a', 'tool'))).toBe(treeDigest(layer));
    expect(fs.statSync(path.join(cache, 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });

  // The cached folder is checked by its folders' stamps, not by a second walk of its files: its
  // files are the spare's, which restore walks. The stamps catch a name replaced by another file,
  // even one of the same size, which a walk of sizes would not.
  it('records the cached folder’s stamps, and a file replaced by another of the same size is not moved on', async () => {
    const { cache, layer } = await thrice((c) => {
      const file = path.join(c, 'bin', 'tool');
      fs.writeFileSync(`${file}.new`, Buffer.alloc(4096, 1));
      fs.renameSync(`${file}.new`, file);
    });
    expect(fs.readFileSync(path.join(cache, '.rbp-cache'), 'utf8')).toMatch(/\[folders\]\n"test_a\/tool" = "[0-9a-f]{64}"/);
    const cachedTool = path.join(cache, 'test_a', 'tool', 'bin', 'tool');
    expect(fs.statSync(cachedTool).ino).toBe(fs.statSync(path.join(layer, 'bin', 'tool')).ino);
    expect(fs.readFileSync(cachedTool).equals(Buffer.alloc(4096))).toBe(true);
  });

  it('a file truncated in the cache, the spare’s too, is caught: the layer is built again', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = path.join(tmpDir('rbp-cache-'), 'cache');
    for (let i = 0; i < 2; i++) expect((await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache])).exitCode).toBe(0);
    // The same file in the spare, the cache and OUT: a build that reads OUT still sees it whole
    // until this truncation, which all three names show.
    fs.truncateSync(path.join(cache, 'test_a', 'tool', 'bin', 'tool'), 100);
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a'), '--cache', cache]);
    expect(r.exitCode).toBe(0);
    expect(r.all).toMatch(/test_a\/tool .*damaged/);
    expect(r.all).toContain('tool: none');
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });
});

describe('a folder checked by its listing (no folder read) is caught as a walk would catch it', () => {
  /** Three builds: from then on both folders that take turns as the spare, and the cache-only layer, have listings. */
  async function listed() {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = `${out}.rbp-cache`;
    for (let i = 0; i < 3; i++) expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    const listing = (layer: string, dir: string) => listingFile(cache, `test_a/${layer}`, dir);
    expect(fs.existsSync(listing('tool', spare))).toBe(true);
    expect(fs.existsSync(listing('tool', path.join(out, 'layers', 'test_a', 'tool')))).toBe(true);
    expect(fs.existsSync(listing('dl', path.join(cache, 'test_a', 'dl')))).toBe(true);
    const again = () => rbp(['build', app, '--out', out, ...bpArgs('a')]);
    return { app, out, cache, spare, listing, again };
  }

  it('the build that makes a layer leaves listings of both its folders, and of the cache-only one, for the first rebuild', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': BUILD });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const cache = `${out}.rbp-cache`;
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const has = (layer: string, dir: string) => fs.existsSync(listingFile(cache, `test_a/${layer}`, dir));
    const spare = path.join(`${out}.rbp-spare`, 'test_a', 'tool');
    expect(has('tool', spare)).toBe(true);
    expect(has('tool', path.join(out, 'layers', 'test_a', 'tool'))).toBe(true);
    expect(has('dl', path.join(cache, 'test_a', 'dl'))).toBe(true);
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(r.all).not.toContain('damaged');
  });

  it('intact: restored whole, and the listings go on to the next cache', async () => {
    const { out, spare, listing, again } = await listed();
    const spareIno = fs.statSync(spare).ino;
    const r = await again();
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(r.all).not.toContain('damaged');
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'tool')).ino).toBe(spareIno);
    expect(fs.existsSync(listing('tool', spare))).toBe(true);
  });

  it('a file truncated in OUT, the spare’s too (same file): not reused, rebuilt whole', async () => {
    const { out, again } = await listed();
    fs.truncateSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool'), 100);
    const r = await again();
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('cache: test_a/tool in the previous OUT is damaged and is not reused');
    expect(r.all).toContain('tool: none');
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });

  // The spare's folders are checked before the build, its files while it starts (restore.ts deferFiles).
  it('a file truncated in place is found while the build starts: that build is called off, its processes end, and it is made again', async () => {
    const { app, out, again } = await listed();
    // The build that finds the tool restored waits far beyond the test's time (sleep adds its
    // arguments up: the second one marks this test's process): only the call-off ends it.
    const mark = `0.${process.pid}${Date.now() % 100_000}`;
    writeScripts(app, { 'a/build': `if [ -f "$CNB_LAYERS_DIR/tool/bin/tool" ]; then sleep 600 ${mark}; fi\n${BUILD}` });
    fs.truncateSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool'), 100);
    const r = await again();
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain(
      'cache: test_a/tool is damaged (its files differ from what the build that cached it stored (bin/tool: 100 bytes, 4096 stored)): the build that started on it is called off',
    );
    // Nothing of it runs on or stands: the build made again checks first, and rebuilds the layer.
    expect(runningWith(mark)).toEqual([]);
    expect(r.all).toContain('building again, every restored layer checked before any buildpack runs');
    expect(r.all).toContain('cache: test_a/tool in the previous OUT is damaged and is not reused');
    expect(r.all).toContain('tool: none');
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'tool', 'bin', 'tool')).size).toBe(4096);
  });

  it('a file added to the spare: the spare is not used, the layer is linked from the previous OUT', async () => {
    const { out, cache, spare, again } = await listed();
    const spareIno = fs.statSync(spare).ino;
    fs.writeFileSync(path.join(spare, 'bin', 'stray'), 'x');
    const r = await again();
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    const layer = path.join(out, 'layers', 'test_a', 'tool');
    expect(fs.statSync(layer).ino).not.toBe(spareIno);
    expect(fs.existsSync(path.join(layer, 'bin', 'stray'))).toBe(false);
    expect(recorded(cache, 'tool')).toBe(treeDigest(layer));
  });

  it('a cache-only layer’s file written in place, or removed: dropped', async () => {
    for (const damage of [(f: string) => fs.appendFileSync(f, 'more'), (f: string) => fs.rmSync(f)]) {
      const { cache, again } = await listed();
      damage(path.join(cache, 'test_a', 'dl', 'data'));
      const r = await again();
      expect(r.exitCode).toBe(0);
      expect(r.all).toContain('cache: test_a/dl is damaged and is dropped');
    }
  });

  it('a listing of another form (an older rbp’s JSON), or that leaves a file out, is not trusted: the folder is walked', async () => {
    const { cache, spare, listing, again } = await listed();
    fs.writeFileSync(listing('tool', spare), '{ "digest": "not this form" }');
    const dl = listing('dl', path.join(cache, 'test_a', 'dl'));
    const l = fs.readFileSync(dl, 'utf8');
    // A text that leaves a file out, with the digest the cache records: the recheck finds another digest.
    fs.writeFileSync(dl, l.replace(/f\0data\0[0-9]+\0[0-9]+\n/, ''));
    expect(fs.readFileSync(dl, 'utf8')).not.toBe(l);
    fs.appendFileSync(path.join(cache, 'test_a', 'dl', 'data'), 'more');
    const r = await again();
    expect(r.exitCode).toBe(0);
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(r.all).toContain('cache: test_a/dl is damaged and is dropped');
  });
});
