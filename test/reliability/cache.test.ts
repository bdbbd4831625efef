/**
 * Cache integrity (issue 11): a damaged cache entry (TOML that does not parse, a file where a folder
 * should be, a truncated binary) is dropped with a warning and the buildpack builds the layer again;
 * nothing damaged is restored as if it were good.
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
async function builtTwice(damage: (cache: string, outLayers: string) => void, explicitCache = false): Promise<{ second: string; code: number; cache: string; out: string }> {
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
