// The warm rebuild of fixtures/node-bench (~260 pure-JS packages), nothing changed, against its cold
// build (empty cache); the cold build against the raw commands a user would type (the Node.js and npm
// tarballs unpacked, then `npm ci` with an empty npm cache). Goal: a warm rebuild within 0.05 × the
// cold build. Rounds alternate raw and rbp; medians count.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { median, root, sh } from '../bench-lib.mjs';

// The command a user types: dist/rbp, the package's bin.
const rbp = path.join(root, 'dist', 'rbp');
const fixture = path.join(root, 'fixtures', 'node-bench');
const NODE = '24.15.0';
const NPM = '11.12.1';
const arch = os.arch() === 'arm64' ? 'arm64' : 'x64';

function rbpBuild(out) {
  const r = sh(rbp, ['build', fixture, '--out', out, '--type', 'node'], { env: { ...process.env, NO_COLOR: '1' } });
  if (!fs.existsSync(path.join(out, 'workspace', 'node_modules', 'express', 'package.json'))) throw new Error('rbp build left no node_modules/express');
  return r;
}

/** What a user types: curl | tar for Node.js and npm, then npm ci, everything from scratch. */
function raw(dir) {
  const app = path.join(dir, 'app');
  fs.cpSync(fixture, app, { recursive: true });
  const node = path.join(dir, 'node');
  const npm = path.join(dir, 'npm');
  fs.mkdirSync(node);
  fs.mkdirSync(npm);
  const userconfig = path.join(dir, 'npmrc');
  fs.writeFileSync(userconfig, '');
  const t0 = performance.now();
  sh('sh', ['-c', `curl -sSfL https://registry.npmjs.org/node-linux-${arch}/-/node-linux-${arch}-${NODE}.tgz | tar -xzf - -C "${node}" --strip-components=1`]);
  sh('sh', ['-c', `curl -sSfL https://registry.npmjs.org/npm/-/npm-${NPM}.tgz | tar -xzf - -C "${npm}" --strip-components=1`]);
  const env = { ...process.env, PATH: `${path.join(node, 'bin')}:${process.env.PATH}`, NODE_ENV: 'production', npm_config_userconfig: userconfig, npm_config_cache: path.join(dir, 'npm-cache') };
  sh(path.join(node, 'bin', 'node'), [path.join(npm, 'bin', 'npm-cli.js'), 'ci', '--no-audit', '--no-fund'], { cwd: app, env });
  const ms = performance.now() - t0;
  if (!fs.existsSync(path.join(app, 'node_modules', 'express', 'package.json'))) throw new Error('npm ci left no node_modules/express');
  return ms;
}

/** The phase timings rbp.toml recorded for the build just made. */
const phases = (out) => parse(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8')).timings ?? {};

export async function run({ rounds = 5 } = {}) {
  const lock = JSON.parse(fs.readFileSync(path.join(fixture, 'package-lock.json'), 'utf8'));
  const packages = Object.keys(lock.packages).filter((k) => k !== '').length;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-node-'));
  const [rawMs, coldMs, warmMs, warmPhases, againMs, againPhases] = [[], [], [], [], [], []];
  const GOAL = 0.05;
  try {
    for (let i = 0; i < rounds; i++) {
      const dir = path.join(work, `round-${i}`);
      fs.mkdirSync(dir);
      const [first, second] = i % 2 === 0 ? ['raw', 'rbp'] : ['rbp', 'raw'];
      for (const which of [first, second]) {
        if (which === 'raw') {
          rawMs.push(raw(path.join(dir, 'raw')));
          continue;
        }
        const out = path.join(dir, 'out');
        coldMs.push(rbpBuild(out).ms);
        const warm = rbpBuild(out);
        if (!/dependencies reused/.test(warm.stdout)) throw new Error(`the warm rebuild did not reuse the dependencies:\n${warm.stdout}`);
        warmMs.push(warm.ms);
        warmPhases.push(phases(out));
        // The first rebuild takes the cache the cold build made; the second, the one the first left.
        const again = rbpBuild(out);
        if (!/dependencies reused/.test(again.stdout)) throw new Error(`the second warm rebuild did not reuse the dependencies:\n${again.stdout}`);
        againMs.push(again.ms);
        againPhases.push(phases(out));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const cold = median(coldMs);
  const rawMed = median(rawMs);
  const warm = median(warmMs);
  const nodeStart = median(Array.from({ length: 5 }, () => sh('node', ['-e', '0']).ms));
  const again = median(againMs);
  const phase = (k, ps = warmPhases) => median(ps.map((p) => p[k] ?? 0));
  return {
    fixture: `fixtures/node-bench (${packages} packages in package-lock.json)`,
    rounds,
    'raw curl|tar node+npm, npm ci (s, median)': rawMed / 1000,
    'rbp cold build, empty cache (s, median)': cold / 1000,
    'rbp warm rebuild, nothing changed (s, median)': warm / 1000,
    'cold build / raw commands': cold / rawMed,
    [`warm rebuild / cold build (goal ≤ ${GOAL})`]: warm / cold,
    'warm rebuild phases, median (ms)': Object.fromEntries(['detect', 'restore', 'build', 'export'].map((k) => [k, Math.round(phase(k))])),
    'second warm rebuild, nothing changed (s, median)': again / 1000,
    [`second warm rebuild / cold build (goal ≤ ${GOAL})`]: again / cold,
    'goal met': Math.max(warm, again) / cold <= GOAL,
    'second warm rebuild phases, median (ms)': Object.fromEntries(['detect', 'restore', 'build', 'export'].map((k) => [k, Math.round(phase(k, againPhases))])),
    'bare `node -e 0` (ms, median; a warm rebuild starts Node.js twice: rbp, then the buildpack’s build)': nodeStart,
    'all rounds (ms)': { raw: rawMs.map(Math.round), cold: coldMs.map(Math.round), warm: warmMs.map(Math.round), again: againMs.map(Math.round) },
  };
}
