/**
 * OUT is complete at every instant (issue 28, point 1). A build is stopped at every step of the OUT
 * transaction (rbp stops itself at each named checkpoint: lib/platform/checkpoint.ts) and inside
 * its buildpacks (in detect, halfway through a buildpack's layers, between two buildpacks), then
 * killed with SIGKILL, as a power cut would. Each time OUT, as any reader sees it (`cp -a OUT`, files
 * read through OUT), is the previous complete build or the new complete build, stopped and killed
 * alike, and `rbp run OUT` serves that build. The builds alternate between two generations of an app
 * whose layer `lib` is reused from build to build and named by absolute paths (the process command, a
 * link in the workspace, as the node buildpack links node_modules), so a reused layer must stay true
 * at OUT's path across generations.
 * Where no mount namespace can be had (no unshare), a build happens in place, says so, and a killed
 * one is put right by the next rbp command.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { describe, expect, it } from 'vitest';
import { CHECKPOINTS } from '../../lib/platform/checkpoint.ts';
import { RBP, rbp, serve, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, scriptedApp } from '../lifecycle/helpers.ts';

/** The app's server, in the reused layer `lib`: what it answers names the generation it reads. */
const SERVER = `const fs = require('fs');
const path = require('path');
const read = (p) => fs.readFileSync(p, 'utf8').trim();
require('http').createServer((q, s) => s.end(read(path.join(__dirname, '..', 'rt', 'gen')) + ':' + read('gen.txt') + ':' + read('lib/id'))).listen(Number(process.env.PORT), '127.0.0.1');`;

/** A buildpack stops itself (and says its pid) where the build's STOP_IN variable names its step. */
const STOP = `stop() { if [ "$(cat "$CNB_PLATFORM_DIR/env/STOP_IN" 2>/dev/null)" = "$1" ]; then echo $$ > "$(cat "$CNB_PLATFORM_DIR/env/MARKS")/stopped"; kill -STOP $$; fi; }`;

const SCRIPTS = {
  'a/detect': [STOP, 'stop detect', 'exit 0'].join('\n'),
  'a/build': [
    STOP,
    // lib: launch + cache, built once and reused (restored) by every later build of the same metadata.
    'if grep -q "v = 1" "$CNB_LAYERS_DIR/lib.toml" 2>/dev/null && [ -f "$CNB_LAYERS_DIR/lib/server.js" ]; then :; else',
    '  rm -rf "$CNB_LAYERS_DIR/lib" && mkdir -p "$CNB_LAYERS_DIR/lib"',
    `  cat > "$CNB_LAYERS_DIR/lib/server.js" <<'JS'\n${SERVER}\nJS`,
    '  od -An -N8 -tx1 /dev/urandom | tr -d " \\n" > "$CNB_LAYERS_DIR/lib/id"',
    'fi',
    'printf "[types]\\nlaunch = true\\ncache = true\\n[metadata]\\nv = 1\\n" > "$CNB_LAYERS_DIR/lib.toml"',
    // rt: launch only, made by every build: the generation, and where the buildpack saw its work.
    'mkdir -p "$CNB_LAYERS_DIR/rt"',
    'cat gen.txt > "$CNB_LAYERS_DIR/rt/gen"',
    'pwd -P > "$CNB_LAYERS_DIR/rt/seen-at"',
    'id -u > "$CNB_LAYERS_DIR/rt/uid"',
    'stop build-a',
    'printf "[types]\\nlaunch = true\\n" > "$CNB_LAYERS_DIR/rt.toml"',
    'ln -s "$CNB_LAYERS_DIR/lib" lib',
    'cat > "$CNB_LAYERS_DIR/launch.toml" <<TOML',
    '[[processes]]',
    'type = "web"',
    'command = ["node", "$CNB_LAYERS_DIR/lib/server.js"]',
    'default = true',
    'TOML',
  ].join('\n'),
  'b/detect': 'exit 0',
  'b/build': [
    STOP,
    'stop build-b',
    'mkdir -p "$CNB_LAYERS_DIR/x"',
    'cat gen.txt > "$CNB_LAYERS_DIR/x/gen"',
    'printf "[types]\\nlaunch = true\\n" > "$CNB_LAYERS_DIR/x.toml"',
  ].join('\n'),
};

/** Steps inside the buildpacks (the rest are rbp's own checkpoints). */
const IN_BUILDPACKS = ['detect', 'build-a', 'build-b'];

/**
 * OUT as a reader sees it: every path with its type, mode, link target and contents, except rbp.toml
 * (which holds the build's time), whose presence marks a complete build. Undefined when OUT is not
 * a complete build.
 */
function complete(dir: string): { gen: string; hash: string } | undefined {
  if (!fs.existsSync(path.join(dir, 'rbp.toml'))) return undefined;
  const h = crypto.createHash('sha256');
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const rel = path.relative(dir, p);
      if (rel === 'rbp.toml') continue;
      const st = fs.lstatSync(p);
      h.update(`${rel}\0${st.mode}\0`);
      if (st.isSymbolicLink()) h.update(fs.readlinkSync(p));
      else if (st.isDirectory()) walk(p);
      else h.update(fs.readFileSync(p));
      h.update('\0');
    }
  };
  walk(dir);
  return { gen: fs.readFileSync(path.join(dir, 'workspace', 'gen.txt'), 'utf8').trim(), hash: h.digest('hex') };
}

/** `cp -a OUT` and a file read through OUT: both one complete build, the same one. */
async function asReadersSeeIt(out: string, scratch: string): Promise<{ gen: string; hash: string }> {
  const copy = path.join(scratch, `copy-${crypto.randomBytes(4).toString('hex')}`);
  await execa('cp', ['-a', out, copy]);
  const copied = complete(copy);
  fs.rmSync(copy, { recursive: true, force: true });
  expect(copied, 'cp -a OUT is a complete build').toBeDefined();
  const gen = fs.readFileSync(path.join(out, 'layers', 'test_a', 'rt', 'gen'), 'utf8').trim();
  expect(fs.readFileSync(path.join(out, 'workspace', 'gen.txt'), 'utf8').trim()).toBe(gen);
  expect(copied!.gen).toBe(gen);
  return copied!;
}

function stateOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `rbp run OUT` answers with the generation OUT holds, read from its reused layer, its own layer and its workspace. */
async function servesGeneration(out: string, gen: string): Promise<void> {
  const libId = fs.readFileSync(path.join(out, 'layers', 'test_a', 'lib', 'id'), 'utf8').trim();
  const served = await serve(out, {}, async (port) => {
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(`${gen}:${gen}:${libId}`);
  });
  expect(served.output).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}

/** A build of generation `gen` to its end (no step stops it), run through `as` (a command that runs another as another user) if given. */
async function buildTo(app: string, out: string, marks: string, gen: string, env: NodeJS.ProcessEnv = process.env, as: string[] = []) {
  fs.writeFileSync(path.join(app, 'gen.txt'), `${gen}\n`);
  const args = ['build', app, '--out', out, ...bpArgs('a', 'b'), '--env', 'STOP_IN=', '--env', `MARKS=${marks}`];
  if (as.length === 0) return rbp(args, { env });
  const r = finished(await execa(as[0]!, [...as.slice(1), 'node', '--', RBP, ...args], { reject: false, all: true, env: { ...env, NO_COLOR: '1' } }));
  return { exitCode: r.exitCode ?? -1, all: r.all ?? '' };
}

/**
 * A build of generation `gen` stopped at `step` (rbp's checkpoint, or a buildpack's own step), then
 * killed with SIGKILL; `whileStopped` looks at OUT in between. What the test started through rbp (a
 * stopped detect is no build's process group) is ended whatever happens.
 */
async function killAt(
  o: { app: string; out: string; marks: string; gen: string; step: string; env?: NodeJS.ProcessEnv; as?: string[] },
  whileStopped: () => Promise<void> | void,
): Promise<void> {
  const inBuildpack = IN_BUILDPACKS.includes(o.step);
  fs.writeFileSync(path.join(o.app, 'gen.txt'), `${o.gen}\n`);
  fs.rmSync(path.join(o.marks, 'stopped'), { force: true });
  const as = o.as ?? [];
  const child = spawn(
    as[0] ?? 'node',
    [
      ...as.slice(1),
      ...(as.length ? ['node'] : []),
      '--',
      RBP,
      'build',
      o.app,
      '--out',
      o.out,
      ...bpArgs('a', 'b'),
      '--env',
      `STOP_IN=${inBuildpack ? o.step : ''}`,
      '--env',
      `MARKS=${o.marks}`,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...(o.env ?? process.env), NO_COLOR: '1', ...(inBuildpack ? {} : { RBP_TEST_STOP_AT: o.step }) },
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer | string) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer | string) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stopped = () => {
    const pid = Number(fs.readFileSync(path.join(o.marks, 'stopped'), 'utf8'));
    return stateOf(pid) === 'T' ? pid : undefined;
  };
  let buildpack: number | undefined;
  try {
    if (inBuildpack) {
      await until(() => fs.existsSync(path.join(o.marks, 'stopped')) && stopped() !== undefined, `the buildpack to stop at ${o.step}\n${output}`);
      buildpack = stopped();
    } else await until(() => stateOf(child.pid!) === 'T', `rbp to stop at ${o.step}\n${output}`);
    await whileStopped();
    kill(child.pid!);
    await exited;
  } finally {
    kill(child.pid!);
    if (buildpack) kill(buildpack);
  }
}

/** A PATH of every command of this machine's but `missing` (a machine without them). */
function pathWithout(missing: string[]): string {
  const bin = tmpDir('rbp-without-');
  for (const dir of (process.env.PATH ?? '').split(':').reverse()) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) {
      if (missing.includes(n)) continue;
      fs.rmSync(path.join(bin, n), { force: true });
      fs.symlinkSync(path.join(dir, n), path.join(bin, n));
    }
  }
  return bin;
}

const kill = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
};

describe('OUT is complete at every instant', () => {
  it('a build stopped and killed at every step leaves OUT the previous or the new complete build, and rbp run serves it', async () => {
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const scratch = tmpDir('rbp-atomic-');
    const out = path.join(scratch, 'out');
    const marks = tmpDir('rbp-atomic-marks-');
    const full = async (gen: string) => {
      const r = await buildTo(app, out, marks, gen);
      expect(r.exitCode, r.all).toBe(0);
      expect(r.all).not.toContain('not switched atomically');
      return complete(out)!;
    };
    // The two generations as complete builds: the reference each reader's view must equal.
    const want: Record<string, string> = {};
    want.A = (await full('A')).hash;
    want.B = (await full('B')).hash;
    const serverIno = fs.statSync(path.join(out, 'layers', 'test_a', 'lib', 'server.js')).ino;
    // Where the buildpacks saw their work: OUT's own path, physically (pwd -P), never OUT.rbp-next.
    expect(fs.readFileSync(path.join(out, 'layers', 'test_a', 'rt', 'seen-at'), 'utf8').trim()).toBe(path.join(fs.realpathSync(scratch), 'out', 'workspace'));

    // Every checkpoint but the one only a machine without renameat2 reaches (its own test below),
    // and the one only our own buildpacks reach (test/lifecycle/build-gate.test.ts).
    const ours = CHECKPOINTS.filter((c) => c !== 'switch-halfway' && c !== 'prestarted');
    const steps = [...ours.slice(0, 2), 'detect', ...ours.slice(2, 4), 'build-a', 'build-b', ...ours.slice(4)];
    expect(new Set(steps).size).toBe(CHECKPOINTS.length - 2 + IN_BUILDPACKS.length);
    for (const step of steps) {
      const before = complete(out)!;
      const next = before.gen === 'A' ? 'B' : 'A';
      let seen = before;
      await killAt({ app, out, marks, gen: next, step }, async () => {
        // Stopped there: the previous build until OUT is switched, the new one from then on.
        const switched = CHECKPOINTS.indexOf(step as never) >= CHECKPOINTS.indexOf('switched');
        seen = await asReadersSeeIt(out, scratch);
        expect({ step, gen: seen.gen }).toEqual({ step, gen: switched ? next : before.gen });
        expect(seen.hash, `${step}: OUT is the complete build ${seen.gen}`).toBe(want[seen.gen]);
      });
      // Killed there: still that complete build, and rbp run serves it.
      const after = await asReadersSeeIt(out, scratch);
      expect(after.hash, `${step}: after SIGKILL`).toBe(want[after.gen]);
      expect(after.gen).toBe(seen.gen);
      await servesGeneration(out, after.gen);
    }
    // The next builds carry on: a complete new build, the reused layer still the same files (moved
    // and linked, never copied), its absolute paths true; nothing left beside OUT but its cache and spare.
    const last = complete(out)!.gen === 'A' ? 'B' : 'A';
    expect((await full(last)).hash).toBe(want[last]);
    await servesGeneration(out, last);
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'lib', 'server.js')).ino).toBe(serverIno);
    expect(
      fs
        .readdirSync(scratch)
        .filter((n) => n.startsWith('out'))
        .sort(),
    ).toEqual(['out', 'out.rbp-cache', 'out.rbp-spare']);
  });

  it('an app started from a build keeps that generation beside OUT while it runs; rbp prune removes it once it has ended', async () => {
    const xdg = tmpDir('rbp-atomic-xdg-');
    const env = { ...process.env, XDG_CACHE_HOME: xdg };
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const out = path.join(tmpDir('rbp-atomic-'), 'out');
    const marks = tmpDir('rbp-atomic-marks-');
    const build = (gen: string) => buildTo(app, out, marks, gen, env);
    expect((await build('A')).exitCode).toBe(0);
    let kept = '';
    const served = await serve(out, {}, async () => {
      // While the app started from A runs, a build switches OUT to B: A is kept, the app's working folder.
      const r = await build('B');
      expect(r.exitCode, r.all).toBe(0);
      expect(r.all).toMatch(/the previous build of .* is kept in .*out\.rbp-old\/\S+ while an app started from it runs/);
      const old = fs.readdirSync(`${out}.rbp-old`);
      expect(old).toHaveLength(1);
      kept = path.join(`${out}.rbp-old`, old[0]!);
      expect(fs.readFileSync(path.join(kept, 'workspace', 'gen.txt'), 'utf8')).toBe('A\n');
      expect(complete(out)!.gen).toBe('B');
      const dry = await rbp(['prune', '--dry-run', '--json'], { env });
      expect(JSON.parse(dry.stdout).kept).toContainEqual({
        path: kept,
        why: `an earlier build of ${out} that an app started by rbp run or deploy still runs from`,
      });
    });
    expect(served.output).not.toContain('Error');
    const pruned = await rbp(['prune', '--json'], { env });
    expect(pruned.exitCode, pruned.all).toBe(0);
    expect(JSON.parse(pruned.stdout).removed).toContainEqual(expect.objectContaining({ path: kept, kind: 'generation' }));
    expect(fs.existsSync(`${out}.rbp-old`)).toBe(false);
    expect(complete(out)!.gen).toBe('B');
  });

  it('without renameat2 (no exch, no perl) OUT switches in two renames; a build killed between them is carried through by the next rbp command', async () => {
    const env = { ...process.env, PATH: pathWithout(['exch', 'perl']) };
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const out = path.join(tmpDir('rbp-atomic-'), 'out');
    const marks = tmpDir('rbp-atomic-marks-');
    const first = await buildTo(app, out, marks, 'A', env);
    expect(first.exitCode, first.all).toBe(0);
    await killAt({ app, out, marks, gen: 'B', step: 'switch-halfway', env }, () => {
      // The instant without OUT that this fallback has.
      expect(fs.existsSync(out)).toBe(false);
    });
    const run = await rbp(['run', out, '--dry-run'], { env });
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toContain('had not finished switching');
    await servesGeneration(out, 'B');
    const again = await buildTo(app, out, marks, 'A', env);
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toContain('was switched to the new build in two renames, not one (neither exch (util-linux 2.40+) nor perl is on PATH)');
    expect(complete(out)!.gen).toBe('A');
    expect(fs.readdirSync(path.dirname(out)).sort()).toEqual(['out', 'out.rbp-cache', 'out.rbp-spare']);
  });

  it('where no mount namespace can be had, the build happens in place, says so, and a killed one is undone by the next rbp command', async () => {
    const env = { ...process.env, PATH: pathWithout(['unshare']) };
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const out = path.join(tmpDir('rbp-inplace-'), 'out');
    const marks = tmpDir('rbp-inplace-marks-');
    const first = await buildTo(app, out, marks, 'A', env);
    expect(first.exitCode, first.all).toBe(0);
    expect(first.all).toContain(
      `OUT is not switched atomically here (no private mount namespace: no unshare on PATH (util-linux)): the build happens in ${out} itself`,
    );
    const before = complete(out)!;
    await killAt({ app, out, marks, gen: 'B', step: 'build-a', env }, () => {
      // In place: OUT is the build being made, and the previous one waits beside it.
      expect(complete(out)).toBeUndefined();
      expect(fs.existsSync(`${out}.rbp-previous`)).toBe(true);
    });
    const run = await rbp(['run', out, '--dry-run'], { env });
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toContain('the previous build is back');
    expect(complete(out)).toEqual(before);
    await servesGeneration(out, 'A');
  });

  it('as a user other than root, the buildpacks run as that user (in a user namespace) and OUT still switches atomically', async () => {
    // Run as root (CI), the test builds as uid 1000 through setpriv (util-linux); run as a user, as itself.
    const root = process.getuid?.() === 0;
    const uid = root ? 1000 : process.getuid!();
    const as = root ? ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--'] : [];
    const home = tmpDir('rbp-user-');
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const marks = tmpDir('rbp-user-marks-');
    if (root) for (const d of [home, path.dirname(app), marks]) await execa('chown', ['-R', `${uid}:${uid}`, d]);
    const out = path.join(home, 'out');
    // Everything rbp writes is the user's own: no folder of the test run's (root's) is needed.
    const env = { ...process.env, HOME: home, TMPDIR: home, XDG_CACHE_HOME: path.join(home, 'cache'), RBP_DOWNLOAD_CACHE: path.join(home, 'downloads') };
    const first = await buildTo(app, out, marks, 'A', env, as);
    expect(first.exitCode, first.all).toBe(0);
    expect(first.all).not.toContain('not switched atomically');
    const a = complete(out)!;
    // Stopped halfway through a buildpack, then killed: OUT is A throughout (the build fills the next generation, not OUT).
    await killAt({ app, out, marks, gen: 'B', step: 'build-a', env, as }, async () => {
      expect((await asReadersSeeIt(out, home)).hash).toBe(a.hash);
    });
    expect(complete(out)).toEqual(a);
    const second = await buildTo(app, out, marks, 'B', env, as);
    expect(second.exitCode, second.all).toBe(0);
    expect(complete(out)!.gen).toBe('B');
    // The buildpack ran as the user (not as root of its namespace), at OUT's own path; the files are the user's.
    const rt = path.join(out, 'layers', 'test_a', 'rt');
    expect(fs.readFileSync(path.join(rt, 'uid'), 'utf8').trim()).toBe(String(uid));
    expect(fs.readFileSync(path.join(rt, 'seen-at'), 'utf8').trim()).toBe(path.join(fs.realpathSync(home), 'out', 'workspace'));
    for (const f of [rt, path.join(out, 'layers', 'test_a', 'lib', 'server.js'), path.join(out, 'workspace', 'gen.txt'), path.join(out, 'rbp.toml')])
      expect(fs.statSync(f).uid, f).toBe(uid);
    await servesGeneration(out, 'B');
  });

  it('as root that may not mount, with user namespaces refused (as in a container), the build happens in place and says why each way failed', async () => {
    // A user namespace of the test's own in which rbp is root without CAP_SYS_ADMIN (setpriv drops
    // it) and may make no user namespace (user.max_user_namespaces is 0 there): a container's root
    // under a seccomp profile that refuses unshare fails the same two ways.
    const as = [
      'unshare',
      '--user',
      '--map-root-user',
      '--',
      'sh',
      '-c',
      'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin -- "$@"',
      'container',
    ];
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const out = path.join(tmpDir('rbp-container-'), 'out');
    const marks = tmpDir('rbp-container-marks-');
    const r = await buildTo(app, out, marks, 'A', process.env, as);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(
      `OUT is not switched atomically here (no private mount namespace: mount namespace: unshare failed: Operation not permitted (no CAP_SYS_ADMIN, as in many containers); user namespace: unshare failed: No space left on device (user namespaces turned off or at their limit: sysctl user.max_user_namespaces)): the build happens in ${out} itself`,
    );
    expect(complete(out)!.gen).toBe('A');
    await servesGeneration(out, 'A');
  });
});
