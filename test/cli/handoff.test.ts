/**
 * `rbp run` through the package's bin (dist/rbp, as a user runs it) hands its place over (nothing of
 * rbp's in memory beside the app; lib/platform/handoff.ts): on a Node.js without process.execve (this
 * machine's 20), rbp.js plans the launch and the bin's sh execs the process, which keeps the pid
 * `rbp run` was started with. Real builds, real processes, read in /proc:
 * - a process of shell buildpacks (no tools): the pid is the process itself, with exactly the
 *   planned argv, folder and environment; no Node.js and no shell of rbp in its tree; SIGTERM and
 *   SIGINT reach it, its exit status (and a kill by signal) is the run's; OUT is marked in use
 *   under that pid; --dry-run prints the same plan as rbp.js run directly;
 * - node-hello (our node buildpack): nothing to supervise, the pid is `node server.js`; with
 *   --restart on-failure, and with one request-flow middleware, the launch's sh (not a Node.js)
 *   supervises.
 */
import { execa } from 'execa';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDOFF_PID, handoffProblem, handoffScript } from '../../lib/platform/handoff.ts';
import { runDirOf } from '../../lib/platform/in-use.ts';
import { copyFixture, envArgs, FIXTURES, freePort, MACHINE_PATH, rbp, ROOT, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';

const BIN = path.join(ROOT, 'dist', 'rbp');
const trust: Record<string, string> = process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};

/** What `pid` runs; [] once it is gone (the app's `sleep`s come and go). */
function cmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

function environ(pid: number): Record<string, string> {
  const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

function exe(pid: number): string {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** `pid` and everything below it. */
function tree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(tree)];
}

/** No process of the tree is rbp (its Node.js or its sh wrapper). */
function expectNoRbp(pid: number): void {
  for (const p of tree(pid)) {
    const line = cmdline(p).join(' ');
    expect(line).not.toContain(path.join(ROOT, 'dist', 'rbp'));
  }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const answers = (port: number) => () =>
  fetch(`http://127.0.0.1:${port}/`).then(
    (r) => r.status === 200,
    () => false,
  );

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `dist/rbp ARGS` in the background, as a user's shell or a service manager starts it. */
function startBin(args: string[], env: Record<string, string> = {}): Started {
  const child = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: MACHINE_PATH, NO_COLOR: '1', ...env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return { child, output: () => output, exited };
}

describe('handoffScript', () => {
  it('cd, then exec env -i with exactly the variables and the argv, each word quoted for sh', () => {
    const p = { argv: ['/bin/echo', "it's", '$HOME', 'a\nb'], cwd: '/tmp/x y', env: { A: "o'k", PATH: '/bin' } };
    expect(handoffProblem(p)).toBeUndefined();
    expect(handoffScript(p)).toBe(`cd '/tmp/x y' || exit 82\nexec env -i 'A=o'\\''k' 'PATH=/bin' '/bin/echo' 'it'\\''s' '$HOME' 'a\nb'\n`);
  });

  it('what env -i would read otherwise is left to rbp.js to start', () => {
    const base = { argv: ['/bin/true'], cwd: '/', env: {} };
    expect(handoffProblem({ ...base, argv: ['true'] })).toMatch(/not an absolute path/);
    expect(handoffProblem({ ...base, argv: ['/opt/a=b/run'] })).toMatch(/not an absolute path without '='/);
    expect(handoffProblem({ ...base, env: { '-i': 'x' } })).toMatch(/variable name/);
    expect(handoffProblem({ ...base, argv: ['/bin/true', 'a\0b'] })).toMatch(/NUL/);
  });

  it('the bin sets the variable rbp.js reads', () => {
    expect(fs.readFileSync(BIN, 'utf8')).toContain(`${HANDOFF_PID}=$$ node -- "$rbp_js" "$@" 3>&1`);
  });
});

describe('a process of shell buildpacks, through dist/rbp', () => {
  let out = '';
  beforeAll(async () => {
    const build = launchToml(`[[processes]]
type = "web"
command = ["sh", "-c", "trap 'echo trapped-term > \\"$MARKER\\"; exit 7' TERM; trap 'echo trapped-int > \\"$MARKER\\"; exit 8' INT; echo \\"app says $GREETING from $PWD\\"; touch \\"$READY\\"; while :; do sleep 0.05; done"]
default = true

[[processes]]
type = "status"
command = ["sh", "-c", "exit 5"]`);
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': build });
    out = path.join(tmpDir('rbp-handoff-'), 'out');
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a')]);
    expect(r.exitCode, r.all).toBe(0);
  });

  const started = () => {
    const dir = tmpDir('rbp-handoff-');
    const marker = path.join(dir, 'marker');
    const ready = path.join(dir, 'ready');
    const run = startBin(['run', out, '--port', '18990', ...envArgs({ MARKER: marker, READY: ready, GREETING: 'hi' })]);
    return { run, marker, ready };
  };

  it('the pid rbp run started with is the process itself: its argv, folder and environment as planned; nothing of rbp left', async () => {
    const args = ['run', out, '--port', '18990', ...envArgs({ GREETING: 'hi' })];
    const { run, marker, ready } = started();
    try {
      await until('the process', () => fs.existsSync(ready));
      const pid = run.child.pid!;
      const plan = JSON.parse((await rbp([...args, '--dry-run', ...envArgs({ MARKER: marker, READY: ready })])).stdout) as {
        argv: string[];
        cwd: string;
        env: Record<string, string>;
      };
      expect(cmdline(pid)).toEqual(plan.argv);
      expect(fs.readlinkSync(`/proc/${pid}/cwd`)).toBe(plan.cwd);
      // Exactly the planned environment, as execve gives it, and not the channel's variable.
      const seen = environ(pid);
      expect(seen).toEqual(plan.env);
      expect(seen).not.toHaveProperty(HANDOFF_PID);
      expectNoRbp(pid);
      for (const p of tree(pid)) expect(path.basename(exe(p))).not.toMatch(/^node/);
      // rbp prune keeps OUT: it is marked in use under the process's pid.
      expect(fs.existsSync(path.join(runDirOf(out), String(pid)))).toBe(true);
      expect(run.output()).toContain(`app says hi from ${plan.cwd}`);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toEqual({ code: 7, signal: null });
    expect(fs.readFileSync(marker, 'utf8')).toBe('trapped-term\n');
  });

  it('SIGINT reaches the process; a kill by a signal is the run’s end', async () => {
    const first = started();
    await until('the process', () => fs.existsSync(first.ready));
    first.run.child.kill('SIGINT');
    expect(await first.run.exited).toEqual({ code: 8, signal: null });
    expect(fs.readFileSync(first.marker, 'utf8')).toBe('trapped-int\n');
    const second = started();
    await until('the process', () => fs.existsSync(second.ready));
    second.run.child.kill('SIGKILL');
    expect(await second.run.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('the exit status is the process’s; a launch error and --dry-run are as with rbp.js', async () => {
    expect((await execa(BIN, ['run', out, '--process', 'status'], { reject: false, env: { PATH: MACHINE_PATH } })).exitCode).toBe(5);
    // rbp.js with the variable but no channel on fd 3 (libuv's own fds may be there): it starts the process itself.
    expect((await rbp(['run', out, '--process', 'status'], { env: { [HANDOFF_PID]: String(process.pid) } })).exitCode).toBe(5);
    const bad = await execa(BIN, ['run', out, '--process', 'nope'], { reject: false, env: { NO_COLOR: '1', PATH: MACHINE_PATH } });
    expect(bad.exitCode).toBe(82);
    expect(bad.stderr).toContain('(error id: platform/launch/process)');
    const viaBin = await execa(BIN, ['run', out, '--dry-run', '--port', '18991'], { reject: false, env: { NO_COLOR: '1', PATH: MACHINE_PATH } });
    const viaJs = await rbp(['run', out, '--dry-run', '--port', '18991']);
    expect(viaBin.exitCode).toBe(0);
    expect(JSON.parse(viaBin.stdout)).toEqual(JSON.parse(viaJs.stdout));
  });
});

describe('node-hello through dist/rbp: no Node.js of ours beside an app that needs no supervising', () => {
  let out = '';
  beforeAll(async () => {
    const app = copyFixture('node-hello');
    fs.copyFileSync(path.join(FIXTURES, 'flow-app', 'middleware.mjs'), path.join(app, 'middleware.mjs'));
    out = path.join(tmpDir('rbp-handoff-node-'), 'out');
    const r = await rbp(['build', app, '--out', out, '--type', 'node', ...envArgs(trust)]);
    expect(r.exitCode, r.all).toBe(0);
  }, 300_000);

  /** `rbp run` through the bin, with `env` for rbp: the pid is `node server.js` alone, and SIGTERM ends the run with its status 0. */
  async function runsAsTheApp(env: Record<string, string> = {}) {
    const port = await freePort();
    const run = startBin(['run', out, '--port', String(port)], env);
    try {
      await until('the app', answers(port));
      expect(cmdline(run.child.pid!)).toEqual(['node', 'server.js']);
      expect(tree(run.child.pid!)).toEqual([run.child.pid]);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toEqual({ code: 0, signal: null });
  }

  it('nothing to supervise: the pid is `node server.js`, and SIGTERM ends the run with its status 0', async () => {
    await runsAsTheApp();
  });

  it('the same when the node on PATH has process.execve (the runtime’s 24): the bin’s sh hands over, rbp.js does not exec under it', async () => {
    await runsAsTheApp({ PATH: `${path.join(out, 'layers/rbp_node/node/bin')}:${MACHINE_PATH}` });
  });

  it('--restart on-failure: the launch (sh, not Node.js) supervises and starts the app again after a crash', async () => {
    const port = await freePort();
    const run = startBin(['run', out, '--port', String(port), '--restart', 'on-failure'], { RBP_RESTART_FIRST_DELAY: '0.1' });
    try {
      await until('the app', answers(port));
      const pid = run.child.pid!;
      // The launch process (rbp-launch, sh) supervises the app itself.
      expect(cmdline(pid)).toEqual(['/bin/sh', path.join(out, 'layers/rbp_node/launcher/bin/rbp-launch')]);
      expect(path.basename(exe(pid))).not.toMatch(/^node/);
      expectNoRbp(pid);
      const app = childrenOf(pid).find((p) => cmdline(p).join(' ') === 'node server.js');
      expect(app).toBeDefined();
      process.kill(app!, 'SIGKILL');
      await until('the restarted app', async () => childrenOf(pid).some((p) => p !== app) && (await answers(port)()));
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toEqual({ code: 0, signal: null });
  });

  it('one middleware: the launch’s sh runs the chain, no Node.js of ours stays beside the app and the middleware', async () => {
    const port = await freePort();
    const appPort = await freePort();
    const flow = { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: 'node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@' };
    const run = startBin(['run', out, '--port', String(port), ...envArgs(flow)], { RBP_APP_PORT: String(appPort) });
    try {
      await until('the chain', answers(port));
      const pid = run.child.pid!;
      // The launch planned the chain on a Node.js that has ended, and supervises it in sh, with rbp's pid.
      expect(cmdline(pid)).toEqual(['/bin/sh', path.join(out, 'layers/rbp_node/launcher/bin/rbp-launch')]);
      expect(tree(pid).filter((p) => cmdline(p).some((w) => w.endsWith('plan.cjs')))).toEqual([]);
      expectNoRbp(pid);
      const r = await fetch(`http://127.0.0.1:${port}/`);
      expect(r.headers.get('x-flow-via')).toBe('custom');
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toEqual({ code: 0, signal: null });
  });
});
