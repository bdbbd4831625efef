/**
 * The layer cache (lib/platform/layer-cache.ts): a layer comes back as the last build left it, moved
 * or linked, never copied, and a copy of the cache (cp -a, a CI system's cache) serves as well; an
 * entry that is not as it was left (TOML that does not parse or holds other metadata, a file where a
 * folder should be, a folder a failed build took) is dropped with a warning and built again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';

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

describe('the layer cache', () => {
  it('an intact cache is restored, its layers moved or linked, never copied', async () => {
    let before = new Set<number>();
    const r = await builtTwice((_c, o) => (before = inodes(path.join(o, 'tool'))));
    expect(r.code).toBe(0);
    expect(r.second).toContain('tool restored: 4096 bytes');
    expect(r.second).not.toContain('dropped');
    expect(inodes(path.join(r.out, 'layers', 'test_a', 'tool'))).toEqual(before);
  });

  it('keeps its own folder of a launch layer as hard links to OUT’s files, and a cache-only layer in the cache alone', async () => {
    const r = await builtTwice(() => undefined);
    expect(r.code).toBe(0);
    expect(inodes(path.join(r.cache, 'test_a', 'tool'))).toEqual(inodes(path.join(r.out, 'layers', 'test_a', 'tool')));
    expect(fs.readFileSync(path.join(r.cache, 'test_a', 'dl', 'data'), 'utf8')).toBe('cached\n');
    expect(fs.existsSync(path.join(r.out, 'layers', 'test_a', 'dl'))).toBe(false);
  });

  it('the same with an explicit --cache', async () => {
    const r = await builtTwice(() => undefined, true);
    expect(r.code).toBe(0);
    expect(r.second).toContain('tool restored: 4096 bytes');
    expect(inodes(path.join(r.cache, 'test_a', 'tool'))).toEqual(inodes(path.join(r.out, 'layers', 'test_a', 'tool')));
  });

  it('a copy of the cache (cp -a, as a CI system keeps one) is restored as the cache itself', async () => {
    const r = await builtTwice((c) => {
      const copy = `${c}.copy`;
      fs.cpSync(c, copy, { recursive: true, preserveTimestamps: true });
      fs.rmSync(c, { recursive: true });
      fs.renameSync(copy, c);
    }, true);
    expect(r.code).toBe(0);
    expect(r.second).toContain('tool restored: 4096 bytes');
    expect(r.second).not.toContain('dropped');
  });

  it('a layer whose TOML holds other metadata than the last build recorded is dropped and built again', async () => {
    const r = await builtTwice((c) => fs.writeFileSync(path.join(c, 'tool.toml'), '[types]\nlaunch = true\ncache = true\n[metadata]\nv = 2\n'), true);
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/tool is not as the last build left it');
    expect(r.second).toContain('tool: none');
  });

  it('a layer TOML that does not parse is dropped, without a stack trace', async () => {
    const r = await builtTwice((c) => fs.writeFileSync(path.join(c, 'tool.toml'), '[types\nlaunch = ='));
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/tool is damaged and is dropped');
    expect(r.second).toContain('tool: none');
    expect(r.second).not.toMatch(/\n\s+at /);
  });

  it('a file where the layer folder should be is dropped', async () => {
    const r = await builtTwice((c) => {
      fs.rmSync(path.join(c, 'dl'), { recursive: true });
      fs.writeFileSync(path.join(c, 'dl'), 'not a folder');
    });
    expect(r.code).toBe(0);
    expect(r.second).toContain('cache: test_a/dl is not as the last build left it');
  });

  it('after a build that failed, a launch layer it had restored is linked from the previous build and a cache-only one built again', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': `${BUILD}\n[ -f fail ] && exit 1\nexit 0` });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    fs.writeFileSync(path.join(app, 'fail'), '');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(51);
    fs.rmSync(path.join(app, 'fail'));
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('restored tool (from the previous build)');
    expect(r.all).toContain('tool restored: 4096 bytes');
    expect(r.all).not.toMatch(/restored .*\bdl\b/);
  });
});
