/**
 * What only the real application server shows (RBP_TOOL_FRANKENPHP, see support.ts): each case a
 * real fixture app built with `rbp build --type phpserver` and hit over HTTP through `rbp run` or
 * `rbp deploy` and the launch entrypoint. Worker state kept across requests, a custom Caddyfile
 * (`run --config`), `php` as the server's PHP CLI in a task and for Composer, the deployment health
 * check, and the request flow (Debian's Varnish in front of the server, a cache HIT).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { copyFixture, FIXTURES, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { settledFlag } from '../helpers/settled.ts';
import { get, startRun, waitHttp, waitOutput } from '../request-flow/helpers.ts';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';
import { SERVER, envArgs, itWithServer, makeMirror, operatorEnv } from './support.ts';

let mirror: string;
let work: string;
beforeAll(() => {
  mirror = makeMirror();
  work = tmpDir('rbp-php-serve-');
});
afterAll(() => {
  fs.rmSync(mirror, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

/** `rbp build` of a fixture with the real server as the operator's; `operator` adds to (or empties) RBP_* settings. */
async function build(fixture: string, env: Record<string, string> = {}, operator: Record<string, string> = {}, extra: string[] = []): Promise<string> {
  const out = path.join(work, `${path.basename(fixture)}-${Object.keys(env).join('-') || 'default'}-${Math.random().toString(36).slice(2, 8)}`, 'out');
  const app = path.isAbsolute(fixture) ? fixture : path.join(FIXTURES, fixture);
  const r = await rbp(['build', app, '--out', out, '--type', 'phpserver', '--cache', `${out}.cache`, ...envArgs(env), ...extra], {
    env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: SERVER ?? '', ...operator }),
  });
  expect(r.exitCode, r.all).toBe(0);
  return out;
}

describe('the real application server', () => {
  itWithServer("logs which server, PHP and Caddy it runs, and warns where they are not the contract's", async () => {
    const out = path.join(work, 'versions', 'out');
    const r = await rbp(['build', path.join(FIXTURES, 'php-index-php'), '--out', out, '--type', 'phpserver'], {
      env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: SERVER! }),
    });
    expect(r.exitCode, r.all).toBe(0);
    const m = /using frankenphp (\d+\.\d+\.\d+) from RBP_TOOL_FRANKENPHP=/.exec(r.all);
    expect(m, r.all).not.toBeNull();
    // scripts/tools/frankenphp.sh builds 1.11.1 on PHP 8.4.11 (the contract's 1.9.1 and 8.4.12 are not obtainable here).
    if (m![1] !== '1.9.1') expect(r.all).toContain(`is frankenphp ${m![1]}, not 1.9.1 as the contract asks; using it as is`);
    const php = /PHP (\d+\.\d+\.\d+)/.exec(r.all.slice(r.all.indexOf('using frankenphp')))?.[1];
    if (php && php !== '8.4.12')
      expect(r.all).toContain(`RBP_TOOL_FRANKENPHP runs PHP ${php}, not 8.4.12 as the contract asks for the application server 1.9.1`);
  });

  itWithServer('requests from the first instant (a platform probing at start) are all answered, and the server then stops cleanly', async () => {
    const out = await build('php-index-php');
    const port = await freePort();
    const run = startRun(out, port);
    const exited = settledFlag(run.exited);
    // A probe every 2 ms from the start, each on its own connection and left to wait for its answer:
    // some reach Caddy while FrankenPHP is still making its PHP threads (the window the patch of
    // scripts/tools/patches/frankenphp-1.11.1-request-during-init.patch closes).
    const answers: Promise<number>[] = [];
    let served = false;
    const servedYet = () => served; // read through a call: the probes set it between two reads
    const probe = () =>
      fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(20_000) }).then(
        async (r) => (await r.text(), (served = true), r.status),
        (e: unknown) => ((e as Error).name === 'TimeoutError' ? -1 : 0), // 0: refused (not listening yet), -1: accepted and never answered
      );
    for (let i = 0; i < 20000 && !servedYet() && !exited(); i++) {
      answers.push(probe());
      await new Promise((r) => setTimeout(r, 2));
    }
    const statuses = await Promise.all(answers);
    expect(served, run.output()).toBe(true);
    expect(
      statuses.filter((s) => s === -1),
      'requests accepted and never answered',
    ).toEqual([]);
    expect(
      statuses.filter((s) => s > 0 && s !== 200),
      run.output(),
    ).toEqual([]);
    const code = await run.stop();
    expect(run.output()).not.toContain('still running');
    expect([0, 143], run.output()).toContain(code);
  });

  itWithServer('worker mode: one worker script handles many requests and keeps its state in memory', async () => {
    const out = await build('php-worker', { CC_WEBROOT: 'public', CC_PHPSERVER_WORKER: '/public/worker.php' });
    const port = await freePort();
    const run = startRun(out, port);
    try {
      // FrankenPHP hands the worker the requests that resolve to its script (here /worker.php); other
      // paths run their own scripts classically (/ is public/index.php).
      const first = await waitHttp(port, run, '/worker.php', 60_000);
      const bodies = [await first.text()];
      // FrankenPHP starts 2 workers per CPU: with one request more than that, some worker has
      // answered twice, and only a worker that kept its counter in memory says "request 2".
      for (let i = 0; i < 2 * os.cpus().length && !bodies.some((b) => /request [2-9]/.test(b)); i++) bodies.push(await (await get(port, '/worker.php')).text());
      for (const b of bodies) expect(b).toMatch(/^worker booted at \S+, request \d+$/m);
      const counted = bodies.map((b) => /booted at (\S+), request (\d+)/.exec(b)!).filter((m) => Number(m[2]) >= 2);
      expect(counted.length, bodies.join('')).toBeGreaterThan(0);
      // The same worker (same boot time) answered before with the previous count.
      const [, booted, n] = counted[0]!;
      expect(bodies.join('')).toContain(`worker booted at ${booted}, request ${Number(n) - 1}`);
      expect(await (await get(port, '/')).text()).toBe('hello from public/index.php\n');
    } finally {
      // Stopped whatever happened; its exit status is not what these tests are about.
      await run.stop();
    }
  });

  itWithServer('a custom Caddyfile: CC_RUN_COMMAND="frankenphp run --config Caddyfile" serves the app with it', async () => {
    const out = await build('php-run-command', { CC_WEBROOT: 'public' });
    const port = await freePort();
    // The fixture's Caddyfile listens on {$CC_PHPSERVER_PORT:8080}.
    const run = startRun(out, port, { CC_RUN_COMMAND: 'frankenphp run --config Caddyfile', CC_PHPSERVER_PORT: String(port) });
    try {
      const r = await waitHttp(port, run, '/', 60_000);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe('hello from a CC_RUN_COMMAND server\n');
    } finally {
      // Stopped whatever happened; its exit status is not what these tests are about.
      await run.stop();
    }
  });

  itWithServer("`php` in a task is the PHP CLI of the server's build (no RBP_TOOL_PHP), with php.ini at the root", async () => {
    const out = await build('php-ini', {}, { RBP_TOOL_PHP: '' }, ['--task', 'php bin/show-ini.php']);
    const r = await rbp(['run', out], { env: { RBP_TOOL_PHP: '' } });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('memory_limit=77M');
    expect(r.all).toContain('date.timezone=Pacific/Auckland');
  });

  itWithServer("Composer runs on the PHP CLI of the server's build when no RBP_TOOL_PHP is given", async () => {
    const out = await build('php-composer', {}, { RBP_TOOL_PHP: '' });
    const port = await freePort();
    const run = startRun(out, port);
    try {
      const r = await waitHttp(port, run, '/', 60_000);
      expect(await r.text()).toContain('dev dependencies: absent');
    } finally {
      // Stopped whatever happened; its exit status is not what these tests are about.
      await run.stop();
    }
  });

  itWithServer('rbp deploy: the health check passes through the real server, and fails on a 404', async () => {
    const deploy = async (fixture: string, env: Record<string, string>) => {
      const out = path.join(work, `deploy-${fixture}-${Object.keys(env).length}`, 'out');
      return rbp(
        ['deploy', path.join(FIXTURES, fixture), '--type', 'phpserver', '--out', out, '--port', String(await freePort()), '--check', ...envArgs(env)],
        {
          env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: SERVER! }),
        },
      );
    };
    const ok = await deploy('php-index-php', { CC_HEALTH_CHECK_PATH: '/index.php' });
    expect(ok.exitCode, ok.all).toBe(0);
    expect(ok.all).toContain('Response from GET /index.php is 200');
    // index.html only: php-server has no index.php to fall back on, so an unknown path is a 404.
    const bad = await deploy('php-index-html', { CC_HEALTH_CHECK_PATH: '/', CC_HEALTH_CHECK_PATH_1: '/missing' });
    expect(bad.exitCode, bad.all).toBe(3);
    expect(bad.all).toContain('Response from GET / is 200');
    expect(bad.all).toContain('Response from GET /missing is 404');
    expect(bad.all).toContain('- GET /missing returned 404.');
  });
});

const varnishd = varnishdRequirement('the phpserver request-flow test');

describeNeeding(varnishd, 'the real application server behind the request flow', () => {
  itWithServer('Varnish in front of the PHP server: the second request is a cache HIT', async () => {
    // The cache configuration is the app's own file (a path outside the app is refused).
    const app = copyFixture('php-index-php');
    fs.copyFileSync(path.join(FIXTURES, 'flow-app-cache', '.rbp', 'cache.vcl'), path.join(app, 'cache.vcl'));
    const flow = { CC_REQUEST_FLOW: 'cache', CC_CACHE_FILE: 'cache.vcl' };
    const out = await build(app, flow);
    const [port, appPort] = [await freePort(), await freePort()];
    const run = startRun(out, port, flow, { RBP_APP_PORT: String(appPort) });
    try {
      const r1 = await waitHttp(port, run, '/', 60_000);
      const body = await r1.text();
      expect(body).toMatch(/^hello from index\.php on PHP \d+\.\d+\.\d+$/m);
      const r2 = await get(port);
      expect(await r2.text()).toBe(body);
      expect([r1, r2].map((r) => r.headers.get('x-cache'))).toEqual(['MISS', 'HIT']);
      // The PHP server itself listens on the app port behind the cache.
      expect((await get(appPort)).headers.get('x-cache')).toBeNull();
      await waitOutput(run, `request flow ready: :${port} → cache → app :${appPort}`);
    } finally {
      // Stopped whatever happened; its exit status is not what these tests are about.
      await run.stop();
    }
  });
});
