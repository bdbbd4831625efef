/**
 * rbp build against small shell buildpacks: the buildpack plan each bin/build gets, [[unmet]],
 * build=true layers and env files as later buildpacks see them, what reaches a buildpack from the
 * host, user and operator, exit codes, and OUT left as it was when a build fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { allFiles, bpArgs, editedBuildpack, passWith, scriptedApp, treeHash, writeScripts } from './helpers.ts';

const out = () => path.join(tmpDir('rbp-out-'), 'out');

/** Text a build script printed between `>>> name` and `<<< name`. */
function section(stdout: string, name: string): string {
  const m = new RegExp(`>>> ${name}\\n([\\s\\S]*?)<<< ${name}`).exec(stdout);
  if (!m) throw new Error(`no section ${name} in:\n${stdout}`);
  return m[1]!;
}
const showPlan = (name: string) => `echo ">>> ${name}"; cat "$CNB_BP_PLAN_PATH"; echo "<<< ${name}"`;

describe('the buildpack plan', () => {
  it('a provider gets the requires of its entries with their metadata; a mere requirer gets none', async () => {
    const app = scriptedApp({
      'a/detect': passWith('[[provides]]\nname = "node"'),
      'b/detect': passWith('[[requires]]\nname = "node"\n[requires.metadata]\nversion = "22.x"\n[requires.metadata.nested]\nlaunch = true'),
      'a/build': showPlan('plan-a'),
      'b/build': showPlan('plan-b'),
    });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b')]);
    expect(r.exitCode).toBe(0);
    expect(parse(section(r.stdout, 'plan-a'))).toEqual({ entries: [{ name: 'node', metadata: { version: '22.x', nested: { launch: true } } }] });
    expect(parse(section(r.stdout, 'plan-b'))).toEqual({}); // an empty file, as the lifecycle writes it
  });

  it('requires of several buildpacks for one name all reach the provider, in order', async () => {
    const app = scriptedApp({
      'a/detect': passWith('[[provides]]\nname = "node"\n[[requires]]\nname = "node"\n[requires.metadata]\nby = "a"'),
      'b/detect': passWith('[[requires]]\nname = "node"\n[requires.metadata]\nby = "b"'),
      'a/build': showPlan('plan-a'),
    });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b')]);
    expect(parse(section(r.stdout, 'plan-a'))).toEqual({
      entries: [
        { name: 'node', metadata: { by: 'a' } },
        { name: 'node', metadata: { by: 'b' } },
      ],
    });
  });

  const twoProviders = {
    'a/detect': passWith('[[provides]]\nname = "node"'),
    'b/detect': passWith('[[provides]]\nname = "node"'),
    'c/detect': passWith('[[requires]]\nname = "node"\n[requires.metadata]\nversion = "22"'),
    'b/build': showPlan('plan-b'),
  };

  it('an entry met by the first provider leaves the plan of the next one', async () => {
    const r = await rbp(['build', scriptedApp({ ...twoProviders, 'a/build': showPlan('plan-a') }), '--out', out(), ...bpArgs('a', 'b', 'c')]);
    expect(r.exitCode).toBe(0);
    expect(parse(section(r.stdout, 'plan-a')).entries).toHaveLength(1);
    expect(parse(section(r.stdout, 'plan-b'))).toEqual({}); // an empty file, as the lifecycle writes it
  });

  it('[[unmet]] in build.toml passes the entry on to the next provider', async () => {
    const app = scriptedApp({ ...twoProviders, 'a/build': 'printf \'[[unmet]]\\nname = "node"\\n\' > "$CNB_LAYERS_DIR/build.toml"' });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b', 'c')]);
    expect(r.exitCode).toBe(0);
    expect(parse(section(r.stdout, 'plan-b'))).toEqual({ entries: [{ name: 'node', metadata: { version: '22' } }] });
  });

  it.each([
    ['a name not in its plan', '[[unmet]]\\nname = "python"\\n', '[[unmet]] python is not in its plan'],
    ['no name', '[[unmet]]\\nversion = "1"\\n', '[[unmet]] without a name'],
  ])('[[unmet]] with %s fails the build with 52 (invalid buildpack output)', async (_what, toml, message) => {
    const app = scriptedApp({ ...twoProviders, 'a/build': `printf '${toml}' > "$CNB_LAYERS_DIR/build.toml"` });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b', 'c')]);
    expect(r.exitCode).toBe(52);
    expect(r.stderr).toContain(message);
  });
});

/** A build script that makes layer `name` with these [types], and env files (path → contents). */
function layer(name: string, types: string, files: Record<string, string> = {}): string {
  const lines = [`mkdir -p "$CNB_LAYERS_DIR/${name}"`, `printf '[types]\\n${types.replaceAll('\n', '\\n')}\\n' > "$CNB_LAYERS_DIR/${name}.toml"`];
  for (const [f, v] of Object.entries(files)) {
    lines.push(`mkdir -p "$(dirname "$CNB_LAYERS_DIR/${name}/${f}")"`, `printf '%s' '${v}' > "$CNB_LAYERS_DIR/${name}/${f}"`);
  }
  return lines.join('\n');
}
const show = (...vars: string[]) => vars.map((v) => `echo "${v}=[\${${v}-unset}]"`).join('\n');

describe('build=true layers: env for the buildpacks after', () => {
  it('reach later buildpacks, never the writer; launch-only and build-only dirs stay apart', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'c/detect': passWith(),
      'a/build': [
        layer('tools', 'build = true', {
          'env/FROM_A': 'a',
          'env.build/BUILD_ONLY': 'yes',
          'env.launch/LAUNCH_ONLY': 'yes',
          'bin/a-tool': '#!/bin/sh\necho a-tool-ran',
        }),
        'chmod +x "$CNB_LAYERS_DIR/tools/bin/a-tool"',
        layer('notbuild', 'launch = true', { 'env/NOT_BUILD': 'x' }),
        show('FROM_A'),
      ].join('\n'),
      'b/build': [show('FROM_A', 'BUILD_ONLY', 'LAUNCH_ONLY', 'NOT_BUILD'), 'a-tool'].join('\n'),
      'c/build': show('FROM_A'),
    });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b', 'c')]);
    expect(r.exitCode).toBe(0);
    const [a, b] = r.stdout.split('### test/b@0.0.1');
    expect(a).toContain('FROM_A=[unset]');
    expect(b).toContain('FROM_A=[a]');
    expect(b).toContain('BUILD_ONLY=[yes]');
    expect(b).toContain('LAUNCH_ONLY=[unset]');
    expect(b).toContain('NOT_BUILD=[unset]');
    expect(b).toContain('a-tool-ran');
  });

  it('applies env suffixes like the lifecycle: .delim, empty default delimiter, .default, unknown suffixes, later layers win', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': [
        layer('l1', 'build = true', {
          'env/WITH_DELIM.append': 'x',
          'env/WITH_DELIM.delim': ':',
          'env/NO_DELIM.append': 'b',
          'env/PRE.prepend': 'p',
          'env/PRE.delim': ',',
          'env/DFLT.default': 'from-l1',
          'env/OVR.override': 'l1',
          'env/ODD.weird': 'ignored',
          'env/RAW': ' spaced\n',
        }),
        layer('l2', 'build = true', {
          'env/DFLT.default': 'from-l2',
          'env/OVR': 'l2',
          'env/NO_DELIM.append': 'c',
          'env/PRE.prepend': 'q',
          'env/PRE.delim': ',',
        }),
      ].join('\n'),
      'b/build': [show('WITH_DELIM', 'NO_DELIM', 'PRE', 'DFLT', 'OVR', 'ODD'), 'printf "RAW=[%s]" "$RAW"'].join('\n'),
    });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a', 'b')]);
    expect(r.exitCode).toBe(0);
    const b = r.stdout.split('### test/b@0.0.1')[1]!;
    expect(b).toContain('WITH_DELIM=[x]'); // nothing before: no delimiter
    expect(b).toContain('NO_DELIM=[bc]'); // no .delim: glued
    expect(b).toContain('PRE=[q,p]'); // l2 after l1
    expect(b).toContain('DFLT=[from-l1]'); // earliest .default wins
    expect(b).toContain('OVR=[l2]');
    expect(b).toContain('ODD=[unset]');
    expect(b).toContain('RAW=[ spaced\n]');
  });

  it('at build each layer adds its roots then its env files, layers alphabetically', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': [
        layer('aa', 'build = true', { 'env/PATH.prepend': '/from-aa', 'env/PATH.delim': ':' }),
        layer('zz', 'build = true', { 'bin/.keep': '' }),
      ].join('\n'),
      'b/build': 'echo "PATH=$PATH"',
    });
    const o = out();
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a', 'b')]);
    expect(r.stdout).toContain(`PATH=${path.join(o, 'layers', 'test_a', 'zz', 'bin')}:/from-aa:`);
  });

  it('user variables go over layer env at build; user PATH is prepended', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': layer('l', 'build = true', {
        'env/APPENDED.append': 'layer',
        'env/APPENDED.delim': ':',
        'env/DFLT.default': 'layer',
        'env/OVR.override': 'layer',
      }),
      'b/build': [show('APPENDED', 'DFLT', 'OVR'), 'echo "PATH=$PATH"'].join('\n'),
    });
    const r = await rbp([
      'build',
      app,
      '--out',
      out(),
      ...bpArgs('a', 'b'),
      '--env',
      'APPENDED=user',
      '--env',
      'DFLT=user',
      '--env',
      'OVR=user',
      '--env',
      'PATH=/user/bin',
    ]);
    expect(r.exitCode).toBe(0);
    const b = r.stdout.split('### test/b@0.0.1')[1]!;
    expect(b).toContain('APPENDED=[user]');
    expect(b).toContain('DFLT=[user]');
    expect(b).toContain('OVR=[user]');
    expect(b).toMatch(/PATH=\/user\/bin:\/\S*bin/);
  });

  it('a layer dir without a .toml, and a layer with all types false, add nothing', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': [
        'mkdir -p "$CNB_LAYERS_DIR/orphan/env" && printf x > "$CNB_LAYERS_DIR/orphan/env/ORPHAN"',
        'mkdir -p "$CNB_LAYERS_DIR/none/env" && printf x > "$CNB_LAYERS_DIR/none/env/NONE" && printf "[types]\\n" > "$CNB_LAYERS_DIR/none.toml"',
      ].join('\n'),
      'b/build': show('ORPHAN', 'NONE'),
    });
    const o = out();
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a', 'b')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('ORPHAN=[unset]');
    expect(r.stdout).toContain('NONE=[unset]');
    expect(fs.readdirSync(path.join(o, 'layers', 'test_a'))).not.toContain('none');
  });
});

describe('what reaches bin/build', () => {
  it('cwd = a copy of the app, legacy args, CNB_* variables, layers dir created per buildpack id', async () => {
    const app = scriptedApp(
      {
        'a/detect': passWith(),
        'a/build': [
          'echo "cwd=$PWD"',
          'echo "layers=$CNB_LAYERS_DIR arg1=$1"',
          'echo "exists=$([ -d "$CNB_LAYERS_DIR" ] && echo yes)"',
          'echo "plan-is-arg3=$([ "$3" = "$CNB_BP_PLAN_PATH" ] && echo yes) platform-is-arg2=$([ "$2" = "$CNB_PLATFORM_DIR" ] && echo yes)"',
          'echo "target=$CNB_TARGET_OS"',
          'echo changed > app-file',
        ].join('\n'),
      },
      { 'app-file': 'original' },
    );
    const o = out();
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`cwd=${path.join(o, 'workspace')}`);
    expect(r.stdout).toContain(`layers=${path.join(o, 'layers', 'test_a')} arg1=${path.join(o, 'layers', 'test_a')}`);
    expect(r.stdout).toContain('exists=yes');
    expect(r.stdout).toContain('plan-is-arg3=yes platform-is-arg2=yes');
    expect(r.stdout).toContain('target=linux');
    // the build works on a copy: the source is untouched, OUT/workspace has the change
    expect(fs.readFileSync(path.join(app, 'app-file'), 'utf8')).toBe('original');
    expect(fs.readFileSync(path.join(o, 'workspace', 'app-file'), 'utf8')).toBe('changed\n');
  });

  it('RBP_* operator variables reach detect and build; other host variables do not', async () => {
    const app = scriptedApp({
      'a/detect': `${show('RBP_TEST_OPERATOR', 'TEST_HOST_ONLY')}\nexit 0`,
      'a/build': show('RBP_TEST_OPERATOR', 'TEST_HOST_ONLY'),
    });
    const env = { RBP_TEST_OPERATOR: 'op-value', TEST_HOST_ONLY: 'host-value' };
    const d = await rbp(['detect', app, ...bpArgs('a')], { env });
    expect(d.stdout).toContain('RBP_TEST_OPERATOR=[op-value]');
    expect(d.stdout).toContain('TEST_HOST_ONLY=[unset]');
    const b = await rbp(['build', app, '--out', out(), ...bpArgs('a')], { env });
    expect(b.stdout.split('## Build')[1]).toContain('RBP_TEST_OPERATOR=[op-value]');
    expect(b.stdout.split('## Build')[1]).toContain('TEST_HOST_ONLY=[unset]');
  });

  it('RBP_* operator variables reach a clear-env buildpack too, the instance size as well', async () => {
    const clearEnv = editedBuildpack('a', (toml) => toml.replace('name = ', 'clear-env = true\nname = '));
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [show('RBP_TEST_OPERATOR', 'CC_USER', 'RBP_INSTANCE_SIZE', 'RBP_INSTANCE_MEMORY'), 'echo "file=$(cat "$CNB_PLATFORM_DIR/env/CC_USER")"'].join(
        '\n',
      ),
    });
    const r = await rbp(['build', app, '--out', out(), '--buildpack', clearEnv, '--env', 'CC_USER=u', '--instance', 'S'], { env: { RBP_TEST_OPERATOR: 'op' } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('RBP_TEST_OPERATOR=[op]');
    expect(r.stdout).toContain('CC_USER=[unset]'); // clear-env: not in the process env...
    expect(r.stdout).toContain('file=u'); // ...but readable in <platform>/env
    expect(r.stdout).toContain('RBP_INSTANCE_SIZE=[S]');
    expect(r.stdout).toContain(`RBP_INSTANCE_MEMORY=[${2 * 1024 ** 3}]`);
  });

  it('without --instance the instance is XS (1 GiB), the contract default', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': show('RBP_INSTANCE_SIZE', 'RBP_INSTANCE_MEMORY') });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('RBP_INSTANCE_SIZE=[XS]');
    expect(r.stdout).toContain('RBP_INSTANCE_MEMORY=[1073741824]');
  });

  it('user --env variables are never written into OUT', async () => {
    const secret = 'user-value-4d1f8a77';
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        'echo "seen=$(cat "$CNB_PLATFORM_DIR/env/MY_SETTING")"',
        layer('rt', 'launch = true\ncache = true', { 'env/X': 'y' }),
        'cat > "$CNB_LAYERS_DIR/launch.toml" <<\'TOML\'\n[[processes]]\ntype = "web"\ncommand = ["true"]\ndefault = true\nTOML',
      ].join('\n'),
    });
    const o = out();
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a'), '--env', `MY_SETTING=${secret}`, '--env', `NPM_TOKEN=${secret}-token`]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`seen=${secret}`);
    const files = allFiles(o);
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) expect(fs.readFileSync(f, 'utf8'), f).not.toContain(secret);
    expect(files.some((f) => f.includes('MY_SETTING'))).toBe(false);
  });
});

describe('export', () => {
  it('keeps launch layers with their SBOM and launch.sbom; drops other layers, their SBOM, build.sbom and .ignore folders', async () => {
    const sbom = editedBuildpack('a', (toml) => toml.replace('name = ', 'sbom-formats = ["application/vnd.cyclonedx+json"]\nname = '));
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        layer('rt', 'launch = true', { data: 'x' }),
        layer('deps', 'cache = true', { data: 'x' }),
        layer('tmp', 'build = true', { data: 'x' }),
        layer('off', '', { data: 'x' }),
        ...['rt', 'deps', 'tmp', 'launch', 'build'].map((n) => `echo {} > "$CNB_LAYERS_DIR/${n}.sbom.cdx.json"`),
      ].join('\n'),
    });
    const o = out();
    const r = await rbp(['build', app, '--out', o, '--buildpack', sbom]);
    expect(r.exitCode).toBe(0);
    expect(fs.readdirSync(path.join(o, 'layers', 'test_a')).sort()).toEqual(['launch.sbom.cdx.json', 'rt', 'rt.sbom.cdx.json', 'rt.toml']);
    expect(fs.readdirSync(path.join(`${o}.rbp-cache`, 'test_a')).sort()).toEqual(['deps', 'deps.sbom.cdx.json', 'deps.toml']);
  });
});

describe('failed builds', () => {
  it.each([
    ['bin/build exits non-zero', 'echo "compiling failed" >&2; exit 3', 'test/a@0.0.1 failed (exit 3)', 51],
    ['a top-level flag in a layer toml', 'printf "launch = true\\n" > "$CNB_LAYERS_DIR/l.toml"', '"launch" should be in the [types] table', 52],
    [
      'a string command in launch.toml',
      'printf "[[processes]]\\ntype = \\"web\\"\\ncommand = \\"node x\\"\\n" > "$CNB_LAYERS_DIR/launch.toml"',
      'command must be a non-empty array',
      52,
    ],
    [
      'direct in launch.toml',
      'printf "[[processes]]\\ntype = \\"web\\"\\ncommand = [\\"x\\"]\\ndirect = true\\n" > "$CNB_LAYERS_DIR/launch.toml"',
      '"direct" is not supported',
      52,
    ],
    [
      'an SBOM of a format buildpack.toml does not declare',
      'echo {} > "$CNB_LAYERS_DIR/launch.sbom.cdx.json"',
      "undeclared SBOM media type: 'application/vnd.cyclonedx+json'",
      52,
    ],
    [
      'two default processes',
      'printf "[[processes]]\\ntype = \\"a\\"\\ncommand = [\\"x\\"]\\ndefault = true\\n[[processes]]\\ntype = \\"b\\"\\ncommand = [\\"x\\"]\\ndefault = true\\n" > "$CNB_LAYERS_DIR/launch.toml"',
      'more than one process has default = true',
      52,
    ],
  ])('%s: exit %i (51 the buildpack failed, 52 its output is invalid) with the reason', async (_what, script, message, code) => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': script });
    const o = out();
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a')]);
    expect(r.exitCode).toBe(code);
    expect(r.stderr).toContain(message);
    expect(fs.existsSync(o)).toBe(false);
  });

  it('a launch=true cache=true layer without contents fails the export (62)', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'printf "[types]\\nlaunch = true\\ncache = true\\n" > "$CNB_LAYERS_DIR/l.toml"' });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a')]);
    expect(r.exitCode).toBe(62);
    expect(r.stderr).toContain('has cache = true but has no contents');
  });

  it('a launch-only layer without contents and no previous build fails the export (62)', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'printf "[types]\\nlaunch = true\\n" > "$CNB_LAYERS_DIR/l.toml"' });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a')]);
    expect(r.exitCode).toBe(62);
    expect(r.stderr).toContain('cannot reuse layer test_a/l');
  });

  it('a detect that fails after a build leaves OUT and the cache exactly as they were (detect runs in the new OUT)', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': layer('both', 'launch = true\ncache = true', { file: 'v1' }) });
    const o = out();
    expect((await rbp(['build', app, '--out', o, ...bpArgs('a')])).exitCode).toBe(0);
    const before = [treeHash(o), treeHash(`${o}.rbp-cache`)];
    writeScripts(app, { 'a/detect': 'echo written-by-detect > detect-wrote.txt\nexit 100' });
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a')]);
    expect(r.exitCode).toBe(20);
    expect([treeHash(o), treeHash(`${o}.rbp-cache`)]).toEqual(before);
    expect(fs.existsSync(path.join(app, 'detect-wrote.txt'))).toBe(false);
    expect(fs.readdirSync(path.dirname(o)).sort()).toEqual(['out', 'out.rbp-cache']);
  });

  it.each([false, true])('OUT is left exactly as it was (explicit --cache: %s)', async (explicitCache) => {
    const first = [
      layer('cached', 'cache = true', { 'data/file': 'v1' }),
      layer('both', 'launch = true\ncache = true', { file: 'v1' }),
      layer('rt', 'launch = true', { file: 'v1' }),
      'cat > "$CNB_LAYERS_DIR/launch.toml" <<\'TOML\'\n[[processes]]\ntype = "web"\ncommand = ["true"]\ndefault = true\nTOML',
    ].join('\n');
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': first }, { 'src.txt': 'source v1' });
    const o = out();
    const cacheArgs = explicitCache ? ['--cache', path.join(tmpDir('rbp-cache-'), 'cache')] : [];
    expect((await rbp(['build', app, '--out', o, ...bpArgs('a'), ...cacheArgs])).exitCode).toBe(0);
    const before = treeHash(o);
    const cache = explicitCache ? cacheArgs[1]! : `${o}.rbp-cache`;
    // The second build changes what it can reach in place (the cache-only layer, which restore
    // moved in, the workspace, a new layer), then fails. A reused launch+cache layer shares its
    // files with the previous OUT (hard links, never a copy): rewriting those in place is the one
    // thing a buildpack must not do, so this test does not.
    fs.writeFileSync(path.join(app, 'src.txt'), 'source v2');
    writeScripts(app, {
      'a/build': [
        'test -f "$CNB_LAYERS_DIR/cached/data/file"',
        'test -f "$CNB_LAYERS_DIR/both/file"',
        'echo tampered >> "$CNB_LAYERS_DIR/cached/data/file"',
        'rm -rf "$CNB_LAYERS_DIR/rt"',
        'echo tampered >> src.txt',
        layer('new', 'launch = true', { file: 'x' }),
        'exit 9',
      ].join('\n'),
    });
    const r = await rbp(['build', app, '--out', o, ...bpArgs('a'), ...cacheArgs]);
    expect(r.exitCode).toBe(51);
    expect(r.stderr).toContain(`The previous build in ${o} is unchanged.`);
    expect(treeHash(o)).toBe(before);
    // The layers the failed build took from the cache (and may have changed) are not the cache's any
    // more: the next build links the launch one from the previous build and makes the other again.
    expect(fs.readdirSync(path.join(cache, 'test_a')).filter((f) => !f.endsWith('.toml'))).toEqual([]);
    expect(fs.readdirSync(path.dirname(o)).sort()).toEqual(explicitCache ? ['out'] : ['out', 'out.rbp-cache']);
    writeScripts(app, { 'a/build': first });
    const again = await rbp(['build', app, '--out', o, ...bpArgs('a'), ...cacheArgs]);
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toContain('restored both (from the previous build)');
    expect(fs.readFileSync(path.join(o, 'layers', 'test_a', 'both', 'file'), 'utf8')).toBe('v1');
  });
});
