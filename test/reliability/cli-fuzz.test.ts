/**
 * The command line, fuzzed: 1,000 generated command lines (commands known and mistyped,
 * each command's flags and others', unknown flags, flags without values, values that look like
 * flags, odd strings and paths, `--`) run through rbp's main() in this process, and a sample of them
 * through the installed form, `dist/rbp` (where Node.js itself reads the command line first). Every
 * bad value must end as one of rbp's own errors: no stack trace, no "internal error", no
 * "undefined", no exit status outside rbp's, no hang. Nothing here builds: no APP of the pool passes
 * detection (so build and deploy check OUT, the cache and the bindings, then stop at detect), and for
 * `package` and `builder` our buildpacks and the tool cache point at empty folders.
 *   RBP_FUZZ_SEED=<seed> RBP_FUZZ_ONLY=<case> npx vitest run test/reliability/cli-fuzz.test.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../helpers/rng.ts';
import { main } from '../../lib/platform/cli.ts';
import { COMMANDS } from '../../lib/platform/cli-commands.ts';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

const SEED = Number(process.env.RBP_FUZZ_SEED ?? 20261125);
const ONLY = process.env.RBP_FUZZ_ONLY === undefined ? undefined : Number(process.env.RBP_FUZZ_ONLY);
const CASES = Number(process.env.RBP_FUZZ_CLI ?? 1000);
const THROUGH_BIN = 40;
const CASE_TIMEOUT_MS = 20_000;
/** rbp's exit statuses: usage/input 2, deploy 3, detect 20/21, build 51/52, export 62, launch 82, prune's partial failure 1. */
const STATUSES = [0, 1, 2, 3, 20, 21, 51, 52, 62, 82];

let work: string;
const VALUES = () => [
  '',
  ' ',
  '-',
  '--',
  '-x',
  '--json',
  '=',
  'a=b',
  'A',
  'NAME=',
  '1=2',
  '0',
  '-1',
  '65536',
  '8080',
  '1e3',
  'NaN',
  'abc',
  'node',
  'nodejs',
  'statik',
  'php',
  'rbp/node',
  'rbp/node@0.1.0',
  'rbp/node@9',
  'urn:cnb:builder:rbp/node',
  'docker://x/y',
  'https://example.invalid/bp.tgz',
  'XS',
  'pico',
  'huge',
  '512M',
  '1.5G',
  '0B',
  'no',
  'on-failure',
  'always',
  '/',
  '/etc/passwd',
  '/nonexistent/deep/path',
  path.join(work, 'empty-dir'),
  path.join(work, 'a-file'),
  path.join(work, 'env-file'),
  path.join(work, 'missing.env'),
  path.join(work, 'out'),
  'relative/out',
  '..',
  '.',
  '~',
  '$HOME',
  '`id`',
  'é',
  '日本',
  '🙂',
  '\u202e',
  'x'.repeat(5000),
  'my app:1.0',
  'myapp:1.0',
  '\t',
];

function commandLine(g: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(g() * xs.length)]!;
  const values = VALUES();
  const names = COMMANDS.map((c) => c.name);
  const cmd = g() < 0.08 ? pick(['biuld', 'bulid', 'dpeloy', 'runn', 'prnue', 'help', '--help', '-h', '--version', 'x', '', '--json']) : pick(names);
  const c = COMMANDS.find((x) => x.name === cmd);
  const argv = [cmd];
  // A third of build, deploy and detect lines are valid but for one flag: they reach that flag's own check.
  if (c && ['build', 'deploy', 'detect'].includes(cmd) && g() < 0.35) {
    argv.push(path.join(work, 'empty-dir'), ...(cmd === 'detect' ? [] : ['--out', path.join(work, `out-${Math.floor(g() * 1e6)}`)]));
    const f = pick(c.flags.filter((x) => x.name !== 'help' && x.name !== 'out'));
    argv.push(`--${f.name}`, ...(f.arg ? [pick(values)] : []));
    return argv;
  }
  if (g() < 0.8) argv.push(pick(values));
  const allFlags = COMMANDS.flatMap((x) => x.flags);
  for (let n = Math.floor(g() * 5); n > 0; n--) {
    const r = g();
    if (r < 0.6 && c) {
      const f = pick(c.flags);
      const name = g() < 0.2 && f.short ? `-${f.short}` : `--${f.name}`;
      if (!f.arg) argv.push(g() < 0.1 ? `${name}=${pick(values)}` : name);
      else if (g() < 0.1)
        argv.push(name); // no value
      else if (g() < 0.2) argv.push(`${name}=${pick(values)}`);
      else argv.push(name, pick(values));
    } else if (r < 0.8) {
      const f = pick(allFlags);
      argv.push(`--${f.name}`, ...(f.arg ? [pick(values)] : []));
    } else if (r < 0.9) argv.push(pick(['--bogus', '-z', '--chek', '--tpye', '--path', '--builder', '---', '-']));
    else argv.push(pick(values));
  }
  if (g() < 0.05) argv.push('--', pick(values));
  return argv;
}

interface Outcome {
  code: number | undefined;
  output: string;
  thrown?: string;
  timedOut?: boolean;
}

function defects(o: Outcome): string[] {
  const found: string[] = [];
  if (o.timedOut) found.push(`hang (no exit within ${CASE_TIMEOUT_MS / 1000}s)`);
  if (o.thrown) found.push(`main() threw: ${o.thrown}`);
  if (/\n\s+at .+:\d+:\d+\)?(\n|$)/.test(o.output) || /\n\s+at (async )?\S+ \(/.test(o.output)) found.push('a stack trace');
  if (o.output.includes('internal error')) found.push('"internal error"');
  if (/\bundefined\b/.test(o.output)) found.push('"undefined" in the output');
  if (/^node: /m.test(o.output)) found.push("Node.js's own error");
  if (!o.timedOut && !o.thrown && (o.code === undefined || !STATUSES.includes(o.code))) found.push(`exit status ${o.code}`);
  return found;
}

async function inProcess(argv: string[]): Promise<Outcome> {
  // package and builder would write buildpackages and builders for a valid --out: not with none built.
  if (argv[0] === 'package' || argv[0] === 'builder') process.env.RBP_BUILDPACKS_DIR = path.join(work, 'no-buildpacks');
  else if (saved.RBP_BUILDPACKS_DIR === undefined) delete process.env.RBP_BUILDPACKS_DIR;
  else process.env.RBP_BUILDPACKS_DIR = saved.RBP_BUILDPACKS_DIR;
  let output = '';
  const sink = new Writable({
    write: (c, _e, cb) => {
      output += String(c);
      cb();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const code = await Promise.race([
      main(argv, { stdout: sink, stderr: sink }),
      new Promise<'timeout'>((r) => {
        timer = setTimeout(() => r('timeout'), CASE_TIMEOUT_MS);
      }),
    ]);
    return code === 'timeout' ? { code: undefined, output, timedOut: true } : { code, output };
  } catch (e) {
    return { code: undefined, output, thrown: (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
}

const saved: Record<string, string | undefined> = {};
const ISOLATE = ['RBP_BUILDPACKS_DIR', 'RBP_TOOLS_CACHE', 'RBP_TOOL_LIFECYCLE', 'RBP_RUN_IMAGE', 'RBP_DOWNLOAD_CACHE', 'XDG_CACHE_HOME', 'NO_COLOR'];
let cwd: string;

beforeAll(() => {
  work = tmpDir('rbp-cli-fuzz-');
  fs.mkdirSync(path.join(work, 'empty-dir'));
  fs.writeFileSync(path.join(work, 'a-file'), 'x');
  fs.writeFileSync(path.join(work, 'env-file'), 'A=1\nB\nnot a line\n');
  for (const k of ISOLATE) saved[k] = process.env[k];
  Object.assign(process.env, {
    RBP_TOOLS_CACHE: path.join(work, 'no-tools'),
    RBP_DOWNLOAD_CACHE: path.join(work, 'downloads'),
    XDG_CACHE_HOME: path.join(work, 'xdg'),
    NO_COLOR: '1',
  });
  delete process.env.RBP_TOOL_LIFECYCLE;
  delete process.env.RBP_RUN_IMAGE;
  // Relative OUTs and caches land in the fuzz's own folder.
  cwd = process.cwd();
  process.chdir(work);
});

afterAll(() => {
  process.chdir(cwd);
  for (const k of ISOLATE) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

const show = (argv: string[]) => JSON.stringify(argv.map((a) => (a.length > 80 ? `${a.slice(0, 80)}…(${a.length})` : a)));

describe(`command-line fuzzing (seed ${SEED})`, () => {
  it(`${CASES} generated command lines through main(): each one rbp's own answer`, async () => {
    const failures: string[] = [];
    const codes = new Map<number | undefined, number>();
    for (let i = 0; i < CASES; i++) {
      if (ONLY !== undefined && i !== ONLY) continue;
      const argv = commandLine(rng(SEED * 1000 + i));
      const o = await inProcess(argv);
      codes.set(o.code, (codes.get(o.code) ?? 0) + 1);
      const d = defects(o);
      if (d.length) failures.push(`case ${i}: ${d.join('; ')}\n  argv: ${show(argv)}\n  output:\n${o.output.slice(0, 2000)}`);
    }
    expect(failures, `seed ${SEED}:\n${failures.join('\n\n')}`).toEqual([]);
    if (process.env.RBP_FUZZ_SHOW) console.log([...codes]);
    // The generator reaches rbp's errors, not only its help: most command lines are refused, and
    // some get as far as detection.
    if (ONLY === undefined) expect(codes.get(2) ?? 0).toBeGreaterThan(CASES / 2);
    if (ONLY === undefined) expect(codes.get(20) ?? 0).toBeGreaterThan(5);
  }, 600_000);

  it(`${THROUGH_BIN} of them through dist/rbp: Node.js never answers in rbp's place`, async () => {
    const failures: string[] = [];
    const bin = path.join(ROOT, 'dist', 'rbp');
    for (let i = 0; i < THROUGH_BIN; i += 4) {
      const batch = [0, 1, 2, 3].map((k) => i + k).filter((k) => ONLY === undefined || k === ONLY);
      const rs = await Promise.all(
        batch.map(async (k) => {
          const argv = commandLine(rng(SEED * 7919 + k));
          const none = argv[0] === 'package' || argv[0] === 'builder' ? { RBP_BUILDPACKS_DIR: path.join(work, 'no-buildpacks') } : {};
          const r = finished(
            await execa(bin, argv, {
              reject: false,
              all: true,
              timeout: CASE_TIMEOUT_MS,
              stdin: 'ignore',
              cwd: work,
              env: { ...process.env, ...none },
            }),
          );
          const o: Outcome = { code: r.exitCode, output: r.all ?? '', timedOut: r.timedOut };
          const d = defects(o);
          return d.length ? `bin case ${k}: ${d.join('; ')}\n  argv: ${show(argv)}\n  output:\n${o.output.slice(0, 2000)}` : undefined;
        }),
      );
      for (const f of rs) if (f) failures.push(f);
    }
    expect(failures, `seed ${SEED}:\n${failures.join('\n\n')}`).toEqual([]);
  }, 300_000);
});
