/**
 * OUT as a transaction ("Data loss"): rbp never replaces a folder it did not make, never
 * builds into or around the app, holds one lock per OUT, and a failed, killed or concurrent build
 * leaves a runnable OUT (the previous one or the new complete one), with its temp folders gone and
 * the buildpack's whole process group stopped.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryTempRoot } from '../../lib/memory-temp.ts';
import { RBP, rbp, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, launchToml, passWith, scriptedApp, treeHash, writeScripts } from '../lifecycle/helpers.ts';

const WEB = launchToml('[[processes]]\ntype = "web"\ncommand = ["echo", "hello"]\ndefault = true');
const GOOD = [
  'mkdir -p "$CNB_LAYERS_DIR/rt"',
  'printf "[types]\\nlaunch = true\\n" > "$CNB_LAYERS_DIR/rt.toml"',
  'echo v1 > "$CNB_LAYERS_DIR/rt/file"',
  WEB,
].join('\n');
const noTrace = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);

function goodApp(): string {
  return scriptedApp({ 'a/detect': passWith(), 'a/build': GOOD }, { 'src.txt': 'source' });
}

/** A build script that records its pid and a background child's, says it started, then waits. */
function slowBuild(dir: string): string {
  return [`sleep 300 & echo $! > ${dir}/child.pid`, `echo $$ > ${dir}/build.pid`, 'mkdir -p "$CNB_LAYERS_DIR/rt"', `touch ${dir}/started`, 'wait'].join('\n');
}

async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function startBuild(app: string, out: string, extra: string[] = []) {
  const child = spawn('node', [RBP, 'build', app, '--out', out, ...bpArgs('a'), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer | string) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer | string) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

/** rbp-build temp folders of a process (they carry its pid). */
const tempsOf = (pid: number) => fs.readdirSync(memoryTempRoot().dir).filter((n) => n.startsWith(`rbp-build-${pid}-`));

describe('OUT that is not rbp’s is refused, nothing touched', () => {
  it('a non-empty folder rbp did not make (a home folder) is refused and left byte-identical', async () => {
    const home = tmpDir('rbp-home-');
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'KEY');
    fs.mkdirSync(path.join(home, 'docs'));
    fs.writeFileSync(path.join(home, 'docs', 'thesis.md'), 'years of work');
    const before = treeHash(home);
    const r = await rbp(['build', goodApp(), '--out', home, ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('platform/out/not-rbp');
    expect(r.all).toContain('.ssh');
    noTrace(r.all);
    expect(treeHash(home)).toBe(before);
    expect(fs.readdirSync(path.dirname(home)).filter((n) => n.startsWith(path.basename(home)) && n !== path.basename(home))).toEqual([]);
  });

  it.each([
    ['OUT equal to APP', (app: string) => app, 'platform/out/inside-app'],
    ['OUT inside APP', (app: string) => path.join(app, 'out'), 'platform/out/inside-app'],
    ['OUT containing APP', (app: string) => path.dirname(app), 'platform/out/contains-app'],
    ['OUT = /', () => '/', 'platform/out/root'],
  ])('%s is refused with one clear error', async (_what, outOf, id) => {
    const app = goodApp();
    const before = treeHash(path.dirname(app));
    const r = await rbp(['build', app, '--out', outOf(app), ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain(id);
    noTrace(r.all);
    expect(treeHash(path.dirname(app))).toBe(before);
  });

  it('OUT reached through a symlink into the app is refused too', async () => {
    const app = goodApp();
    const link = path.join(tmpDir(), 'link');
    fs.symlinkSync(app, link);
    const r = await rbp(['build', app, '--out', path.join(link, 'out'), ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('platform/out/inside-app');
  });

  it('--cache naming a file, or a folder rbp did not make, is refused and left as it was', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'keep me');
    const r1 = await rbp(['build', goodApp(), '--out', path.join(dir, 'out'), '--cache', file, ...bpArgs('a')]);
    expect(r1.exitCode).toBe(2);
    expect(r1.all).toContain('platform/cache/not-rbp');
    noTrace(r1.all);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
    fs.mkdirSync(path.join(dir, 'photos'));
    fs.writeFileSync(path.join(dir, 'photos', 'a.jpg'), 'jpeg');
    const r2 = await rbp(['build', goodApp(), '--out', path.join(dir, 'out'), '--cache', path.join(dir, 'photos'), ...bpArgs('a')]);
    expect(r2.exitCode).toBe(2);
    expect(fs.readFileSync(path.join(dir, 'photos', 'a.jpg'), 'utf8')).toBe('jpeg');
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('an OUT whose name leaves no room for the folders rbp keeps beside it is refused, nothing touched', async () => {
    const dir = tmpDir();
    const app = goodApp();
    const out = path.join(dir, 'o'.repeat(244)); // +.rbp-lock fits in 255 bytes, +.rbp-previous does not
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, '.rbp-out'), '');
    fs.writeFileSync(path.join(out, 'rbp.toml'), 'app = "x"\ninstance = "XS"\nbuilt-at = "x"\nlayers = []\n');
    const before = treeHash(dir);
    const r = await rbp(['build', app, '--out', out, '--cache', path.join(dir, 'cache'), ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.all).toContain('platform/out/name-too-long');
    noTrace(r.all);
    expect(treeHash(dir)).toBe(before);
  });
});

describe('a killed build', () => {
  it('SIGTERM stops the buildpack’s whole process group, restores the previous OUT and removes the secrets’ temp folder', async () => {
    const app = goodApp();
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const before = treeHash(out);
    const marks = tmpDir('rbp-marks-');
    writeScripts(app, { 'a/build': slowBuild(marks) });
    const b = startBuild(app, out, ['--env', 'NPM_TOKEN=s3cret-token']);
    await until(() => fs.existsSync(path.join(marks, 'started')));
    const childPid = Number(fs.readFileSync(path.join(marks, 'child.pid'), 'utf8'));
    expect(tempsOf(b.child.pid!)).toHaveLength(1);
    b.child.kill('SIGTERM');
    const { code } = await b.exited;
    expect(code).toBe(143);
    expect(b.output()).toContain('interrupted by SIGTERM');
    expect(b.output()).toContain(`The previous build in ${out} is unchanged.`);
    await until(() => !alive(childPid), 10_000);
    expect(treeHash(out)).toBe(before);
    expect(fs.existsSync(`${out}.rbp-previous`)).toBe(false);
    expect(fs.existsSync(`${out}.rbp-next`)).toBe(false);
    expect(fs.existsSync(`${out}.rbp-lock`)).toBe(false);
    expect(tempsOf(b.child.pid!)).toEqual([]);
  });

  it('after SIGKILL, `rbp run` stops the orphaned buildpack and puts the last good build back as it was; a failing build keeps it', async () => {
    const app = goodApp();
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const before = treeHash(out);
    const marks = tmpDir('rbp-marks-');
    writeScripts(app, { 'a/build': slowBuild(marks) });
    const b = startBuild(app, out);
    await until(() => fs.existsSync(path.join(marks, 'started')));
    const buildPid = Number(fs.readFileSync(path.join(marks, 'build.pid'), 'utf8'));
    const childPid = Number(fs.readFileSync(path.join(marks, 'child.pid'), 'utf8'));
    b.child.kill('SIGKILL');
    await b.exited;
    try {
      // The killed build was being made in OUT; the last complete build waits beside it.
      expect(treeHash(`${out}.rbp-previous`)).toBe(before);
      // rbp could not stop its buildpack: the group still runs, until the next rbp stops it.
      expect(alive(childPid)).toBe(true);
      const run = await rbp(['run', out]);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain('hello');
      expect(run.all).toContain('an interrupted build left');
      await until(() => !alive(childPid) && !alive(buildPid), 10_000);
      expect(treeHash(out)).toBe(before);
      expect(fs.existsSync(`${out}.rbp-previous`)).toBe(false);
    } finally {
      // The group this test started (through rbp), if rbp did not end it.
      if (alive(buildPid)) process.kill(-buildPid, 'SIGKILL');
    }
    // A failing build after the crash still leaves the good build, and removes the killed one's.
    writeScripts(app, { 'a/build': 'exit 3' });
    const failed = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(failed.exitCode).toBe(51);
    expect(treeHash(out)).toBe(before);
    expect(fs.readdirSync(path.dirname(out)).sort()).toEqual(['out', 'out.rbp-cache']);
  });

  it('the next build after SIGKILL stops the orphaned buildpack itself and builds', async () => {
    const app = goodApp();
    const out = path.join(tmpDir('rbp-out-'), 'out');
    expect((await rbp(['build', app, '--out', out, ...bpArgs('a')])).exitCode).toBe(0);
    const marks = tmpDir('rbp-marks-');
    writeScripts(app, { 'a/build': slowBuild(marks) });
    const b = startBuild(app, out);
    await until(() => fs.existsSync(path.join(marks, 'started')));
    const buildPid = Number(fs.readFileSync(path.join(marks, 'build.pid'), 'utf8'));
    const childPid = Number(fs.readFileSync(path.join(marks, 'child.pid'), 'utf8'));
    b.child.kill('SIGKILL');
    await b.exited;
    try {
      writeScripts(app, { 'a/build': GOOD.replace('echo v1', 'echo v2') });
      const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
      expect(r.exitCode, r.all).toBe(0);
      await until(() => !alive(childPid) && !alive(buildPid), 10_000);
      expect(fs.readFileSync(path.join(out, 'layers', 'test_a', 'rt', 'file'), 'utf8')).toBe('v2\n');
      expect(fs.readdirSync(path.dirname(out)).sort()).toEqual(['out', 'out.rbp-cache']);
    } finally {
      if (alive(buildPid)) process.kill(-buildPid, 'SIGKILL');
    }
  });
});

describe('concurrent builds', () => {
  it('a second build into the same OUT is refused clearly; the first completes and OUT is runnable', async () => {
    const app = goodApp();
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const marks = tmpDir('rbp-marks-');
    writeScripts(app, { 'a/build': [`touch ${marks}/started`, `while [ ! -f ${marks}/go ]; do sleep 0.05; done`, GOOD].join('\n') });
    const first = startBuild(app, out);
    await until(() => fs.existsSync(path.join(marks, 'started')));
    const second = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(second.exitCode).toBe(2);
    expect(second.all).toContain('platform/out/locked');
    expect(second.all).toContain(`process ${first.child.pid}`);
    noTrace(second.all);
    const during = await rbp(['run', out]);
    expect(during.exitCode).toBe(2);
    expect(during.all).toContain('platform/out/building');
    fs.writeFileSync(path.join(marks, 'go'), '');
    expect((await first.exited).code).toBe(0);
    const run = await rbp(['run', out]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('hello');
  });

  it('a lock left by a dead build is taken over', async () => {
    const out = path.join(tmpDir('rbp-out-'), 'out');
    // pid 2^22+1 is above Linux's pid_max default range: no such process.
    fs.writeFileSync(`${out}.rbp-lock`, '4194305\n');
    const r = await rbp(['build', goodApp(), '--out', out, ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(fs.existsSync(`${out}.rbp-lock`)).toBe(false);
  });
});
