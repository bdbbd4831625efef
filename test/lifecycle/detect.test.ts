/**
 * rbp detect against small shell buildpacks: exit codes of bin/detect and of the phase, build plan
 * resolution with [[or]], optional buildpacks in an order.toml, and what bin/detect is given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, bpArgs, editedBuildpack, passWith, scriptedApp } from './helpers.ts';

/** An order.toml beside the app naming fixture buildpacks by a path relative to the file. */
function orderFile(groups: { bp: string; optional?: boolean }[][]): string {
  const dir = tmpDir('rbp-order-');
  const text = groups
    .map((g) => `[[order]]\n${g.map((e) => `[[order.group]]\npath = "${path.relative(dir, bp(e.bp))}"\n${e.optional ? 'optional = true\n' : ''}`).join('')}`)
    .join('\n');
  fs.writeFileSync(path.join(dir, 'order.toml'), text);
  return path.join(dir, 'order.toml');
}

describe('bin/detect exit codes', () => {
  it('0 passes: rbp detect exits 0 and names the group', async () => {
    const app = scriptedApp({ 'a/detect': passWith() });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('- pass: test/a@0.0.1');
    expect(r.stdout).toContain('- group: test/a@0.0.1');
  });

  it('100 fails: rbp detect exits 20 and shows the reason', async () => {
    const app = scriptedApp({ 'a/detect': 'echo "no marker file"; exit 100' });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(20);
    expect(r.stdout).toContain('- fail: test/a@0.0.1: no marker file');
    expect(r.stderr).toContain('ERROR: no buildpack group passed detection');
  });

  it.each([1, 99, 101])('%i is an error: rbp detect exits 21 and shows the output', async (code) => {
    const app = scriptedApp({ 'a/detect': `echo "broken input" >&2; exit ${code}` });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(21);
    expect(r.stdout).toContain(`- err:  test/a@0.0.1 (exit ${code})`);
    expect(r.stdout).toContain('    broken input');
  });

  it('an invalid plan (top-level version in requires) is an error, 21', async () => {
    const app = scriptedApp({ 'a/detect': passWith('[[provides]]\nname = "node"\n[[requires]]\nname = "node"\nversion = "20"') });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(21);
    expect(r.stdout).toContain('invalid build plan');
    expect(r.stdout).toContain('put it in [requires.metadata]');
  });

  it('a failing buildpack in a group fails the group even when the others pass', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': 'exit 100' });
    expect((await rbp(['detect', app, ...bpArgs('a', 'b')])).exitCode).toBe(20);
  });
});

describe('build plan resolution', () => {
  it('a requirement needs a provider in the same or an earlier buildpack', async () => {
    const requires = passWith('[[requires]]\nname = "node"');
    const provides = passWith('[[provides]]\nname = "node"');
    const before = scriptedApp({ 'a/detect': provides, 'b/detect': requires });
    const r = await rbp(['detect', before, ...bpArgs('a', 'b')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('  - plan: node ← test/a');
    const after = scriptedApp({ 'a/detect': requires, 'b/detect': provides });
    const r2 = await rbp(['detect', after, ...bpArgs('a', 'b')]);
    expect(r2.exitCode).toBe(20);
    expect(r2.stdout).toContain('fail: test/a@0.0.1 requires node');
  });

  it('a provide nobody requires fails the group', async () => {
    const app = scriptedApp({ 'a/detect': passWith('[[provides]]\nname = "node"') });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(20);
    expect(r.stdout).toContain('fail: test/a@0.0.1 provides unused node');
  });

  it('[[or]]: the first alternative that resolves wins', async () => {
    const app = scriptedApp({
      'a/detect': passWith('[[provides]]\nname = "node"\n\n[[or]]\n[[or.provides]]\nname = "bun"'),
      'b/detect': passWith('[[requires]]\nname = "bun"\n[requires.metadata]\nversion = "1.3"'),
    });
    const r = await rbp(['detect', app, ...bpArgs('a', 'b')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('  - plan: bun ← test/a');
    expect(r.stdout).not.toContain('plan: node');
  });

  it('a buildpack requiring and providing the same thing stands alone', async () => {
    const app = scriptedApp({ 'a/detect': passWith('[[provides]]\nname = "x"\n[[requires]]\nname = "x"') });
    expect((await rbp(['detect', app, ...bpArgs('a')])).stdout).toContain('plan: x ← test/a');
  });
});

describe('order.toml: groups and optional buildpacks', () => {
  it('an optional buildpack that fails detection is left out of the group', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': 'exit 100', 'c/detect': passWith() });
    const r = await rbp(['detect', app, '--order', orderFile([[{ bp: 'a' }, { bp: 'b', optional: true }, { bp: 'c' }]])]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('- skip: test/b@0.0.1');
    expect(r.stdout).toContain('- group: test/a@0.0.1, test/c@0.0.1');
  });

  it('an optional buildpack whose requirement has no provider is dropped; a required one fails the group', async () => {
    const scripts = { 'a/detect': passWith(), 'b/detect': passWith('[[requires]]\nname = "missing"') };
    const optional = await rbp(['detect', scriptedApp(scripts), '--order', orderFile([[{ bp: 'a' }, { bp: 'b', optional: true }]])]);
    expect(optional.exitCode).toBe(0);
    expect(optional.stdout).toContain('skip: test/b@0.0.1 requires missing');
    expect(optional.stdout).toMatch(/^- group: test\/a@0.0.1$/m);
    const required = await rbp(['detect', scriptedApp(scripts), '--order', orderFile([[{ bp: 'a' }, { bp: 'b' }]])]);
    expect(required.exitCode).toBe(20);
  });

  it('an error in an optional buildpack does not fail the group', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': 'exit 3' });
    const r = await rbp(['detect', app, '--order', orderFile([[{ bp: 'b', optional: true }, { bp: 'a' }]])]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('- group: test/a@0.0.1');
  });

  it('groups are tried in order, the first passing one wins, and each detect runs once', async () => {
    const runs = path.join(tmpDir('rbp-runs-'), 'a-runs');
    const app = scriptedApp({
      'a/detect': `echo run >> "${runs}"\n${passWith()}`,
      'b/detect': 'exit 100',
      'c/detect': passWith(),
      'd/detect': passWith(),
    });
    const r = await rbp(['detect', app, '--order', orderFile([[{ bp: 'a' }, { bp: 'b' }], [{ bp: 'a' }, { bp: 'c' }], [{ bp: 'd' }]])]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('- group: test/a@0.0.1, test/c@0.0.1');
    expect(fs.readFileSync(runs, 'utf8')).toBe('run\n');
  });

  it('21 when every group failed and a required buildpack errored; 20 when they only failed', async () => {
    const app = scriptedApp({ 'a/detect': 'exit 100', 'b/detect': 'exit 2' });
    expect((await rbp(['detect', app, '--order', orderFile([[{ bp: 'a' }], [{ bp: 'b' }]])])).exitCode).toBe(21);
    expect((await rbp(['detect', app, '--order', orderFile([[{ bp: 'a' }], [{ bp: 'b', optional: true }]])])).exitCode).toBe(20);
    // A required buildpack failed and an optional one errored: the lifecycle counts the error (21).
    expect((await rbp(['detect', app, '--order', orderFile([[{ bp: 'a' }, { bp: 'b', optional: true }]])])).exitCode).toBe(21);
  });
});

describe('what bin/detect is given', () => {
  it('cwd = app, legacy args, CNB_* variables, an empty 0600 plan file, platform env files', async () => {
    const app = scriptedApp({
      'a/detect': [
        'echo "cwd=$PWD"',
        'echo "oldpwd=${OLDPWD-unset}"',
        'echo "args=$#"',
        'echo "platform=$CNB_PLATFORM_DIR arg1=$1"',
        'echo "plan-size=$(wc -c < "$CNB_BUILD_PLAN_PATH") plan-mode=$(stat -c %a "$CNB_BUILD_PLAN_PATH") arg2-is-plan=$([ "$2" = "$CNB_BUILD_PLAN_PATH" ] && echo yes)"',
        'echo "bpdir=$CNB_BUILDPACK_DIR"',
        'echo "target=$CNB_TARGET_OS/$CNB_TARGET_ARCH"',
        'echo "user-var=$(cat "$CNB_PLATFORM_DIR/env/CC_SOMETHING")"',
        'exit 0',
      ].join('\n'),
    });
    const r = await rbp(['detect', app, ...bpArgs('a'), '--env', 'CC_SOMETHING=from-user']);
    expect(r.exitCode).toBe(0);
    // The app directory itself, as the lifecycle gives it (working folder and PWD); nothing of rbp's.
    expect(r.stdout).toContain(`    cwd=${app}\n`);
    expect(r.stdout).toContain('    args=2');
    expect(r.stdout).toMatch(/ {4}platform=(\S+) arg1=\1\n/);
    expect(r.stdout).toContain('    plan-size=0 plan-mode=600 arg2-is-plan=yes');
    expect(r.stdout).toContain(`    bpdir=${bp('a')}`);
    expect(r.stdout).toMatch(/ {4}target=linux\/(amd64|arm64)\n/);
    expect(r.stdout).toContain('    user-var=from-user');
    expect(r.stdout).toContain('    oldpwd=unset');
  });
});

describe('[[targets]]', () => {
  const withTargets = (targets: string) => editedBuildpack('a', (toml) => toml.replace(/\[\[targets\]\][\s\S]*$/, targets));

  it('a required buildpack whose targets exclude this machine is an error (21), its detect never runs', async () => {
    const app = scriptedApp({ 'a/detect': `echo ran > "$PWD/../ran"\n${passWith()}` });
    const r = await rbp(['detect', app, '--buildpack', withTargets('[[targets]]\nos = "windows"\n')]);
    expect(r.exitCode).toBe(21);
    expect(r.stdout).toContain('unable to satisfy target os/arch constraints');
    expect(fs.existsSync(path.join(app, '..', 'ran'))).toBe(false);
  });

  it('a target for this os and arch, or another arch beside it, passes', async () => {
    const app = scriptedApp({ 'a/detect': passWith() });
    const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
    const r = await rbp([
      'detect',
      app,
      '--buildpack',
      withTargets(`[[targets]]\nos = "linux"\narch = "riscv64"\n\n[[targets]]\nos = "linux"\narch = "${arch}"\n`),
    ]);
    expect(r.exitCode).toBe(0);
  });
});
