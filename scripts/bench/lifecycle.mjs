// Lifecycle benchmarks: restore + export of a 30,000-file layer vs `cp -a` of the same tree
// (detect has its own suite: detect.mjs).
// Restore + export of a launch+cache layer is one walk that checks every file of its spare (a second
// name for each file, beside OUT) against the cache's record, then one rename of the spare into the
// new OUT (the previous OUT stays whole for a failed build), and no walk at export when the layer
// was left alone. Beside `cp -a`, the same tree's `cp -al` (a link per file, no check) and `find -ls`
// (a stat per file, no link: the floor of the check) put it in scale, and the rebuild's wall time
// includes what the phases do not: rbp's Node.js start (this buildpack is sh), the previous OUT's removal.
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
    const wallTimes = [];
    const cpTimes = [];
    const cpLinkTimes = [];
    const statTimes = [];
    for (let i = 0; i < rounds; i++) {
      let info;
      wallTimes.push(time(() => (info = rbpBuild(app, out, bp)))); // warm: restore from cache, reuse, export
      if (!info.layers.every((l) => l.state === 'restored')) throw new Error(`the warm build did not restore its layer: ${JSON.stringify(info.layers)}`);
      rbpTimes.push(info.timings.restore + info.timings.export);
      const dst = path.join(work, `cp-${i}`);
      cpTimes.push(time(() => execFileSync('cp', ['-a', layer, dst])));
      fs.rmSync(dst, { recursive: true, force: true });
      cpLinkTimes.push(time(() => execFileSync('cp', ['-al', layer, dst])));
      fs.rmSync(dst, { recursive: true, force: true });
      statTimes.push(time(() => execFileSync('find', [layer, '-ls'], { stdio: 'ignore' })));
    }

    const r = {
      layerFiles: files,
      restoreExportMedianMs: median(rbpTimes),
      cpAMedianMs: median(cpTimes),
    };
    r['restoreExportVsCpRatio (goal ≤ 0.05)'] = r.restoreExportMedianMs / r.cpAMedianMs;
    r['cp -al of the layer (ms, median: a hard link per file, the floor of linking)'] = median(cpLinkTimes);
    r['find -ls of the layer (ms, median: a stat per file, the floor of the check)'] = median(statTimes);
    r['warm rebuild wall time (ms, median: rbp’s Node.js start and the previous OUT’s removal included)'] = median(wallTimes);
    r.rounds = rounds;
    return r;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
