// `npm run bench`: runs every scripts/bench/*.mjs (each exports `run()` returning its results) in
// one process, one after the other, and writes their sections of bench/RESULTS.md, which the README links.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './bench-lib.mjs';

const dir = path.join(root, 'scripts', 'bench');
const only = process.argv.slice(2);
const all = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.slice(0, -4))
  .sort();
const suites = all.filter((n) => only.length === 0 || only.includes(n));

const fmt = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : typeof v === 'object' ? JSON.stringify(v) : String(v));
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const header = [
  '# Benchmark results',
  '',
  'Written by `npm run bench` (`node scripts/bench.mjs NAME...` runs some sections, replacing only theirs); each ratio compares rbp with the raw commands or the tool a user would run, measured in the same run, and each goal row says whether it is met.',
  'Each section says when it ran and under what load; earlier figures are in git.',
  '',
];
/** The sections of RESULTS.md as it is, by their "## name" title, in order. */
function sectionsOf(text) {
  const out = new Map();
  const parts = text.split(/^(?=## )/m).slice(1);
  for (const part of parts) out.set(/^## (.*)$/m.exec(part)[1].trim(), part.replace(/\n*$/, '\n'));
  return out;
}
const resultsFile = path.join(root, 'bench', 'RESULTS.md');
const sections = sectionsOf(fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, 'utf8') : '');
let failed = 0;
for (const name of suites) {
  process.stdout.write(`bench ${name}...\n`);
  const lines = [
    `## ${name}`,
    '',
    `Run on ${new Date().toISOString()} (${machine}; load average ${os.loadavg()[0].toFixed(1)} at the start).`,
    '',
    '| measure | value |',
    '|---|---|',
  ];
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
  sections.set(name, `${lines.join('\n')}\n`);
}
fs.mkdirSync(path.join(root, 'bench'), { recursive: true });
// Only the sections of benches that exist, in their order: the file is the current table.
const current = all.filter((n) => sections.has(n)).map((n) => sections.get(n));
fs.writeFileSync(resultsFile, `${header.join('\n')}\n${current.join('\n')}`);
console.log(`wrote bench/RESULTS.md (${suites.join(', ')})`);
process.exitCode = failed ? 1 : 0;
