// Detect benchmark: `rbp detect` of an app only the last buildpack of the automatic order accepts
// (an index.php: node and static decline, phpserver passes), so all three detects run, as `rbp build`
// and a lifecycle run them. Compared, in the same rounds, with one bare Node.js start (`node -e 0`):
// the goal (issue 14) is ≤ 250 ms and ≤ 2× that start; issue 27's, ≤ 1.5× without NODE_EXTRA_CA_CERTS
// (Node.js parses the file at its start, ~45 ms, in both commands) and ≤ 1.3× with it. Also one buildpack's bin/detect (its POSIX sh
// bootstrap, then Node.js on lib/detect.cjs): what the reference lifecycle pays per buildpack.
// Rounds interleave the commands, so a busy moment of the machine hits all of them alike.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../bench-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rbp = path.join(root, 'dist', 'rbp.js');
const GOAL_MS = 250;
const GOAL_RATIO = 2;
const GOAL_RATIO_27 = { withCa: 1.3, withoutCa: 1.5 };

/** User + system CPU time of the children waited for so far (ms), from /proc (Linux); undefined elsewhere. */
function childrenCpuMs() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // cutime + cstime, in USER_HZ (100)
  } catch {
    return undefined;
  }
}

/** Wall time, and CPU time (less disturbed by other work on the machine: it counts only this command's). */
function time(cmd, args, opts = {}) {
  const c0 = childrenCpuMs();
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  const ms = performance.now() - t0;
  const c1 = childrenCpuMs();
  return { ms, cpu: c0 === undefined || c1 === undefined ? undefined : c1 - c0, r };
}

const mean = (xs) => (xs.length && xs.every((x) => x !== undefined) ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

export async function run({ rounds = 31 } = {}) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-detect-'));
  try {
    const app = path.join(work, 'php-app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'index.php'), '<?php echo "hi";\n');
    const platform = path.join(work, 'platform');
    fs.mkdirSync(platform);
    const bp = path.join(root, 'dist', 'buildpacks', 'phpserver');
    const binEnv = { PATH: process.env.PATH, CNB_PLATFORM_DIR: platform, CNB_BUILDPACK_DIR: bp, CNB_BUILD_PLAN_PATH: path.join(work, 'plan.toml') };

    const bare = [];
    const detect = [];
    const bin = [];
    const version = [];
    const cpu = { bare: [], detect: [] };
    // Node.js reads NODE_EXTRA_CA_CERTS at every start (~40 ms of CPU for a system bundle): when it is
    // set, both commands are also timed without it, since it makes the ratio look better than it is.
    const noCa = process.env.NODE_EXTRA_CA_CERTS ? { env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_EXTRA_CA_CERTS')), bare: [], detect: [] } : undefined;
    for (let i = 0; i < rounds + 1; i++) {
      const b = time(process.execPath, ['-e', '0']);
      const d = time(process.execPath, [rbp, 'detect', app], { env: { ...process.env, NO_COLOR: '1' } });
      if (d.r.status !== 0 || !/group: rbp\/phpserver/.test(d.r.stdout)) throw new Error(`rbp detect did not pick phpserver (${d.r.status}):\n${d.r.stdout}${d.r.stderr}`);
      const s = time(path.join(bp, 'bin', 'detect'), [platform, binEnv.CNB_BUILD_PLAN_PATH], { cwd: app, env: binEnv });
      if (s.r.status !== 0) throw new Error(`phpserver bin/detect failed (${s.r.status}):\n${s.r.stdout}${s.r.stderr}`);
      const nb = noCa && time(process.execPath, ['-e', '0'], { env: noCa.env });
      const nd = noCa && time(process.execPath, [rbp, 'detect', app], { env: { ...noCa.env, NO_COLOR: '1' } });
      // The floor of any rbp command: Node.js's start and rbp's own load, nothing run.
      const v = time(process.execPath, [rbp, '--version'], noCa ? { env: noCa.env } : {});
      if (i === 0) continue; // the first round warms the page cache
      if (noCa) {
        noCa.bare.push(nb.ms);
        noCa.detect.push(nd.ms);
      }
      version.push(v.ms);
      bare.push(b.ms);
      detect.push(d.ms);
      cpu.bare.push(b.cpu);
      cpu.detect.push(d.cpu);
      bin.push(s.ms);
    }
    const size = (n) => fs.statSync(path.join(root, 'dist', 'buildpacks', n, 'lib', 'detect.bundle.cjs')).size;
    const r = {
      rounds,
      'node -e 0, median (ms)': median(bare),
      'rbp detect, all three detects, median (ms)': median(detect),
      'rbp detect / node -e 0': median(detect) / median(bare),
      // /proc counts CPU time in 10 ms ticks: a mean over the rounds, not a median.
      'CPU time (user + sys), mean (ms)': { 'node -e 0': mean(cpu.bare), 'rbp detect': mean(cpu.detect) },
      'one bin/detect (sh bootstrap + Node.js), phpserver, median (ms)': median(bin),
      ...(noCa
        ? {
            'without NODE_EXTRA_CA_CERTS: node -e 0, rbp detect, median (ms)': { 'node -e 0': median(noCa.bare), 'rbp detect': median(noCa.detect) },
            'without NODE_EXTRA_CA_CERTS: rbp detect / node -e 0': median(noCa.detect) / median(noCa.bare),
            'without NODE_EXTRA_CA_CERTS: goal met': median(noCa.detect) <= GOAL_MS && median(noCa.detect) / median(noCa.bare) <= GOAL_RATIO,
            [`without NODE_EXTRA_CA_CERTS: issue 27's goal (≤ ${GOAL_RATIO_27.withoutCa}×) met`]: median(noCa.detect) / median(noCa.bare) <= GOAL_RATIO_27.withoutCa,
          }
        : {}),
      [`rbp --version${noCa ? ' without NODE_EXTRA_CA_CERTS' : ''} (Node.js start and rbp's load, nothing run: the floor of rbp detect), median (ms) and / node -e 0`]: {
        ms: median(version),
        ratio: median(version) / median(noCa ? noCa.bare : bare),
      },
      goal: `≤ ${GOAL_MS} ms and ≤ ${GOAL_RATIO}× node -e 0`,
      'goal met': median(detect) <= GOAL_MS && median(detect) / median(bare) <= GOAL_RATIO,
      [`issue 27's goal (≤ ${noCa ? GOAL_RATIO_27.withCa : GOAL_RATIO_27.withoutCa}× ${noCa ? 'with' : 'without'} NODE_EXTRA_CA_CERTS) met`]: median(detect) / median(bare) <= (noCa ? GOAL_RATIO_27.withCa : GOAL_RATIO_27.withoutCa),
      'detect bundles (KiB)': Object.fromEntries(['node', 'static', 'phpserver'].map((n) => [n, Math.round(size(n) / 102.4) / 10])),
      'all rounds (ms)': { bare: bare.map(Math.round), detect: detect.map(Math.round), bin: bin.map(Math.round) },
    };
    return r;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
