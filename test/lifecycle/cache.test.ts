/**
 * What a second build finds (cnb-spec.md §4 table): cached layers restored with their contents,
 * launch-only layers restored as metadata only and reused from the previous OUT, [types] never
 * restored, build=true layers not restored, and layers rebuilt when their metadata changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, passWith, scriptedApp, writeScripts } from './helpers.ts';

/** Build script helpers: a layer toml with these types and metadata. */
const toml = (name: string, types: string, metadata = '') =>
  `printf '[types]\\n${types.replaceAll('\n', '\\n')}\\n[metadata]\\n${metadata.replaceAll('\n', '\\n')}\\n' > "$CNB_LAYERS_DIR/${name}.toml"`;
const contents = (name: string, text: string) => `mkdir -p "$CNB_LAYERS_DIR/${name}" && printf '%s' '${text}' > "$CNB_LAYERS_DIR/${name}/data"`;
const dump = (name: string) =>
  `echo ">>> ${name}"; cat "$CNB_LAYERS_DIR/${name}.toml" 2>/dev/null || echo "(no toml)"; echo "<<< ${name}"; echo "${name} dir: $(cat "$CNB_LAYERS_DIR/${name}/data" 2>/dev/null || echo none)"`;

function section(stdout: string, name: string): string {
  return new RegExp(`>>> ${name}\\n([\\s\\S]*?)<<< ${name}`).exec(stdout)![1]!;
}

const web = 'cat > "$CNB_LAYERS_DIR/launch.toml" <<\'TOML\'\n[[processes]]\ntype = "web"\ncommand = ["true"]\ndefault = true\nTOML';

function layerStates(out: string): Record<string, string> {
  const info = parse(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')) as { layers: { name: string; state: string }[] };
  return Object.fromEntries(info.layers.map((l) => [l.name, l.state]));
}

describe('restore and reuse across two builds', () => {
  it('follows the lifecycle table: metadata-only reuse, cache restore with contents, no [types], rebuild on change', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        toml('meta', 'launch = true', 'version = "1"'),
        contents('meta', 'meta v1'),
        toml('cached', 'cache = true', 'version = "1"'),
        contents('cached', 'cached v1'),
        toml('both', 'launch = true\ncache = true', 'key = "k1"'),
        contents('both', 'both k1'),
        toml('buildlaunch', 'launch = true\nbuild = true', 'version = "1"'),
        contents('buildlaunch', 'bl v1'),
        toml('buildonly', 'build = true', 'version = "1"'),
        contents('buildonly', 'bo v1'),
        toml('dropped', 'launch = true', 'version = "1"'),
        contents('dropped', 'dropped v1'),
        web,
      ].join('\n'),
    });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const first = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(first.exitCode).toBe(0);
    expect(layerStates(out)).toEqual({ both: 'created', buildlaunch: 'created', cached: 'created', dropped: 'created', meta: 'created' });

    writeScripts(app, {
      'a/build': [
        ...['meta', 'cached', 'both', 'buildlaunch', 'buildonly', 'dropped'].map(dump),
        // meta: unchanged metadata, launch only: write the toml, not the folder
        toml('meta', 'launch = true', 'version = "1"'),
        // cached: keep the restored folder, say again what it is
        toml('cached', 'cache = true', 'version = "1"'),
        // both: metadata changed, rebuild
        'rm -rf "$CNB_LAYERS_DIR/both"',
        toml('both', 'launch = true\ncache = true', 'key = "k2"'),
        contents('both', 'both k2'),
        // dropped: not declared again (its restored toml has no [types])
        web,
      ].join('\n'),
    });
    const second = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(second.exitCode).toBe(0);
    const s = second.stdout;

    // restored tomls carry [metadata] and never [types]
    expect(parse(section(s, 'meta'))).toEqual({ metadata: { version: '1' } });
    expect(parse(section(s, 'cached'))).toEqual({ metadata: { version: '1' } });
    expect(parse(section(s, 'both'))).toEqual({ metadata: { key: 'k1' } });
    expect(parse(section(s, 'dropped'))).toEqual({ metadata: { version: '1' } });
    // folders: only cache=true layers come back
    expect(s).toContain('meta dir: none');
    expect(s).toContain('cached dir: cached v1');
    expect(s).toContain('both dir: both k1');
    expect(s).toContain('dropped dir: none');
    // build=true, cache=false: nothing restored, whatever launch says
    expect(section(s, 'buildlaunch')).toBe('(no toml)\n');
    expect(section(s, 'buildonly')).toBe('(no toml)\n');

    const layers = path.join(out, 'layers', 'test_a');
    expect(fs.readFileSync(path.join(layers, 'meta', 'data'), 'utf8')).toBe('meta v1'); // from the previous OUT
    expect(fs.readFileSync(path.join(layers, 'both', 'data'), 'utf8')).toBe('both k2');
    expect(fs.existsSync(path.join(layers, 'dropped'))).toBe(false);
    expect(fs.existsSync(path.join(layers, 'dropped.toml'))).toBe(false);
    // The cache keeps its own folder of each cache = true layer (a launch layer's: hard links to OUT's files).
    expect(fs.readdirSync(path.join(`${out}.rbp-cache`, 'test_a')).sort()).toEqual(['both', 'both.toml', 'cached', 'cached.toml']);
    expect(fs.statSync(path.join(`${out}.rbp-cache`, 'test_a', 'both', 'data')).ino).toBe(fs.statSync(path.join(layers, 'both', 'data')).ino);
    expect(fs.readFileSync(path.join(`${out}.rbp-cache`, 'test_a', 'cached', 'data'), 'utf8')).toBe('cached v1');
    expect(layerStates(out)).toEqual({ both: 'created', cached: 'restored', meta: 'reused' });
    expect(s).toMatch(/test\/a@0\.0\.1: restored both, cached, dropped \(metadata\), meta \(metadata\)/);
  });

  it('a cached layer not declared again is not cached again; --clear-cache restores nothing', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': [toml('c', 'cache = true'), contents('c', 'v1')].join('\n') });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    writeScripts(app, { 'a/build': dump('c') });
    const second = await rbp(['build', app, '--out', out, ...bpArgs('a'), '--clear-cache']);
    expect(second.stdout).toContain('c dir: none');
    expect(second.stdout).toContain('cache cleared (--clear-cache)');
    // the first build's cache is still gone after a --clear-cache build
    const third = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(third.stdout).toContain('c dir: none');
  });

  it('an explicit --cache DIR is shared between OUT directories', async () => {
    const cache = path.join(tmpDir('rbp-cache-'), 'cache');
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': [dump('c'), toml('c', 'cache = true'), contents('c', 'shared')].join('\n') });
    const r1 = await rbp(['build', app, '--out', path.join(tmpDir(), 'out1'), ...bpArgs('a'), '--cache', cache]);
    expect(r1.stdout).toContain('c dir: none');
    const out2 = path.join(tmpDir(), 'out2');
    const r2 = await rbp(['build', app, '--out', out2, ...bpArgs('a'), '--cache', cache]);
    expect(r2.stdout).toContain('c dir: shared');
    expect(fs.existsSync(`${out2}.rbp-cache`)).toBe(false);
    expect(fs.readFileSync(path.join(cache, 'test_a', 'c', 'data'), 'utf8')).toBe('shared');
  });

  it('store.toml is kept from the previous build', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'printf \'[metadata]\\nruns = 1\\n\' > "$CNB_LAYERS_DIR/store.toml"' });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    writeScripts(app, { 'a/build': 'echo ">>> store"; cat "$CNB_LAYERS_DIR/store.toml"; echo "<<< store"' });
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(parse(section(r.stdout, 'store'))).toEqual({ metadata: { runs: 1 } });
  });

  it('a cache-only store whose files a launch layer hard-links (pnpm, bun): each build leaves it to the next whole', async () => {
    // Each build adds a package to the store (a layer named `pkgs`: `store` is store.toml's name)
    // and makes the launch layer anew with links to the store's files.
    const build = (n: number) =>
      [
        'echo "pkgs before: $(ls "$CNB_LAYERS_DIR/pkgs" 2>/dev/null | tr "\\n" " ")"',
        toml('pkgs', 'cache = true'),
        `mkdir -p "$CNB_LAYERS_DIR/pkgs" && printf ${n} > "$CNB_LAYERS_DIR/pkgs/pkg-${n}"`,
        'rm -rf "$CNB_LAYERS_DIR/mods" && mkdir "$CNB_LAYERS_DIR/mods"',
        'for f in "$CNB_LAYERS_DIR"/pkgs/*; do ln "$f" "$CNB_LAYERS_DIR/mods/"; done',
        toml('mods', 'launch = true\ncache = true', `n = ${n}`),
      ].join('\n');
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': build(1) });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const runs = [];
    for (const n of [1, 2, 3]) {
      writeScripts(app, { 'a/build': build(n) });
      runs.push(await rbp(['build', app, '--out', out, ...bpArgs('a')]));
    }
    for (const r of runs) expect(r.exitCode).toBe(0);
    expect(runs[1]!.all).toContain('pkgs before: pkg-1 ');
    expect(runs[2]!.all).toContain('pkgs before: pkg-1 pkg-2 ');
    for (const r of runs) expect(r.all).not.toContain('dropped');
    expect(fs.readFileSync(path.join(out, 'layers', 'test_a', 'mods', 'pkg-3'), 'utf8')).toBe('3');
  });

  it('a cache-only layer the buildpack writes into in place, or adds to, is recorded as it left it: the next build restores it whole', async () => {
    // Build 1 makes it; build 2 appends to its file in place, build 3 adds a file: each time export
    // moves it back into the cache, and the next build finds what the last one left.
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [toml('c', 'cache = true'), 'mkdir -p "$CNB_LAYERS_DIR/c/sub"', 'printf 1 > "$CNB_LAYERS_DIR/c/sub/index"'].join('\n'),
    });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const show = 'echo "index: $(cat "$CNB_LAYERS_DIR/c/sub/index" 2>/dev/null || echo none) more: $(cat "$CNB_LAYERS_DIR/c/more" 2>/dev/null || echo none)"';
    writeScripts(app, { 'a/build': [show, toml('c', 'cache = true'), 'printf 2 >> "$CNB_LAYERS_DIR/c/sub/index"'].join('\n') });
    const second = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(second.all).toContain('index: 1 more: none');
    writeScripts(app, { 'a/build': [show, toml('c', 'cache = true'), 'printf x > "$CNB_LAYERS_DIR/c/more"'].join('\n') });
    const third = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(third.all).toContain('index: 12 more: none');
    writeScripts(app, { 'a/build': [show, toml('c', 'cache = true')].join('\n') });
    const fourth = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(fourth.all).toContain('index: 12 more: x');
    for (const r of [second, third, fourth]) expect(r.all).not.toContain('dropped');
  });
});
