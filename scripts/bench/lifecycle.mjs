// Lifecycle benchmarks: restore + export of a 30,000-file layer vs `cp -a` of the same tree.
// (Detect has its own suite: detect.mjs.)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../bench-lib.mjs';
import { parse } from 'smol-toml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rbp = path.join(root, 'dist', 'rbp.js');

function time(fn) {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

function rbpBuild(app, out, bp) {
  const r = spawnSync('node', [rbp, 'build', app, '--out', out, '--buildpack', bp], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (r.status !== 0) throw new Error(`rbp build failed:\n${r.stdout}${r.stderr}`);
  return parse(fs.readFileSync(path.join(out, 'rbp.toml'), 'utf8'));
}

export async function run({ rounds = 5 } = {}) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-'));
  try {
    const app = path.join(work, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'README'), 'bench\n');
    const out = path.join(work, 'out');
    const bp = path.join(root, 'scripts', 'bench', 'buildpack-30k');
    rbpBuild(app, out, bp); // cold: creates the layer
    const layer = path.join(out, 'layers', 'bench_30k', 'files');
    const files = Number(execFileSync('sh', ['-c', `find "${layer}" -type f | wc -l`], { encoding: 'utf8' }).trim());

    const rbpTimes = [];
    const cpTimes = [];
    for (let i = 0; i < rounds; i++) {
      const info = rbpBuild(app, out, bp); // warm: restore from cache, reuse, export
      rbpTimes.push(info.timings.restore + info.timings.export);
      const dst = path.join(work, `cp-${i}`);
      cpTimes.push(time(() => execFileSync('cp', ['-a', layer, dst])));
      fs.rmSync(dst, { recursive: true, force: true });
    }

    const r = {
      layerFiles: files,
      restoreExportMedianMs: median(rbpTimes),
      cpAMedianMs: median(cpTimes),
    };
    r.restoreExportVsCpRatio = r.restoreExportMedianMs / r.cpAMedianMs;
    return r;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
