// Node runtime benchmarks on fixtures/node-bench (a package-lock.json of ~260 pure-JS packages):
// - cold build (`rbp build --type node`, empty cache: Node.js 24.15.0 and npm 11.12.1 downloaded,
//   dependencies installed) vs. the raw commands a user would type for the same result: download and
//   unpack the Node.js 24.15.0 and npm 11.12.1 tarballs of the registry, then `npm ci` with them, with
//   an empty npm cache;
// - warm rebuild (same cache, nothing changed: every layer reused) vs. the cold build.
// Rounds alternate raw and rbp so neither always meets a colder network path; the best round counts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rbp = path.join(root, 'dist', 'rbp.js');
const fixture = path.join(root, 'fixtures', 'node-bench');
const NODE = '24.15.0';
const NPM = '11.12.1';
const arch = os.arch() === 'arm64' ? 'arm64' : 'x64';

function sh(cmd, args, opts = {}) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...opts });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function rbpBuild(out, cache) {
  const r = sh('node', [rbp, 'build', fixture, '--out', out, '--type', 'node', '--cache', cache], { env: { ...process.env, NO_COLOR: '1' } });
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

export async function run({ rounds = 2 } = {}) {
  const lock = JSON.parse(fs.readFileSync(path.join(fixture, 'package-lock.json'), 'utf8'));
  const packages = Object.keys(lock.packages).filter((k) => k !== '').length;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-node-'));
  const rawMs = [];
  const coldMs = [];
  const warmMs = [];
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
        const cache = path.join(dir, 'cache');
        coldMs.push(rbpBuild(out, cache).ms);
        const warm = rbpBuild(out, cache);
        if (!/dependencies reused/.test(warm.stdout)) throw new Error(`the warm rebuild did not reuse the dependencies:\n${warm.stdout}`);
        warmMs.push(warm.ms);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const best = (xs) => Math.min(...xs);
  const cold = best(coldMs);
  const rawBest = best(rawMs);
  const warm = best(warmMs);
  return {
    fixture: `fixtures/node-bench (${packages} packages in package-lock.json)`,
    rounds,
    'raw curl|tar node+npm, npm ci (s)': rawBest / 1000,
    'rbp cold build, empty cache (s)': cold / 1000,
    'rbp warm rebuild, nothing changed (s)': warm / 1000,
    'cold build / raw commands': cold / rawBest,
    'warm rebuild / cold build': warm / cold,
    'all rounds (ms)': { raw: rawMs.map(Math.round), cold: coldMs.map(Math.round), warm: warmMs.map(Math.round) },
  };
}
