/**
 * The key-value add-on from PHP (contract, "Key-value add-on use", limit 4): Debian's redis-server,
 * started here with a password on port 6378 (the only port the contract allows) of a loopback address
 * of its own (127.x.y.z, so the port is free whatever else runs), ended by its pid. A PHP page on the
 * real application server stores a key with a TTL through the `redis` extension with the add-on's
 * host, port and token (KV_HOST, KV_PORT, KV_TOKEN), and reads it back; redis-cli then finds the key,
 * with its TTL, in that server. The Laravel-style fixture uses it as its cache store the same way.
 * The refusals (another port, a unix socket) are fixtures/php-kv's build cases.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, expect } from 'vitest';
import { FIXTURES, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { describeNeeding, requirement } from '../helpers/requirement.ts';
import { get, startRun, waitHttp } from '../request-flow/helpers.ts';
import { SERVER, envArgs, itWithServer, makeMirror, operatorEnv } from './support.ts';

const REDIS = ['/usr/bin/redis-server', '/usr/sbin/redis-server'].find((f) => fs.existsSync(f));
const redisServer = requirement(REDIS, { what: 'redis-server', how: 'apt-get install redis-server', who: 'kv-addon.test.ts' });

let mirror: string;
let work: string;
let redis: ResultPromise | undefined;
const token = crypto.randomBytes(16).toString('hex');
let host = '';

/** redis-cli against the test's server (the token through REDISCLI_AUTH, never on a command line). */
const cli = (...args: string[]) => execa('redis-cli', ['-h', host, '-p', '6378', ...args], { env: { REDISCLI_AUTH: token }, reject: false });

beforeAll(async () => {
  mirror = makeMirror();
  work = tmpDir('rbp-php-kv-');
  if (!REDIS || !SERVER) return;
  // A loopback address of this run's own: 127.<slot band>.<random>.<random>; another one if taken.
  const slot = Number(process.env.RBP_TEST_PORT_SLOT ?? 0);
  for (let attempt = 0; attempt < 5 && !redis; attempt++) {
    host = `127.${100 + (slot % 100)}.${crypto.randomInt(1, 255)}.${crypto.randomInt(1, 255)}`;
    const p = execa(
      REDIS,
      [
        '--bind',
        host,
        '--port',
        '6378',
        '--requirepass',
        token,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        work,
        '--daemonize',
        'no',
        '--logfile',
        path.join(work, 'redis.log'),
      ],
      { reject: false, stdin: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if ((await cli('ping')).stdout === 'PONG') {
        redis = p;
        break;
      }
      if (p.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!redis) p.kill('SIGTERM');
  }
  if (!redis) throw new Error(`redis-server did not start on a loopback address:\n${fs.readFileSync(path.join(work, 'redis.log'), 'utf8')}`);
}, 60_000);

afterAll(async () => {
  // Ended by its pid: the process this test started.
  if (redis?.pid) {
    redis.kill('SIGTERM');
    await redis;
  }
  fs.rmSync(mirror, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

async function build(fixture: string, env: Record<string, string>): Promise<string> {
  const out = path.join(work, fixture, 'out');
  const r = await rbp(['build', path.join(FIXTURES, fixture), '--out', out, '--type', 'phpserver', '--cache', `${out}.cache`, ...envArgs(env)], {
    env: operatorEnv(mirror, { RBP_TOOL_FRANKENPHP: SERVER! }),
  });
  expect(r.exitCode, r.all).toBe(0);
  expect(r.all).not.toContain(token);
  return out;
}

describeNeeding(redisServer, 'the key-value add-on through the redis extension', () => {
  itWithServer(
    "a PHP page stores and reads a key with a TTL, with the add-on's host, port 6378 and token",
    async () => {
      expect(REDIS, 'redis-server (apt-get install redis-server)').toBeTruthy();
      const kv = { KV_HOST: host, KV_PORT: '6378', KV_TOKEN: token };
      const out = await build('php-kv', kv);
      const port = await freePort();
      const run = startRun(out, port, kv);
      try {
        const r = await waitHttp(port, run, '/?key=first', 60_000);
        const body = await r.text();
        expect(r.status, body).toBe(200);
        expect(body).toMatch(/^rbp:first = stored at \S+ \(ttl 1[12]\d s\)$/m);
        // The key is in the test's redis, with its TTL.
        expect((await cli('get', 'rbp:first')).stdout).toMatch(/^stored at /);
        expect(Number((await cli('ttl', 'rbp:first')).stdout)).toBeGreaterThan(100);
        expect(run.output()).not.toContain(token);
      } finally {
        await run.stop();
      }
    },
    300_000,
  );

  itWithServer(
    'the Laravel-style app caches in the add-on (CACHE_STORE=redis, KV_* as the .env fallback)',
    async () => {
      const kv = { KV_HOST: host, KV_PORT: '6378', KV_TOKEN: token };
      const out = await build('php-laravel', { CC_WEBROOT: 'public', ...kv });
      const port = await freePort();
      const run = startRun(out, port, { CC_WEBROOT: 'public', CACHE_STORE: 'redis', ...kv });
      try {
        const first = await (await waitHttp(port, run, '/', 60_000)).text();
        expect(first).toContain('cache: redis, home hits 1, ttl 300 s');
        expect(await (await get(port, '/')).text()).toContain('cache: redis, home hits 2');
        expect((await cli('get', 'home:hits')).stdout).toBe('2');
      } finally {
        await run.stop();
      }
    },
    300_000,
  );
});
