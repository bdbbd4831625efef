// Warm redeploy benchmark: `rbp deploy fixtures/node-hello --check` again and again on an unchanged
// app with the same OUT and cache (the first run fills the cache and is not counted). Each redeploy
// reuses the build OUT holds (lib/platform/build-reuse.ts). Goal: 300 ms from rbp's start to the first
// 200, which rbp deploy's "- deployed:" line follows at once. The same rounds time `--rebuild` (every
// layer reused), the warm build a changed app gets. Phases come from rbp's `- time:` summary line.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, median, root } from '../bench-lib.mjs';

const rbp = path.join(root, 'dist', 'rbp');
const app = path.join(root, 'fixtures', 'node-hello');
const GOAL_MS = 300;
const TIMEOUT_MS = 300_000;

/** "50ms", "1.1s", "2m05s" (lib/log.ts formatDuration) in ms. */
function ms(text) {
  const m = /^(?:(\d+)m(\d+)s|([\d.]+)(ms|s))$/.exec(text);
  if (!m) return NaN;
  if (m[1]) return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
  return Number(m[3]) * (m[4] === 's' ? 1000 : 1);
}

/** One `rbp deploy --check`; ended by its pid (and its process group) if it overruns. */
function deploy(out, cache, port, extra = []) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(rbp, ['deploy', app, '--out', out, '--cache', cache, '--port', String(port), '--check', ...extra], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let log = '';
    // The measure ends at the first 200: rbp prints the deployed line right after it.
    let firstOk;
    child.stdout.on('data', (d) => {
      log += d;
      if (firstOk === undefined && /- deployed: /.test(log)) firstOk = performance.now() - t0;
    });
    child.stderr.on('data', (d) => (log += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const wall = performance.now() - t0;
      if (code !== 0) return reject(new Error(`rbp deploy exited ${code}:\n${log}`));
      if (!/deployed: http:\/\/127\.0\.0\.1:\d+\/ answers/.test(log)) return reject(new Error(`rbp deploy did not pass its health check:\n${log}`));
      const phases = {};
      const line = /^- time: (.*)$/m.exec(log)?.[1] ?? '';
      for (const part of line.split(', ')) {
        const [name, d] = part.split(' ');
        if (name && d) phases[name] = ms(d);
      }
      resolve({ wall, firstOk, phases, log });
    });
  });
}

export async function run({ rounds = 5 } = {}) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-redeploy-'));
  try {
    const out = path.join(work, 'out');
    const cache = path.join(work, 'cache');
    const port = await freePort();
    const cold = await deploy(out, cache, port);
    const runs = [];
    const rebuilds = [];
    for (let i = 0; i < rounds; i++) {
      const r = await deploy(out, cache, port);
      if (!/- nothing changed since the build of /.test(r.log)) throw new Error(`the redeploy did not reuse the build:\n${r.log}`);
      if ((await freePort(port)) === undefined) throw new Error(`port ${port} still answers after rbp deploy --check`);
      runs.push(r);
      const b = await deploy(out, cache, port, ['--rebuild']);
      if (!/dependencies reused/.test(b.log)) throw new Error(`the rebuild did not reuse the dependencies:\n${b.log}`);
      rebuilds.push(b);
    }
    const phases = (rs) => {
      const names = [...new Set(rs.flatMap((r) => Object.keys(r.phases)))];
      const rest = median(rs.map((r) => r.wall - Object.values(r.phases).reduce((a, b) => a + b, 0)));
      return { ...Object.fromEntries(names.map((n) => [n, median(rs.map((r) => r.phases[n] ?? 0))])), 'rbp start + launch + health check + stop and exit': Math.round(rest) };
    };
    const wall = median(runs.map((r) => r.firstOk));
    return {
      fixture: 'fixtures/node-hello',
      rounds,
      'first deploy, cache filled (ms)': Math.round(cold.wall),
      'warm redeploy to the first 200 (rbp deploy started → its deployed line), median (ms)': wall,
      'the same with the stop and rbp’s exit (--check), median (ms)': median(runs.map((r) => r.wall)),
      goal: `≤ ${GOAL_MS} ms`,
      'goal met': wall <= GOAL_MS,
      'phases, median (ms)': phases(runs),
      'all rounds, to the first 200 (ms)': runs.map((r) => Math.round(r.firstOk)),
      'warm redeploy with --rebuild (every layer reused), to the first 200, median (ms)': median(rebuilds.map((r) => r.firstOk)),
      '--rebuild phases, median (ms)': phases(rebuilds),
      '--rebuild rounds, to the first 200 (ms)': rebuilds.map((r) => Math.round(r.firstOk)),
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
