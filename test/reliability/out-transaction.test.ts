/**
 * A build that fails or is killed leaves OUT its previous complete build. A build is stopped at every
 * step of the OUT transaction (rbp stops itself at each named checkpoint: lib/platform/checkpoint.ts)
 * and inside its buildpacks (in detect, halfway through a buildpack's layers, between two
 * buildpacks), then killed with SIGKILL, as a power cut would. The next rbp command makes OUT the
 * previous complete build (or the new one, once export had written it), as any reader sees it (`cp
 * -a OUT`, files read through OUT), and `rbp run OUT` serves it. The builds alternate between two
 * generations of an app whose layer `lib` is reused from build to build and named by absolute paths
 * (the process command, a link in the workspace), so a reused layer must stay true at OUT's path.
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
    '[ "$(cat "$CNB_PLATFORM_DIR/env/FAIL_B" 2>/dev/null)" = 1 ] && exit 3',
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

const kill = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
};

describe('a build that fails or is killed leaves OUT its previous complete build', () => {
  it('a build stopped and killed at every step leaves OUT, after the next rbp command, the previous or the new complete build, and rbp run serves it', async () => {
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const scratch = tmpDir('rbp-atomic-');
    const out = path.join(scratch, 'out');
    const marks = tmpDir('rbp-atomic-marks-');
    const full = async (gen: string) => {
      const r = await buildTo(app, out, marks, gen);
      expect(r.exitCode, r.all).toBe(0);
      return complete(out)!;
    };
    // The two generations as complete builds: the reference each reader's view must equal.
    const want: Record<string, string> = {};
    want.A = (await full('A')).hash;
    want.B = (await full('B')).hash;
    const serverIno = fs.statSync(path.join(out, 'layers', 'test_a', 'lib', 'server.js')).ino;
    // Where the buildpacks saw their work: OUT's own path, where the app runs from.
    expect(fs.readFileSync(path.join(out, 'layers', 'test_a', 'rt', 'seen-at'), 'utf8').trim()).toBe(path.join(fs.realpathSync(scratch), 'out', 'workspace'));

    const steps = [...CHECKPOINTS.slice(0, 2), 'detect', ...CHECKPOINTS.slice(2, 4), 'build-a', 'build-b', ...CHECKPOINTS.slice(4)];
    expect(new Set(steps).size).toBe(CHECKPOINTS.length + IN_BUILDPACKS.length);
    for (const step of steps) {
      const before = complete(out)!;
      const next = before.gen === 'A' ? 'B' : 'A';
      await killAt({ app, out, marks, gen: next, step }, () => {
        // Stopped there: OUT is the new complete build once export wrote rbp.toml; until then the
        // previous complete build waits beside it.
        const done = CHECKPOINTS.indexOf(step as never) >= CHECKPOINTS.indexOf('exported');
        if (done) expect(complete(out)?.hash, step).toBe(want[next]);
        else expect(complete(`${out}.rbp-previous`)?.hash, step).toBe(before.hash);
      });
      // Killed there: the next rbp command makes OUT a complete build again, and serves it.
      const run = await rbp(['run', out, '--dry-run']);
      expect(run.exitCode, run.all).toBe(0);
      const after = await asReadersSeeIt(out, scratch);
      expect(after.hash, `${step}: after SIGKILL`).toBe(want[after.gen]);
      expect(after.gen, step).toBe(CHECKPOINTS.indexOf(step as never) >= CHECKPOINTS.indexOf('exported') ? next : before.gen);
      expect(fs.existsSync(`${out}.rbp-previous`), step).toBe(false);
      await servesGeneration(out, after.gen);
    }
    // The next builds carry on: a complete new build, the reused layer still the same files (moved
    // and linked, never copied), its absolute paths true; nothing left beside OUT but its cache.
    const last = complete(out)!.gen === 'A' ? 'B' : 'A';
    expect((await full(last)).hash).toBe(want[last]);
    await servesGeneration(out, last);
    expect(fs.statSync(path.join(out, 'layers', 'test_a', 'lib', 'server.js')).ino).toBe(serverIno);
    expect(
      fs
        .readdirSync(scratch)
        .filter((n) => n.startsWith('out'))
        .sort(),
    ).toEqual(['out', 'out.rbp-cache']);
  });

  it('a build that fails puts the previous OUT back as it was, and the layers it had restored are made again or relinked next time', async () => {
    const app = scriptedApp(SCRIPTS, { 'gen.txt': 'A\n' });
    const out = path.join(tmpDir('rbp-fail-'), 'out');
    const marks = tmpDir('rbp-fail-marks-');
    expect((await buildTo(app, out, marks, 'A')).exitCode).toBe(0);
    const before = complete(out)!;
    fs.writeFileSync(path.join(app, 'gen.txt'), 'B\n');
    // b fails after a has reused lib (restored from the cache).
    const failing = await rbp(['build', app, '--out', out, ...bpArgs('a', 'b'), '--env', 'STOP_IN=', '--env', `MARKS=${marks}`, '--env', 'FAIL_B=1']);
    expect(failing.exitCode, failing.all).toBe(51);
    expect(failing.all).toContain(`The previous build in ${out} is unchanged.`);
    expect(complete(out)).toEqual(before);
    const again = await buildTo(app, out, marks, 'B');
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toContain('lib (from the previous build)');
    expect(complete(out)!.gen).toBe('B');
    await servesGeneration(out, 'B');
  });

  it('as a user other than root, the buildpacks run as that user and the files are the user\'s', async () => {
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
    expect((await buildTo(app, out, marks, 'A', env, as)).exitCode).toBe(0);
    const second = await buildTo(app, out, marks, 'B', env, as);
    expect(second.exitCode, second.all).toBe(0);
    expect(complete(out)!.gen).toBe('B');
    const rt = path.join(out, 'layers', 'test_a', 'rt');
    expect(fs.readFileSync(path.join(rt, 'uid'), 'utf8').trim()).toBe(String(uid));
    for (const f of [rt, path.join(out, 'layers', 'test_a', 'lib', 'server.js'), path.join(out, 'workspace', 'gen.txt'), path.join(out, 'rbp.toml')])
      expect(fs.statSync(f).uid, f).toBe(uid);
    await servesGeneration(out, 'B');
  });
});
