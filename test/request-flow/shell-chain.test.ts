/**
 * The request flow supervised by the launch's shell form (lib/launch/shell-chain.ts, issue 27:
 * memory beside the app). A real node build (its Node.js 24 has process.execve), started as a user
 * does through the package's bin (dist/rbp run OUT), with a real HTTP proxy as the custom middleware
 * (fixtures/flow-app/middleware.mjs): the Node.js launcher plans the chain, then becomes a POSIX sh
 * that starts the app and the middleware on their ports, forwards the public port's requests through
 * them, stops or restarts the chain as the Node.js supervisor does, and leaves no Node.js of ours in
 * the process tree.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listening } from '../../lib/launch/request-flow/allocate.ts';
import { envArgs, FIXTURES, freePort, rbp, ROOT, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';

const BIN = path.join(ROOT, 'dist', 'rbp');
const MW = (extra = '') => `node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@${extra}`;

let work: string;
let out: string;

beforeAll(async () => {
  work = tmpDir('rbp-shell-chain-');
  const app = path.join(work, 'app');
  fs.cpSync(path.join(FIXTURES, 'node-hello'), app, { recursive: true });
  fs.copyFileSync(path.join(FIXTURES, 'flow-app', 'middleware.mjs'), path.join(app, 'middleware.mjs'));
  // A cache configuration that only CC_CACHE_FILE activates, for the Varnish case.
  fs.copyFileSync(path.join(FIXTURES, 'flow-app-cache', '.rbp', 'cache.vcl'), path.join(app, 'cache.vcl'));
  out = path.join(work, 'out');
  const r = await rbp(['build', app, '--out', out, '--type', 'node', '--cache', path.join(work, 'cache')]);
  if (r.exitCode !== 0) throw new Error(`build failed:\n${r.all}`);
}, 300_000);
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 60_000);

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}

/** `dist/rbp run OUT --port PORT` with the custom middleware, the app on appPort (RBP_APP_PORT). */
function start(port: number, appPort: number, env: Record<string, string>, operator: Record<string, string> = {}): Run {
  const args = ['run', out, '--port', String(port), ...envArgs({ CC_REQUEST_FLOW: 'custom', ...env })];
  const child = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', RBP_APP_PORT: String(appPort), ...operator } });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | string>((r) => child.once('close', (code, signal) => r(code ?? signal ?? -1)));
  return { child, output: () => text, exited };
}

async function until(what: string, run: Run, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`${what} never happened:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const read = (pid: number, file: string): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
};

/** Every process under `root` (itself included): pid, its executable, its argv. */
function tree(root: number): { pid: number; exe: string; argv: string[] }[] {
  const children = new Map<number, number[]>();
  for (const e of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    const stat = read(Number(e), 'stat');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
  }
  const pids: number[] = [];
  const walk = (p: number) => {
    pids.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(root);
  return pids.map((pid) => {
    let exe = '';
    try {
      exe = fs.readlinkSync(`/proc/${pid}/exe`);
    } catch {
      // gone meanwhile
    }
    return { pid, exe, argv: read(pid, 'cmdline').split('\0').slice(0, -1) };
  });
}

describe('the shell form runs a chain of process middlewares (issue 27)', () => {
  it('starts the app and the middleware on their ports, forwards through them, keeps no Node.js of ours, and SIGTERM stops both', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = start(port, appPort, { CC_REQUEST_FLOW_CUSTOM: MW() });
    try {
      await until('request flow ready', run, () => run.output().includes('- request flow ready'));
      const r = await fetch(`http://127.0.0.1:${port}/`);
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/^hello from node v24\./);
      // The middleware saw the request on its way to the app.
      expect(r.headers.get('x-custom-count')).toBe('1');
      expect(r.headers.get('x-flow-via')).toBe('custom');
      // The app itself listens on its own port, the middleware on the public one.
      expect((await fetch(`http://127.0.0.1:${appPort}/`)).headers.get('x-flow-via')).toBeNull();
      const log = run.output();
      expect(log).toContain('(as /bin/sh: no Node.js beside the app)');
      expect(log).toContain(`- starting app on port ${appPort}: /bin/sh -c exec node server.js`);
      expect(log).toContain(`- starting custom middleware on port ${port}: node middleware.mjs custom ${port} ${appPort}`);
      expect(log).toContain(`- request flow ready: :${port} → custom → app :${appPort}`);

      // The launch process (rbp's own pid, handed over) is a sh; the only Node.js processes are the
      // app and the middleware.
      const procs = tree(run.child.pid!);
      expect(procs[0]!.argv.at(-1)).toBe('rbp-launch');
      expect(path.basename(procs[0]!.exe)).not.toMatch(/^node/);
      const nodes = procs.filter((p) => path.basename(p.exe).startsWith('node'));
      expect(nodes.map((p) => p.argv.join(' ')).sort()).toEqual([`node middleware.mjs custom ${port} ${appPort}`, 'node server.js']);
    } finally {
      run.child.kill('SIGTERM');
    }
    // The app's own status: it closes its server on SIGTERM and exits 0.
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('- SIGTERM: stopping app, custom middleware');
    expect(await listening(port)).toBe(false);
    expect(await listening(appPort)).toBe(false);
  });

  it('a crashing middleware stops the app; the status says which one failed (94)', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = start(port, appPort, { CC_REQUEST_FLOW_CUSTOM: MW(' --crash-after 1000') });
    expect(await run.exited).toBe(94);
    const log = run.output();
    expect(log).toContain('- request flow ready');
    expect(log).toContain(`! custom middleware (node middleware.mjs custom ${port} ${appPort} --crash-after 1000) exited with status 3; stopping the others`);
    expect(log).toContain('! launch exits with status 94: custom middleware failed');
    expect(await listening(appPort)).toBe(false);
  });

  it('with RBP_RESTART=on-failure the chain starts again after a crash, and SIGTERM while it runs stops it', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = start(port, appPort, { CC_REQUEST_FLOW_CUSTOM: MW(' --crash-after 800') }, { RBP_RESTART: 'on-failure', RBP_RESTART_FIRST_DELAY: '0.2' });
    try {
      await until('a second start of the chain', run, () => run.output().split('- request flow ready').length > 2);
      expect(run.output()).toContain('! restarting the app in 200ms (restart 1, RBP_RESTART=on-failure; last status 94)');
      expect(run.output().match(/- starting app on port/g)!.length).toBeGreaterThanOrEqual(2);
    } finally {
      run.child.kill('SIGTERM');
    }
    // Stopped during a run of the chain (the app's status) or while waiting to restart (128 + 15).
    expect([0, 143]).toContain(await run.exited);
    expect(await listening(appPort)).toBe(false);
  });

  it('the dry run says the shell form supervises, and what it would run', async () => {
    const port = await freePort();
    const r = await rbp(['run', out, '--dry-run', '--port', String(port), ...envArgs({ CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: MW() })]);
    expect(r.exitCode, r.all).toBe(0);
    const launch = JSON.parse(r.stdout).launch;
    expect(launch.supervisor).toBe('shell');
    expect(launch.processes.map((p: { name: string; listen: number }) => [p.name, p.listen])).toEqual([
      ['custom', port],
      ['app', 9000],
    ]);
  });
});

describeNeeding(varnishdRequirement('the shell form cache proxy test'), 'the shell form runs the cache proxy (Varnish)', () => {
  it('writes its VCL folder, chains cache → custom → app, and removes the folder once stopped', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const run = start(port, appPort, { CC_REQUEST_FLOW: 'cache,custom', CC_CACHE_FILE: 'cache.vcl', CC_REQUEST_FLOW_CUSTOM: MW() });
    let folder: string | undefined;
    try {
      await until('request flow ready', run, () => run.output().includes('- request flow ready'));
      const log = run.output();
      expect(log).toContain('(as /bin/sh: no Node.js beside the app)');
      expect(log).toMatch(new RegExp(`- request flow ready: :${port} → cache → custom → app :${appPort}`));
      const first = await fetch(`http://127.0.0.1:${port}/`);
      expect(first.headers.get('x-cache')).toBe('MISS');
      expect(first.headers.get('x-flow-via')).toBe('custom');
      expect((await fetch(`http://127.0.0.1:${port}/`)).headers.get('x-cache')).toBe('HIT');
      folder = /-n (\S+)\/state/.exec(log)![1]!;
      expect(fs.readFileSync(path.join(folder, 'request-flow.vcl'), 'utf8')).toContain('.port = "');
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(folder && fs.existsSync(folder)).toBe(false);
  });
});
