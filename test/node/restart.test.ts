/**
 * Run time (fixtures/node-crash, a real Node.js server that counts its starts):
 * `rbp run --restart on-failure` starts a crashed app again with back-off and logs each restart; a
 * clean exit ends the run with status 0 and is not logged as a failure; without --restart a crash ends
 * the run; a busy public port is reported before the app starts; variables given to `rbp build --env`
 * but not to `rbp run` are named (never their values).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIXTURES, RBP, envArgs, freePort, rbp, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { cacheFrom, seedCache } from './driver.ts';

let work: string;
let out: string;
beforeAll(async () => {
  work = tmpDir('rbp-node-restart-');
  out = path.join(work, 'out');
  const cache = await cacheFrom(await seedCache(work), path.join(work, 'cache'));
  const r = await rbp([
    'build',
    path.join(FIXTURES, 'node-crash'),
    '--out',
    out,
    '--type',
    'node',
    '--cache',
    cache,
    ...envArgs({ BUILD_SECRET: 'value-never-shown', RUN_ONLY: 'x' }),
  ]);
  if (r.exitCode !== 0) throw new Error(r.all);
}, 300_000);
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 60_000);

/** `rbp run OUT` on a free port; the caller drives it over HTTP. */
function run(extra: string[], env: Record<string, string> = {}) {
  fs.rmSync(path.join(out, 'workspace', 'starts.txt'), { force: true });
  return freePort().then((port) => {
    const child = spawn('node', [RBP, 'run', out, '--port', String(port), ...extra, ...envArgs(env)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer | string) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer | string) => (output += d.toString()));
    let alive = true;
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        alive = false;
        resolve(code);
      }),
    );
    const get = async (p: string) => (await fetch(`http://127.0.0.1:${port}${p}`)).text();
    return { port, child, get, exited, alive: () => alive, output: () => output };
  });
}

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    try {
      const v = await f();
      if (ok(v)) return v;
    } catch {
      // not answering yet
    }
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('--restart on-failure restarts a crashed app with back-off; a clean exit ends the run with 0, not as a failure', async () => {
  const r = await run(['--restart', 'on-failure'], { RBP_RESTART_FIRST_DELAY: '0.2', RUN_ONLY: 'x' });
  try {
    await waitForHttp(r.port, r.alive);
    expect(await r.get('/')).toContain('start 1');
    await r.get('/crash');
    expect(
      await until(
        () => r.get('/'),
        (b) => b.includes('start 2'),
      ),
    ).toContain('start 2');
    await r.get('/crash');
    expect(
      await until(
        () => r.get('/'),
        (b) => b.includes('start 3'),
      ),
    ).toContain('start 3');
    await r.get('/exit');
    expect(await r.exited, r.output()).toBe(0);
  } finally {
    if (r.alive()) r.child.kill('SIGTERM');
  }
  const log = r.output();
  expect(log).toContain('the launch stays to supervise: RBP_RESTART=on-failure');
  expect(log).toMatch(/restarting the app in 200ms \(restart 1, RBP_RESTART=on-failure; last status 1\)/);
  expect(log).toMatch(/restarting the app in 400ms \(restart 2/);
  expect(log).toContain('(app) exited with status 0');
  expect(log).not.toContain('app failed');
}, 120_000);

it('without --restart a crash ends the run with the app status', async () => {
  const r = await run([], { RUN_ONLY: 'x' });
  await waitForHttp(r.port, r.alive);
  await r.get('/crash');
  expect(await r.exited, r.output()).toBe(1);
  expect(r.output()).not.toContain('restarting');
}, 60_000);

it('a busy public port is reported before the app starts', async () => {
  const server = net.createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '0.0.0.0', () => resolve((server.address() as net.AddressInfo).port)));
  try {
    const r = await rbp(['run', out, '--port', String(port), ...envArgs({ RUN_ONLY: 'x' })]);
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toContain(`Port ${port} is already in use`);
    expect(r.all).toContain('(error id: launch/port/busy)');
    expect(r.all).not.toContain('listening, start');
  } finally {
    server.close();
  }
}, 60_000);

it('names the variables given at build and missing at run, never their values', async () => {
  const r = await rbp(['run', out, '--dry-run', '--port', String(await freePort()), ...envArgs({ RUN_ONLY: 'x' })]);
  expect(r.exitCode, r.all).toBe(0);
  expect(r.stderr).toContain('set at build (rbp build --env) but not for this run: BUILD_SECRET');
  expect(r.stderr).not.toContain('RUN_ONLY');
  expect(r.all).not.toContain('value-never-shown');
  expect(() => JSON.parse(r.stdout)).not.toThrow();
}, 60_000);

it('rejects an unknown --restart value', async () => {
  const r = await rbp(['run', out, '--restart', 'always']);
  expect(r.exitCode).not.toBe(0);
  expect(r.all).toContain('(error id: launch/restart/invalid)');
}, 60_000);
