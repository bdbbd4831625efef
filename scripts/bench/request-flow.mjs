// Request-flow benchmarks: latency and throughput of the app directly vs. through the chain with
// only a pass-through custom middleware (fixtures/flow-app/middleware.mjs, a Node HTTP proxy), and
// the launch entrypoint's own memory (RSS) while the app runs, with and without a middleware.
// The app is fixtures/flow-app built with the test buildpack fixtures/flow-buildpack (runLaunch).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, load, median, untilOk } from '../bench-lib.mjs';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rbp = path.join(root, 'dist', 'rbp.js');

async function bundleBuildpack(dir) {
  const src = path.join(root, 'fixtures', 'flow-buildpack');
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(src, 'buildpack.toml'), path.join(dir, 'buildpack.toml'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "commonjs" }\n');
  for (const entry of ['detect', 'build', 'launch']) {
    const outfile = path.join(dir, 'bin', entry);
    await esbuild.build({ entryPoints: [path.join(src, 'src', `${entry}.ts`)], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning', banner: { js: '#!/usr/bin/env node' } });
    fs.chmodSync(outfile, 0o755);
  }
}

function launcherRssMiB(rbpPid) {
  const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(rbpPid)], { encoding: 'utf8' }).trim().split(/\s+/);
  const pid = pids.find((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('/launcher/bin/launch'));
  if (!pid) throw new Error('launch entrypoint process not found');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return kb / 1024;
}

async function withRun(out, env, fn) {
  const port = await freePort();
  const appPort = await freePort();
  const args = ['run', out, '--port', String(port), ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`])];
  const child = spawn('node', [rbp, ...args], { stdio: 'ignore', env: { ...process.env, RBP_APP_PORT: String(appPort) } });
  try {
    await untilOk(port);
    await new Promise((r) => setTimeout(r, 300));
    return await fn({ port, appPort, rbpPid: child.pid });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

export async function run({ ms = 3000, concurrency = 8 } = {}) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-flow-'));
  try {
    const bp = path.join(work, 'bp');
    await bundleBuildpack(bp);
    const out = path.join(work, 'out');
    execFileSync('node', [rbp, 'build', path.join(root, 'fixtures', 'flow-app'), '--out', out, '--buildpack', bp], { stdio: 'ignore' });
    const custom = { CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: 'node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@' };
    const chained = await withRun(out, custom, async ({ port, appPort, rbpPid }) => {
      await load(appPort, { ms: 500, concurrency }); // warm-up
      const direct = await load(appPort, { ms, concurrency });
      const through = await load(port, { ms, concurrency });
      return { direct, through, rss: launcherRssMiB(rbpPid) };
    });
    const alone = await withRun(out, {}, async ({ rbpPid }) => launcherRssMiB(rbpPid));
    // The supervisor's own start: rbp run to the first 200 on the public port, with the pass-through
    // middleware in front (supervisor + middleware + app) and without (the app alone), medians of 5.
    const startup = async (env) => {
      const times = [];
      for (let i = 0; i < 5; i++) {
        const port = await freePort();
        const appPort = await freePort();
        const t0 = performance.now();
        const args = ['run', out, '--port', String(port), ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`])];
        const child = spawn('node', [rbp, ...args], { stdio: 'ignore', env: { ...process.env, RBP_APP_PORT: String(appPort) } });
        times.push(await untilOk(port, t0));
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      return median(times);
    };
    const startWith = await startup(custom);
    const startWithout = await startup({});
    return {
      'direct: requests/s': chained.direct.rps,
      'direct: p50 latency (ms)': chained.direct.p50,
      'direct: p99 latency (ms)': chained.direct.p99,
      'through custom pass-through: requests/s': chained.through.rps,
      'through custom pass-through: p50 latency (ms)': chained.through.p50,
      'through custom pass-through: p99 latency (ms)': chained.through.p99,
      'throughput ratio (through / direct)': chained.through.rps / chained.direct.rps,
      'launcher RSS with one middleware (MiB)': chained.rss,
      'launcher RSS without middleware (MiB)': alone,
      'rbp run to first 200 through one middleware, median (ms)': startWith,
      'rbp run to first 200 without middleware, median (ms)': startWithout,
      'what one middleware adds to the start (ms)': startWith - startWithout,
      [`load`]: `${concurrency} keep-alive clients, ${ms / 1000}s each`,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
