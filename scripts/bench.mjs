// `npm run bench`: runs every scripts/bench/*.mjs (each exports `run()` returning its results) in
// one process, one after the other, and writes bench/RESULTS.md, which the README links.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'scripts', 'bench');
const only = process.argv.slice(2);
const suites = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.slice(0, -4))
  .filter((n) => only.length === 0 || only.includes(n))
  .sort();

const fmt = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : typeof v === 'object' ? JSON.stringify(v) : String(v));
const lines = [
  '# Benchmark results',
  '',
  `Run on ${new Date().toISOString()}: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}.`,
  'Produced by `npm run bench`; ratios compare rbp with the raw commands a user would type, in the same run.',
  '',
];
let failed = 0;
for (const name of suites) {
  process.stdout.write(`bench ${name}...\n`);
  lines.push(`## ${name}`, '', '| measure | value |', '|---|---|');
  try {
    const mod = await import(pathToFileURL(path.join(dir, `${name}.mjs`)).href);
    const results = await mod.run();
    const cell = (x) => String(x).replaceAll('|', '\\|');
    for (const [k, v] of Object.entries(results)) lines.push(`| ${cell(k)} | ${cell(fmt(v))} |`);
    console.log(results);
  } catch (e) {
    failed++;
    lines.push(`| error | ${String(e.message ?? e).split('\n')[0]} |`);
    console.error(`bench ${name} failed:`, e);
  }
  lines.push('');
}
fs.mkdirSync(path.join(root, 'bench'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench', 'RESULTS.md'), `${lines.join('\n')}\n`);
console.log(`wrote bench/RESULTS.md`);
process.exitCode = failed ? 1 : 0;
