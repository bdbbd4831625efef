/**
 * The launch's shell form (lib/launch/shell.ts), run by dash on plans made here: it starts the app as
 * the Node.js launcher would, with no Node.js beside it. Each case waits on the event itself (a line
 * of output, the exit), never on time. The apps are small sh programs.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SH_READ_HELPERS } from '../../lib/config/shell.ts';
import { formatDuration } from '../../lib/log.ts';
import type { LaunchPlan } from '../../lib/launch/plan.ts';
import { restartDelay } from '../../lib/launch/restart.ts';
import { shellForm, SHELL_NAME, SUPERVISOR_LIB } from '../../lib/launch/shell.ts';
import { tmpDir } from '../helpers/rbp.ts';

function plan(
  dir: string,
  app: string,
  o: { restart?: 'no' | 'on-failure'; firstDelayMs?: number; stopMs?: number; hooks?: LaunchPlan['hooks']; env?: Record<string, string> } = {},
): LaunchPlan {
  const file = path.join(dir, 'app.sh');
  fs.writeFileSync(file, app);
  const env = { PORT: '8123', GREETING: 'it\'s "quoted" $HOME `x` \\ *', ...o.env };
  return {
    argv: ['/bin/sh', file],
    cwd: dir,
    env,
    envSources: Object.fromEntries(Object.keys(env).map((k) => [k, k === 'PORT' ? 'port' : 'runtime'] as const)),
    port: 8123,
    portSource: 'RBP_PUBLIC_PORT',
    publicPort: 8123,
    restart: { policy: o.restart ?? 'no', firstDelayMs: o.firstDelayMs ?? 1000, maxDelayMs: 30_000, healthyRunMs: 60_000 },
    timeouts: { listenMs: 60_000, stopMs: o.stopMs ?? 10_000 },
    healthCheck: { port: 8123, paths: ['/'] },
    hooks: o.hooks ?? {},
    facts: {},
  };
}

interface Run {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the output holds `text`. */
  until: (text: string) => Promise<void>;
  exited: Promise<number | null>;
}

function run(p: LaunchPlan, env: Record<string, string> = {}): Run {
  const child = spawn('dash', ['-c', shellForm(p), SHELL_NAME], { cwd: p.cwd, env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.filter((x) => out.includes(x.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return {
    child,
    output: () => out,
    until: (text) => (out.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve }))),
    exited,
  };
}

/** A process that runs: not gone, not a zombie. */
const alive = (pid: number): boolean => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, { encoding: 'utf8', flag: 'r' });
  return !/^\d+ \(.*\) Z/.test(stat);
};
const running = (pid: number): boolean => {
  try {
    return alive(pid);
  } catch {
    return false;
  }
};

/** Resolves once `pid` has ended, as its /proc entry says; fails after 10 s. */
async function gone(pid: number): Promise<void> {
  const t0 = Date.now();
  while (running(pid)) {
    if (Date.now() - t0 > 10_000) throw new Error(`process ${pid} still runs`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('the shell form', () => {
  it('logs the waits the Node.js launcher would: formatDuration of restartDelay, in sh arithmetic', () => {
    const us = [0, 400, 500, 999_499, 999_500, 1_000_000, 1_049_999, 1_050_000, 2_500_000, 59_949_999, 59_950_000, 60_000_000, 119_600_000, 3_600_000_000];
    const firsts = [1, 20, 123.456, 1000, 7000, 40_000];
    const script = [
      ...SH_READ_HELPERS,
      SUPERVISOR_LIB,
      ...us.map((u) => `rbp_dur ${u}; echo "$dur"`),
      ...firsts.flatMap((f) => [`first_us=${Math.round(f * 1000)} max_us=30000000`, ...[1, 2, 3, 4, 5, 6, 10, 40].map((n) => `rbp_delay ${n}; echo "$delay"`)]),
    ].join('\n');
    const lines = execFileSync('dash', ['-c', script], { encoding: 'utf8' }).trimEnd().split('\n');
    expect(lines.slice(0, us.length)).toEqual(us.map((u) => formatDuration(u / 1000)));
    expect(lines.slice(us.length).map(Number)).toEqual(firsts.flatMap((f) => [1, 2, 3, 4, 5, 6, 10, 40].map((n) => Math.round(restartDelay(n, f) * 1000))));
  });

  it('restarts a crashed app with the back-off, one line each; a clean exit ends the run with 0; the hooks run once, around it', async () => {
    const dir = tmpDir('rbp-shell-');
    const app = 'n=$(cat starts 2>/dev/null || echo 0); n=$((n + 1)); echo $n > starts; echo "start $n, $GREETING"\ncase $n in 1 | 2) exit 3 ;; esac\n';
    const r = run(
      plan(dir, app, {
        restart: 'on-failure',
        firstDelayMs: 20,
        hooks: { prestart: 'echo "pre: $npm_lifecycle_event"', poststart: 'echo "post: $npm_lifecycle_event"' },
      }),
    );
    expect(await r.exited, r.output()).toBe(0);
    const shown = `/bin/sh ${path.join(dir, 'app.sh')}`;
    expect(r.output().split('\n')).toEqual([
      'pre: prestart',
      '- the launcher stays to supervise: poststart runs after the app exits; RBP_RESTART=on-failure: the launcher starts the app again when it crashes (as /bin/sh: no Node.js beside the app)',
      `- starting app: ${shown}`,
      'start 1, it\'s "quoted" $HOME `x` \\ *',
      `! app (${shown}) exited with status 3`,
      `! restarting the app in ${formatDuration(restartDelay(1, 20))} (restart 1, RBP_RESTART=on-failure; last status 3)`,
      `- starting app: ${shown}`,
      'start 2, it\'s "quoted" $HOME `x` \\ *',
      `! app (${shown}) exited with status 3`,
      `! restarting the app in ${formatDuration(restartDelay(2, 20))} (restart 2, RBP_RESTART=on-failure; last status 3)`,
      `- starting app: ${shown}`,
      'start 3, it\'s "quoted" $HOME `x` \\ *',
      '- app exited with status 0',
      'post: poststart',
      '',
    ]);
  });

  it('without a restart policy a crash ends the run with the app’s status', async () => {
    const r = run(plan(tmpDir('rbp-shell-'), 'exit 3\n', { hooks: { poststart: 'echo post' } }));
    expect(await r.exited).toBe(3);
    expect(r.output()).toContain('! launch exits with status 3: app failed\npost\n');
    expect(r.output()).not.toContain('restarting');
  });

  it('passes SIGTERM on to the app’s whole process group and exits with the app’s status', async () => {
    const dir = tmpDir('rbp-shell-');
    const r = run(plan(dir, "trap 'echo got TERM; exit 7' TERM\nsleep 300 & echo $! > child.pid\necho ready\nwait\n", { restart: 'on-failure' }));
    await r.until('ready');
    const grandchild = Number(fs.readFileSync(path.join(dir, 'child.pid'), 'utf8'));
    expect(running(grandchild)).toBe(true);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(7);
    expect(r.output()).toContain('- SIGTERM: stopping app\n');
    expect(r.output()).toContain('got TERM');
    // What the app left in its group is gone too (SIGKILL is delivered as the kernel schedules it).
    await gone(grandchild);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const)('%s stops an app that does not handle it: 128+n', async (sig, status) => {
    // exec: a shell waiting on a child that a signal did not end (yet) would go on after it.
    const r = run(plan(tmpDir('rbp-shell-'), 'echo ready\nexec sleep 300\n', { restart: 'on-failure' }));
    await r.until('ready');
    r.child.kill(sig);
    expect(await r.exited, r.output()).toBe(status);
    expect(r.output()).toContain(`- ${sig}: stopping app`);
    expect(r.output()).not.toContain('restarting');
  });

  it('passes QUIT, USR1 and USR2 on as they are, without stopping', async () => {
    const r = run(
      plan(tmpDir('rbp-shell-'), "trap 'echo got USR1' USR1\ntrap 'echo got USR2; exit 0' USR2\necho ready\nwhile :; do sleep 300 & wait; done\n", {
        restart: 'on-failure',
      }),
    );
    await r.until('ready');
    r.child.kill('SIGUSR1');
    await r.until('got USR1');
    r.child.kill('SIGUSR2');
    expect(await r.exited).toBe(0);
    expect(r.output()).toContain('- app exited with status 0');
  });

  it('after RBP_STOP_TIMEOUT the app gets SIGKILL: 137', async () => {
    const r = run(plan(tmpDir('rbp-shell-'), "trap '' TERM\necho ready\nsleep 300\n", { restart: 'on-failure', stopMs: 200 }));
    await r.until('ready');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(137);
    expect(r.output()).toContain('! app still running after 200ms: SIGKILL');
  });

  it('a stop signal while waiting to restart ends the run with 128+n, and starts nothing more', async () => {
    const r = run(plan(tmpDir('rbp-shell-'), 'echo started\nexit 1\n', { restart: 'on-failure', firstDelayMs: 20_000 }));
    await r.until('! restarting the app in 20.0s (restart 1, RBP_RESTART=on-failure; last status 1)');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(143);
    expect(r.output()).toContain('- SIGTERM while waiting to restart: stopping');
    expect(r.output().split('started').length - 1).toBe(1);
  });

  it('nothing to supervise: the form becomes the app itself (the same pid), with the plan’s variables', async () => {
    const r = run(plan(tmpDir('rbp-shell-'), 'echo "pid $$ port $PORT"\n'));
    expect(await r.exited).toBe(0);
    expect(r.output()).toContain("- exec /bin/sh (the launch's shell form starts it: nothing to supervise)\n");
    expect(r.output()).toContain(`pid ${r.child.pid} port 8123`);
  });

  it('a failed prestart stops the launch with its status; the app never starts', async () => {
    const r = run(plan(tmpDir('rbp-shell-'), 'echo started\n', { hooks: { prestart: 'exit 4' } }));
    expect(await r.exited).toBe(4);
    expect(r.output()).toBe('launch: the prestart script failed (exit 4): exit 4\n');
  });

  it('RBP_DRY_RUN=shell: the form says what it would run, and it is the plan', async () => {
    const dir = tmpDir('rbp-shell-');
    const p = plan(dir, 'exit 0\n', { restart: 'on-failure', firstDelayMs: 123.456, stopMs: 2500, hooks: { poststart: 'echo "a\tb\nc"' } });
    const r = run(p, { RBP_DRY_RUN: 'shell' });
    expect(await r.exited).toBe(0);
    expect(JSON.parse(r.output())).toEqual({
      form: 'shell',
      argv: p.argv,
      cwd: fs.realpathSync(dir),
      env: p.env,
      port: p.port,
      restart: p.restart,
      stopTimeoutMs: p.timeouts.stopMs,
      mode: 'supervise',
      modeWhy: 'poststart runs after the app exits; RBP_RESTART=on-failure: the launcher starts the app again when it crashes',
      hooks: { prestart: '', poststart: p.hooks.poststart },
    });
  });
});
