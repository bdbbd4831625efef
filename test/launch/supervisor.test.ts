/**
 * The launch's sh (lib/launch/sh/) carries out exactly the plan's data (lib/launch/plan-data.ts):
 * plans made here are written as a launcher layer's stored plan and run by the system's /bin/sh, with
 * no Node.js. The apps and middlewares are small sh and Node.js programs. Each case waits on the event
 * itself (a line of output, the exit), never on time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planData, shQuote } from '../../lib/launch/plan-data.ts';
import type { LaunchPlan } from '../../lib/launch/plan.ts';
import type { MiddlewareSpec } from '../../lib/launch/request-flow/middlewares.ts';
import { freePort, ROOT, tmpDir } from '../helpers/rbp.ts';
import { stillRunning } from './processes.ts';

interface PlanOptions {
  restart?: 'no' | 'on-failure';
  firstDelayMs?: number;
  stopMs?: number;
  listenMs?: number;
  hooks?: LaunchPlan['hooks'];
  env?: Record<string, string>;
  /** A request flow: the app on appPort, these middlewares from the public port inward. */
  flow?: { publicPort: number; appPort: number; middlewares: MiddlewareSpec[] };
}

/** A plan whose app is the sh program `app`, written in `dir`. */
function plan(dir: string, app: string, o: PlanOptions = {}): LaunchPlan {
  const file = path.join(dir, 'app.sh');
  fs.writeFileSync(file, app);
  const env = { PORT: '8123', GREETING: 'it\'s "quoted" $HOME `x` \\ *', ...o.env };
  const why = [
    ...(o.flow ? ['request flow'] : []),
    ...(o.hooks?.poststart ? ['poststart'] : []),
    ...(o.restart === 'on-failure' ? ['RBP_RESTART=on-failure'] : []),
  ].join('; ');
  return {
    argv: ['/bin/sh', file],
    cwd: dir,
    env,
    envSources: {},
    port: o.flow?.appPort ?? 8123,
    portSource: 'RBP_PUBLIC_PORT',
    publicPort: o.flow?.publicPort ?? 8123,
    ...(o.flow ? { requestFlow: { ...o.flow, block: false, chain: o.flow.middlewares.map((m) => m.kind as 'custom'), skipped: [] } } : {}),
    restart: { policy: o.restart ?? 'no', firstDelayMs: o.firstDelayMs ?? 1000, maxDelayMs: 30_000, healthyRunMs: 60_000 },
    timeouts: { listenMs: o.listenMs ?? 60_000, stopMs: o.stopMs ?? 10_000 },
    hooks: o.hooks ?? {},
    mode: why ? 'supervise' : 'exec',
    why: why || 'nothing to supervise',
    facts: {},
  };
}

/** A middleware that is a Node.js program: listens on `listen`, or not at all. */
function middleware(dir: string, kind: MiddlewareSpec['kind'], listen: number, js: string): MiddlewareSpec {
  const file = path.join(dir, `${kind}.cjs`);
  fs.writeFileSync(file, js);
  return { kind, argv: [process.execPath, file], cwd: dir, listen, forward: 0, shown: `node ${kind}.cjs`, secrets: [] };
}

interface Run {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the output holds `text`. */
  until: (text: string) => Promise<void>;
  exited: Promise<number | null>;
}

/** A launcher layer holding `p` as its stored plan; bin/rbp-launch run in p.cwd with no Node.js. */
function run(p: LaunchPlan, env: Record<string, string> = {}, cleanup: string[] = []): Run {
  const layer = path.join(tmpDir('rbp-sh-layer-'), 'launcher');
  fs.mkdirSync(path.join(layer, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'lib/launch/sh/rbp-launch.sh'), path.join(layer, 'bin/rbp-launch'));
  fs.chmodSync(path.join(layer, 'bin/rbp-launch'), 0o755);
  fs.copyFileSync(path.join(ROOT, 'lib/launch/sh/supervise.sh'), path.join(layer, 'supervise.sh'));
  const data = [
    "rbp_reads='' rbp_port_vars='' rbp_needs_node_before='' rbp_needs_node_after=''",
    `rbp_plan=${shQuote(planData(p, undefined, cleanup).join('\n'))}`,
    '',
  ];
  fs.writeFileSync(path.join(layer, 'stored-plan.sh'), data.join('\n'));
  const child = spawn(path.join(layer, 'bin/rbp-launch'), [], { cwd: p.cwd, env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

describe('the supervisor, for the app alone', () => {
  it('restarts a crashed app with the back-off, one line each; a clean exit ends the run with 0; the hooks run once, around it', async () => {
    const dir = tmpDir('rbp-sh-');
    const app = 'n=$(cat starts 2>/dev/null || echo 0); n=$((n + 1)); echo $n > starts; echo "start $n, $GREETING"\ncase $n in 1 | 2) exit 3 ;; esac\n';
    const p = plan(dir, app, {
      restart: 'on-failure',
      firstDelayMs: 20,
      hooks: { prestart: 'echo "pre: $npm_lifecycle_event, $GREETING"', poststart: 'echo "post: $npm_lifecycle_event"' },
    });
    const r = run(p);
    expect(await r.exited, r.output()).toBe(0);
    const shown = `/bin/sh ${path.join(dir, 'app.sh')}`;
    expect(r.output().split('\n')).toEqual([
      '- the launch stays to supervise: poststart; RBP_RESTART=on-failure',
      'pre: prestart, it\'s "quoted" $HOME `x` \\ *',
      `- starting app: ${shown}`,
      'start 1, it\'s "quoted" $HOME `x` \\ *',
      '! sh (app) exited with status 3',
      '! restarting the app in 20ms (restart 1, RBP_RESTART=on-failure; last status 3)',
      `- starting app: ${shown}`,
      'start 2, it\'s "quoted" $HOME `x` \\ *',
      '! sh (app) exited with status 3',
      '! restarting the app in 40ms (restart 2, RBP_RESTART=on-failure; last status 3)',
      `- starting app: ${shown}`,
      'start 3, it\'s "quoted" $HOME `x` \\ *',
      '- sh (app) exited with status 0',
      'post: poststart',
      '',
    ]);
  });

  it('without a restart policy a crash ends the run with the app’s status, in one line', async () => {
    const r = run(plan(tmpDir('rbp-sh-'), 'exit 3\n', { hooks: { poststart: 'echo post' } }));
    expect(await r.exited).toBe(3);
    expect(r.output()).toContain('! sh (app) exited with status 3; the launch exits with status 3\npost\n');
    expect(r.output()).not.toContain('restarting');
  });

  it('passes SIGTERM on to the app’s whole process group and exits with the app’s status', async () => {
    const dir = tmpDir('rbp-sh-');
    const r = run(plan(dir, "trap 'echo got TERM; exit 7' TERM\nsleep 300 & echo $! > child.pid\necho ready\nwait\n", { restart: 'on-failure' }));
    await r.until('ready');
    const grandchild = Number(fs.readFileSync(path.join(dir, 'child.pid'), 'utf8'));
    expect(await stillRunning([grandchild], 0)).toEqual([grandchild]);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(7);
    expect(r.output()).toContain('- SIGTERM: stopping app\n');
    expect(r.output()).toContain('got TERM');
    // What the app left in its group is gone too.
    expect(await stillRunning([grandchild])).toEqual([]);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const)('%s stops an app that does not handle it: 128+n', async (sig, status) => {
    const r = run(plan(tmpDir('rbp-sh-'), 'echo ready\nexec sleep 300\n', { restart: 'on-failure' }));
    await r.until('ready');
    r.child.kill(sig);
    expect(await r.exited, r.output()).toBe(status);
    expect(r.output()).toContain(`- ${sig}: stopping app`);
    expect(r.output()).not.toContain('restarting');
  });

  it('passes QUIT, USR1 and USR2 on as they are, without stopping', async () => {
    const app = "trap 'echo got USR1' USR1\ntrap 'echo got USR2; exit 0' USR2\necho ready\nwhile :; do sleep 300 & wait; done\n";
    const r = run(plan(tmpDir('rbp-sh-'), app, { restart: 'on-failure' }));
    await r.until('ready');
    r.child.kill('SIGUSR1');
    await r.until('got USR1');
    r.child.kill('SIGUSR2');
    expect(await r.exited).toBe(0);
    expect(r.output()).toContain('- sh (app) exited with status 0');
  });

  it('after RBP_STOP_TIMEOUT the app gets SIGKILL, named: 137', async () => {
    const r = run(plan(tmpDir('rbp-sh-'), "trap '' TERM\necho ready\nsleep 300\n", { restart: 'on-failure', stopMs: 200 }));
    await r.until('ready');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(137);
    expect(r.output()).toContain('! app still running after 200ms: SIGKILL');
  });

  it('a stop signal while waiting to restart ends the run with 128+n, and starts nothing more', async () => {
    const r = run(plan(tmpDir('rbp-sh-'), 'echo started\nexit 1\n', { restart: 'on-failure', firstDelayMs: 20_000 }));
    await r.until('! restarting the app in 20.0s (restart 1, RBP_RESTART=on-failure; last status 1)');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(143);
    expect(r.output()).toContain('- SIGTERM while waiting to restart: stopping');
    expect(r.output().split('started').length - 1).toBe(1);
  });

  it('nothing to supervise: the launch becomes the app itself (the same pid), with the plan’s variables', async () => {
    const r = run(plan(tmpDir('rbp-sh-'), 'echo "pid $$ port $PORT, $GREETING"\n'));
    expect(await r.exited).toBe(0);
    expect(r.output()).toBe(`- exec sh (nothing to supervise)\npid ${r.child.pid} port 8123, it's "quoted" $HOME \`x\` \\ *\n`);
  });

  it('a failed prestart stops the launch with its status; the app never starts', async () => {
    const r = run(plan(tmpDir('rbp-sh-'), 'echo started\n', { hooks: { prestart: 'exit 4' } }));
    expect(await r.exited).toBe(4);
    expect(r.output()).toBe('launch: the prestart script failed (exit 4): exit 4\n');
  });
});

describe('the supervisor, with a request flow', () => {
  const listener = (port: number, extra = '') =>
    `require('node:net').createServer((c) => c.end()).listen(${port}); process.on('SIGTERM', () => process.exit(0)); ${extra}`;

  it('starts the app first, then the middleware once the app listens; the middleware ending stops the app: its status', async () => {
    const dir = tmpDir('rbp-sh-');
    const [pub, appPort] = [await freePort(), await freePort()];
    const mw = middleware(dir, 'custom', pub, listener(pub, 'setTimeout(() => process.exit(3), 300);'));
    const app = `exec ${process.execPath} -e ${shQuote(listener(appPort))}\n`;
    const r = run(plan(dir, app, { flow: { publicPort: pub, appPort, middlewares: [mw] } }));
    expect(await r.exited, r.output()).toBe(94);
    const lines = r.output().split('\n');
    expect(lines[1]).toBe(`- starting app on port ${appPort}: /bin/sh ${path.join(dir, 'app.sh')}`);
    expect(lines[2]).toBe(`- starting custom middleware on port ${pub}: node custom.cjs`);
    expect(lines).toContain(`- request flow ready: :${pub} → custom → app :${appPort}`);
    expect(lines).toContain('! node (custom middleware) exited with status 3; stopping app; the launch exits with status 94');
  });

  it('a member that outlives SIGTERM gets SIGKILL after the stop timeout, named', async () => {
    const dir = tmpDir('rbp-sh-');
    const [pub, appPort] = [await freePort(), await freePort()];
    const stubborn = `require('node:net').createServer((c) => c.end()).listen(${pub}); process.on('SIGTERM', () => {});`;
    const mw = middleware(dir, 'custom', pub, stubborn);
    const r = run(
      plan(dir, `exec ${process.execPath} -e ${shQuote(listener(appPort))}\n`, { stopMs: 300, flow: { publicPort: pub, appPort, middlewares: [mw] } }),
    );
    await r.until('request flow ready');
    r.child.kill('SIGTERM');
    expect(await r.exited, r.output()).toBe(0);
    expect(r.output()).toContain('! custom middleware still running after 300ms: SIGKILL');
  });

  it('an app that never listens: 96 after the listen timeout; the middleware never starts', async () => {
    const dir = tmpDir('rbp-sh-');
    const [pub, appPort] = [await freePort(), await freePort()];
    const mw = middleware(dir, 'custom', pub, listener(pub));
    const r = run(plan(dir, 'exec sleep 300\n', { listenMs: 300, flow: { publicPort: pub, appPort, middlewares: [mw] } }));
    expect(await r.exited, r.output()).toBe(96);
    expect(r.output()).toContain(`! app did not listen on port ${appPort} within 300ms; the launch exits with status 96`);
    expect(r.output()).not.toContain('starting custom middleware');
  });

  it('an app on the public port instead of its own: 96, said as such', async () => {
    const dir = tmpDir('rbp-sh-');
    const [pub, appPort] = [await freePort(), await freePort()];
    const mw = middleware(dir, 'custom', pub, listener(pub));
    const r = run(plan(dir, `exec ${process.execPath} -e ${shQuote(listener(pub))}\n`, { flow: { publicPort: pub, appPort, middlewares: [mw] } }));
    expect(await r.exited, r.output()).toBe(96);
    expect(r.output()).toContain(`! app listens on the public port ${pub}: behind request-flow middleware it must listen on ${appPort} (its PORT variable)`);
  });

  it('a middleware gets no secret of the others; the app none at all', async () => {
    const dir = tmpDir('rbp-sh-');
    const [pub, appPort] = [await freePort(), await freePort()];
    const mw = middleware(
      dir,
      'accessproxy',
      pub,
      `console.log('mw sees', process.env.ACCESSPROXY_CHALLENGE_SECRET, process.env.CC_REDIRECTOR_PROJECT_KEY); ${listener(pub)}`,
    );
    const app = `echo "app sees [\${ACCESSPROXY_CHALLENGE_SECRET-}] [\${CC_REDIRECTOR_PROJECT_KEY-}]"\nexec ${process.execPath} -e ${shQuote(listener(appPort))}\n`;
    const r = run(plan(dir, app, { flow: { publicPort: pub, appPort, middlewares: [mw] } }), {
      ACCESSPROXY_CHALLENGE_SECRET: 'a1',
      CC_REDIRECTOR_PROJECT_KEY: 'r2',
    });
    await r.until('request flow ready');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(r.output()).toContain('app sees [] []');
    expect(r.output()).toContain('mw sees a1 undefined');
  });

  it('the folders the planner made for the launch are removed when it ends', async () => {
    const dir = tmpDir('rbp-sh-');
    const made = path.join(dir, "made by the planner's cache proxy");
    fs.mkdirSync(made);
    const r = run(plan(dir, 'exit 0\n', { restart: 'on-failure' }), {}, [made]);
    expect(await r.exited).toBe(0);
    expect(fs.existsSync(made)).toBe(false);
  });
});
