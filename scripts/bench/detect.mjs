// Detect benchmark: `rbp detect` of an app only the last buildpack of the automatic order accepts
// (an index.php), so all three detects run. Goal: ≤ 2× one bare Node.js start (`node -e 0`), both
// without NODE_EXTRA_CA_CERTS, measured in the same rounds. Also one buildpack's bin/detect alone.
// Rounds interleave the commands, so a busy moment of the machine hits all of them alike.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, root } from '../bench-lib.mjs';

const rbp = path.join(root, 'dist', 'rbp.js');
const GOAL_RATIO = 2;

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

    const [bare, detect, bin, version] = [[], [], [], []];
    const cpu = { bare: [], detect: [] };
    // Node.js parses NODE_EXTRA_CA_CERTS at every start, which would make the ratio look better than it is.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_EXTRA_CA_CERTS'));
    for (let i = 0; i < rounds + 1; i++) {
      const b = time(process.execPath, ['-e', '0'], { env });
      const d = time(process.execPath, [rbp, 'detect', app], { env: { ...env, NO_COLOR: '1' } });
      if (d.r.status !== 0 || !/group: rbp\/phpserver/.test(d.r.stdout)) throw new Error(`rbp detect did not pick phpserver (${d.r.status}):\n${d.r.stdout}${d.r.stderr}`);
      const s = time(path.join(bp, 'bin', 'detect'), [platform, binEnv.CNB_BUILD_PLAN_PATH], { cwd: app, env: binEnv });
      if (s.r.status !== 0) throw new Error(`phpserver bin/detect failed (${s.r.status}):\n${s.r.stdout}${s.r.stderr}`);
      // The floor of any rbp command: Node.js's start and rbp's own load, nothing run.
      const v = time(process.execPath, [rbp, '--version'], { env });
      if (i === 0) continue; // the first round warms the page cache
      version.push(v.ms);
      bare.push(b.ms);
      detect.push(d.ms);
      cpu.bare.push(b.cpu);
      cpu.detect.push(d.cpu);
      bin.push(s.ms);
    }
    const size = (n) => fs.statSync(path.join(root, 'dist', 'buildpacks', n, 'lib', 'detect.bundle.cjs')).size;
    return {
      rounds,
      'node -e 0, median (ms)': median(bare),
      'rbp detect, all three detects, median (ms)': median(detect),
      [`rbp detect / node -e 0 (goal ≤ ${GOAL_RATIO})`]: median(detect) / median(bare),
      'goal met': median(detect) / median(bare) <= GOAL_RATIO,
      // /proc counts CPU time in 10 ms ticks: a mean over the rounds, not a median.
      'CPU time (user + sys), mean (ms)': { 'node -e 0': mean(cpu.bare), 'rbp detect': mean(cpu.detect) },
      'phpserver bin/detect alone, median (ms)': median(bin),
      "rbp --version (Node.js start and rbp's load, nothing run: the floor of rbp detect), median (ms)": median(version),
      'detect bundles (KiB)': Object.fromEntries(['node', 'static', 'phpserver'].map((n) => [n, Math.round(size(n) / 102.4) / 10])),
      'all rounds (ms)': { bare: bare.map(Math.round), detect: detect.map(Math.round), bin: bin.map(Math.round) },
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
