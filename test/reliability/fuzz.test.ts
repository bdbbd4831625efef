/**
 * Seeded fuzzing: generated package.json, composer.json and variable values through
 * `rbp detect` (our three buildpacks, in the automatic order) and `rbp run --dry-run` (the launch
 * entrypoint's plan). Any stack trace, hang, "internal error", `undefined` or a secret's value in
 * the output fails,
 * with the seed and case number, so a failure reproduces:
 *   RBP_FUZZ_SEED=<seed> RBP_FUZZ_ONLY=<case> npx vitest run test/reliability/fuzz.test.ts
 * RBP_FUZZ_DETECT / RBP_FUZZ_RUN set the number of cases (default 120 and 80: 200 cases, each with
 * several generated files and values).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { describe, expect, it } from 'vitest';
import { rng } from '../helpers/rng.ts';
import { RBP, tmpDir } from '../helpers/rbp.ts';
import { buildFlowApp } from '../request-flow/helpers.ts';

const SEED = Number(process.env.RBP_FUZZ_SEED ?? 20261122);
const ONLY = process.env.RBP_FUZZ_ONLY === undefined ? undefined : Number(process.env.RBP_FUZZ_ONLY);
const DETECT_CASES = Number(process.env.RBP_FUZZ_DETECT ?? 120);
const RUN_CASES = Number(process.env.RBP_FUZZ_RUN ?? 80);
const CASE_TIMEOUT_MS = 60_000;
const PARALLEL = 3;

class Gen {
  constructor(readonly r: () => number) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  /** Strings that break parsers: paths, escapes, separators, unicode, long, shell. Never NUL, never "undefined". */
  str(): string {
    const pieces = [
      '',
      ' ',
      '  x  ',
      '/',
      '//',
      '..',
      '../..',
      '../../etc/passwd',
      '/etc/passwd',
      '.',
      'public',
      '/public/',
      'a b',
      '%',
      '%20',
      '%zz',
      '\t',
      '\n',
      '\r\n',
      '=',
      '==',
      ':',
      ',',
      ', ,',
      ';',
      '$HOME',
      '`id`',
      '$(id)',
      '"',
      "'",
      '\\',
      '{}',
      '[]',
      'null',
      'true',
      '0',
      '-1',
      '65536',
      '8080',
      '1e3',
      '0x10',
      'NaN',
      'é',
      '日本',
      '🙂',
      '\u202e',
      '\ud800',
      '\x7f',
      '\x01',
      '*',
      '?',
      '#',
      '~',
      'cache',
      'block',
      'redirector',
      'custom',
      'redirector,cache',
      '@@LISTEN_PORT@@',
      '@@FORWARD_PORT@@',
      'node',
      'npm',
      'yarn',
      'pnpm',
      'bun',
      '22',
      '>=18',
      '^20.1',
      'latest',
      'lts/*',
      'index.php',
      'index.html',
    ];
    const n = 1 + this.int(3);
    let s = '';
    for (let i = 0; i < n; i++) s += this.pick(pieces);
    if (this.chance(0.05)) s = s + 'x'.repeat(this.pick([255, 4096, 70_000]));
    return s.replaceAll('undefined', 'undef');
  }
  json(depth = 0): unknown {
    const k = this.int(depth > 3 ? 4 : 7);
    switch (k) {
      case 0:
        return this.str();
      case 1:
        return this.pick([0, -1, 1.5, 1e308, true, false, null]);
      case 2:
        return this.str();
      case 3:
        return null;
      case 4:
        return Array.from({ length: this.int(3) }, () => this.json(depth + 1));
      default: {
        const o: Record<string, unknown> = {};
        for (let i = this.int(4); i > 0; i--) o[this.str() || 'k'] = this.json(depth + 1);
        return o;
      }
    }
  }
  /** A field's value: usually the right type with a strange value, sometimes the wrong type. */
  field(): unknown {
    return this.chance(0.6) ? this.str() : this.json(2);
  }
}

/** package.json: plausible fields with strange values, or text that is not JSON, or deep nesting. */
function packageJson(g: Gen): string {
  const k = g.int(10);
  if (k === 0) return g.str();
  if (k === 1) {
    // Deep nesting, balanced (valid JSON) or not, at the top or inside a field.
    const n = g.pick([300, 100_000, 500_000]);
    const deep = `${'['.repeat(n)}${']'.repeat(g.chance(0.7) ? n : 10)}`;
    return g.chance(0.5) ? deep : `{"scripts":${deep},"main":"x.js"}`;
  }
  if (k === 2) return JSON.stringify(g.json());
  const pkg: Record<string, unknown> = {};
  for (const f of ['name', 'version', 'main', 'scripts', 'engines', 'packageManager', 'dependencies', 'devDependencies', 'type', 'workspaces']) {
    if (!g.chance(0.5)) continue;
    if (f === 'scripts' || f === 'engines' || f === 'dependencies') {
      pkg[f] = g.chance(0.7)
        ? Object.fromEntries(Array.from({ length: 1 + g.int(3) }, () => [g.pick(['start', 'build', 'node', 'npm', 'test', g.str()]), g.field()]))
        : g.field();
    } else pkg[f] = g.field();
  }
  const text = JSON.stringify(pkg);
  return g.chance(0.1) ? `\uFEFF${text}` : text;
}

function composerJson(g: Gen): string {
  const k = g.int(8);
  if (k === 0) return g.str();
  if (k === 1) {
    const n = g.pick([300, 50_000]);
    return `${'{"a":'.repeat(n)}1${'}'.repeat(g.chance(0.7) ? n : 10)}`;
  }
  const c: Record<string, unknown> = {};
  for (const f of ['name', 'require', 'require-dev', 'config', 'scripts', 'autoload', 'extra']) {
    if (!g.chance(0.5)) continue;
    c[f] =
      f === 'require' && g.chance(0.7)
        ? Object.fromEntries(
            Array.from({ length: 1 + g.int(3) }, () => [g.pick(['php', 'ext-intl', 'ext-memcache', 'ext-', 'monolog/monolog', g.str()]), g.field()]),
          )
        : g.field();
  }
  return JSON.stringify(c);
}

const DETECT_VARS = [
  'CC_WEBROOT',
  'CC_RUN_COMMAND',
  'CC_NODE_VERSION',
  'CC_NODE_BUILD_TOOL',
  'CC_CUSTOM_BUILD_TOOL',
  'CC_BUILD_COMMAND',
  'CC_STATIC_SERVER',
  'CC_PHP_VERSION',
  'CC_CACHE_FILE',
  'CC_REQUEST_FLOW',
  'NPM_TOKEN',
  'CC_NPM_REGISTRY',
  'CC_NPM_BASIC_AUTH',
  'CC_PRE_BUILD_HOOK',
  'NODE_ENV',
];
const RUN_VARS = [
  'NPM_TOKEN',
  'CC_REQUEST_FLOW',
  'CC_REQUEST_FLOW_CUSTOM',
  'CC_CACHE_FILE',
  'CC_REDIRECTOR_PROJECT_KEY',
  'ACCESSPROXY_CHALLENGE_SECRET',
  'CC_RUN_COMMAND',
  'CC_HEALTH_CHECK_PATH',
  'CC_HEALTH_CHECK_PATH_1',
  'CC_WEBROOT',
  'CC_NODE_VERSION',
  'PORT',
  'CC_STATIC_PORT',
  'CC_PHPSERVER_PORT',
];
const OPERATOR_VARS = ['RBP_APP_PORT', 'RBP_PUBLIC_PORT', 'RBP_LISTEN_TIMEOUT', 'RBP_STOP_TIMEOUT', 'RBP_VARNISH_STORAGE'];

const SECRETS = new Set(['NPM_TOKEN', 'CC_NPM_BASIC_AUTH', 'CC_REDIRECTOR_PROJECT_KEY', 'ACCESSPROXY_CHALLENGE_SECRET']);
/** Marks every secret's value: the output must never contain it. */
const SENTINEL = 'Zq7SeCrEt';

function envOf(g: Gen, names: string[], max: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (let i = g.int(max + 1); i > 0; i--) {
    const name = g.pick(names);
    const v = g.str();
    // Secrets get the sentinel in the middle, whatever else the value holds (user:pass for basic auth).
    env[name] = SECRETS.has(name) ? `${v.slice(0, 3)}${SENTINEL}${v.slice(3)}` : v;
  }
  return env;
}

interface Outcome {
  code: number | undefined;
  output: string;
  timedOut: boolean;
}

async function rbpRun(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const r = finished(
    await execa('node', [RBP, ...args], { reject: false, all: true, timeout: CASE_TIMEOUT_MS, env: { NO_COLOR: '1', ...env }, stdin: 'ignore' }),
  );
  return { code: r.exitCode, output: r.all ?? '', timedOut: r.timedOut };
}

/** What makes a case fail: each is a bug whatever the input. */
function defects(o: Outcome, allowed: number[]): string[] {
  const found: string[] = [];
  if (o.timedOut) found.push(`hang (no exit within ${CASE_TIMEOUT_MS / 1000}s)`);
  if (/\n\s+at .+:\d+:\d+\)?(\n|$)/.test(o.output) || /\n\s+at (async )?\S+ \(/.test(o.output)) found.push('a stack trace');
  if (o.output.includes('internal error')) found.push('"internal error"');
  if (/\bundefined\b/.test(o.output)) found.push('"undefined" in the output');
  if (o.output.includes(SENTINEL)) found.push('a secret value in the output');
  if (!o.timedOut && (o.code === undefined || !allowed.includes(o.code))) found.push(`exit status ${o.code}, expected one of ${allowed.join(', ')}`);
  return found;
}

async function inBatches(n: number, fn: (i: number) => Promise<string | undefined>): Promise<string[]> {
  const failures: string[] = [];
  const indexes = Array.from({ length: n }, (_, i) => i).filter((i) => ONLY === undefined || i === ONLY);
  for (let i = 0; i < indexes.length; i += PARALLEL) {
    const rs = await Promise.all(indexes.slice(i, i + PARALLEL).map(fn));
    for (const r of rs) if (r) failures.push(r);
  }
  return failures;
}

const envArgs = (env: Record<string, string>) => Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
const show = (o: unknown) => JSON.stringify(o, (_k, v) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v));

describe(`fuzzing (seed ${SEED})`, () => {
  it(`rbp detect: ${DETECT_CASES} generated apps and variables`, async () => {
    const root = tmpDir('rbp-fuzz-');
    const failures = await inBatches(DETECT_CASES, async (i) => {
      const g = new Gen(rng(SEED * 1000 + i));
      const app = path.join(root, `case-${i}`);
      fs.mkdirSync(app);
      const files: Record<string, string> = {};
      if (g.chance(0.7)) files['package.json'] = packageJson(g);
      if (g.chance(0.4)) files['composer.json'] = composerJson(g);
      if (g.chance(0.3)) files[g.pick(['index.html', 'index.php', 'public/index.html', 'config.toml', 'mkdocs.yml'])] = g.str();
      for (const [f, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(app, f)), { recursive: true });
        fs.writeFileSync(path.join(app, f), text);
      }
      const env = envOf(g, DETECT_VARS, 4);
      const o = await rbpRun(['detect', app, ...envArgs(env)]);
      const d = defects(o, [0, 2, 20, 21]);
      fs.rmSync(app, { recursive: true, force: true });
      return d.length
        ? `case ${i}: ${d.join('; ')}\n  files: ${show(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v])))}\n  env: ${show(env)}\n  output:\n${o.output.slice(0, 3000)}`
        : undefined;
    });
    expect(failures, `seed ${SEED}:\n${failures.join('\n\n')}`).toEqual([]);
  }, 1_800_000);

  it(`rbp run --dry-run: ${RUN_CASES} generated launch variables`, async () => {
    const { out, result } = await buildFlowApp('flow-app');
    expect(result.exitCode, result.all).toBe(0);
    const failures = await inBatches(RUN_CASES, async (i) => {
      const g = new Gen(rng(SEED * 7919 + i));
      const env = envOf(g, RUN_VARS, 4);
      const operator = envOf(g, OPERATOR_VARS, 2);
      const port = g.chance(0.9) ? String(20_000 + g.int(20_000)) : g.str();
      const o = await rbpRun(['run', out, '--dry-run', '--port', port, ...envArgs(env)], operator);
      const d = defects(o, [0, 2, 82]);
      return d.length
        ? `case ${i}: ${d.join('; ')}\n  --port ${show(port)}\n  env: ${show(env)}\n  operator: ${show(operator)}\n  output:\n${o.output.slice(0, 3000)}`
        : undefined;
    });
    expect(failures, `seed ${SEED}:\n${failures.join('\n\n')}`).toEqual([]);
  }, 1_800_000);
});
