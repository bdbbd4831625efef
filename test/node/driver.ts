/**
 * Runs fixtures/node-* apps case by case as their test.json says: a real build (`rbp build --type
 * node`), its log and error, the files it leaves, the launch plan (`rbp run --dry-run`), then the app
 * served for real over HTTP and stopped with SIGTERM. Node.js and npm come from a cache seeded once
 * per test file by a cold build, hard-linked into each case's own cache, as a warm builder would have.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, envArgs, freePort, rbp, serve, tmpDir } from '../helpers/rbp.ts';

export { envArgs, serve, type Served } from '../helpers/rbp.ts';

export interface HttpCheck {
  path: string;
  status: number;
  contains?: string;
}

export interface Case {
  name: string;
  env?: Record<string, string>;
  runEnv?: Record<string, string>;
  expect: {
    build: 'pass' | 'fail';
    log?: string[];
    notLog?: string[];
    errorId?: string;
    files?: { present?: string[]; absent?: string[] };
    launch?: { argv: string[]; env?: Record<string, string> };
    http?: HttpCheck[];
    afterStop?: { present?: string[] };
    /**
     * A second build of the same source into the same output with the first build's cache (the
     * modules layer reused): its log, then files, launch and HTTP are checked on what it left.
     */
    rebuild?: { log?: string[]; notLog?: string[]; count?: Record<string, number> };
    /** How many times a line occurs in the (first) build's log. */
    count?: Record<string, number>;
  };
}

export interface FixtureSpec {
  description: string;
  cases: Case[];
}

export function readSpec(name: string): FixtureSpec {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name, 'test.json'), 'utf8')) as FixtureSpec;
}

export async function httpChecks(port: number, checks: HttpCheck[]): Promise<void> {
  for (const c of checks) {
    const res = await fetch(`http://127.0.0.1:${port}${c.path}`);
    const body = await res.text();
    expect(res.status, `GET ${c.path}: ${body}`).toBe(c.status);
    if (c.contains) expect(body).toContain(c.contains);
  }
}

/** A cache holding Node.js 24.15.0 and npm from one cold build of fixtures/node-hello. */
export async function seedCache(work: string): Promise<string> {
  const seed = path.join(work, 'seed-cache');
  const r = await rbp(['build', path.join(FIXTURES, 'node-hello'), '--out', path.join(work, 'seed-out'), '--type', 'node', '--cache', seed]);
  if (r.exitCode !== 0) throw new Error(`seed build failed:\n${r.all}`);
  for (const l of ['modules', 'package-cache']) {
    fs.rmSync(path.join(seed, 'rbp_node', l), { recursive: true, force: true });
    fs.rmSync(path.join(seed, 'rbp_node', `${l}.toml`), { force: true });
  }
  fs.rmSync(path.join(work, 'seed-out'), { recursive: true, force: true });
  return seed;
}

export async function cacheFrom(seed: string, dir: string): Promise<string> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await execa('cp', ['-al', seed, dir]);
  return dir;
}

/**
 * Bun's shared /tmp/bun-node-<revision>/ folders whose links point into `work` (made by the Bun apps
 * these tests ran): removed with `work`, so that no dangling link is left for other programs.
 */
export function forgetBunLinks(work: string): void {
  for (const d of fs.readdirSync('/tmp').filter((n) => n.startsWith('bun-node-'))) {
    const dir = path.join('/tmp', d);
    try {
      if (fs.readlinkSync(path.join(dir, 'node')).startsWith(work + path.sep)) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // not a Bun folder, or not ours
    }
  }
}

/** Each `text` occurs exactly `n` times in the log. */
function countLines(log: string, counts: Record<string, number> | undefined): void {
  for (const [text, n] of Object.entries(counts ?? {})) expect(log.split(text).length - 1, `times "${text}" is logged:\n${log}`).toBe(n);
}

function fill(s: string, vars: Record<string, string>): string {
  return s.replace(/\{(app|port)\}/g, (_, k: string) => vars[k]!);
}

/** Registers one describe per fixture, one build test and one HTTP test per case. */
export function fixtureSuite(names: string[], prefix: string): void {
  let work: string;
  let seed: string;
  beforeAll(async () => {
    work = tmpDir(`rbp-node-${prefix}-`);
    seed = await seedCache(work);
  }, 300_000);
  afterAll(() => {
    forgetBunLinks(work);
    return fs.promises.rm(work, { recursive: true, force: true });
  }, 300_000);

  for (const name of names) {
    const spec = readSpec(name);
    describe(`${name}: ${spec.description}`, () => {
      spec.cases.forEach((c, i) => {
        const dir = () => path.join(work, `${name}-${i}`);
        const out = () => path.join(dir(), 'out');
        let built = false;
        it(c.name, async () => {
          // Bad input fails before anything is installed: no warm cache needed.
          const cache = c.expect.build === 'fail' ? path.join(dir(), 'cache') : await cacheFrom(seed, path.join(dir(), 'cache'));
          const r = await rbp(['build', path.join(FIXTURES, name), '--out', out(), '--type', 'node', '--cache', cache, ...envArgs(c.env ?? {})]);
          if (c.expect.build === 'pass') expect(r.exitCode, r.all).toBe(0);
          else expect(r.exitCode, r.all).not.toBe(0);
          for (const l of c.expect.log ?? []) expect(r.all).toContain(l);
          for (const l of c.expect.notLog ?? []) expect(r.all).not.toContain(l);
          if (c.expect.errorId) expect(r.all).toContain(`(error id: ${c.expect.errorId})`);
          countLines(r.all, c.expect.count);
          if (c.expect.build === 'fail') {
            expect(r.all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m); // no stack trace
            return;
          }
          if (c.expect.rebuild) {
            const again = await rbp(['build', path.join(FIXTURES, name), '--out', out(), '--type', 'node', '--cache', cache, ...envArgs(c.env ?? {})]);
            expect(again.exitCode, again.all).toBe(0);
            for (const l of c.expect.rebuild.log ?? []) expect(again.all).toContain(l);
            for (const l of c.expect.rebuild.notLog ?? []) expect(again.all).not.toContain(l);
            countLines(again.all, c.expect.rebuild.count);
          }
          const ws = path.join(out(), 'workspace');
          for (const f of c.expect.files?.present ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(true);
          for (const f of c.expect.files?.absent ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(false);
          if (c.expect.launch) {
            const port = await freePort();
            const run = await rbp(['run', out(), '--dry-run', '--port', String(port), ...envArgs(c.runEnv)]);
            expect(run.exitCode, run.all).toBe(0);
            const launch = JSON.parse(run.stdout).launch;
            const vars = { app: ws, port: String(port) };
            expect(launch.argv).toEqual(c.expect.launch.argv.map((a) => fill(a, vars)));
            for (const [k, v] of Object.entries(c.expect.launch.env ?? {})) expect(launch.env[k]).toBe(fill(v, vars));
          }
          built = true;
        });
        if (c.expect.http) {
          it(`${c.name}: serves over HTTP, stops on SIGTERM`, async () => {
            expect(built, 'the build of this case failed').toBe(true);
            const served = await serve(out(), c.runEnv ?? {}, (port) => httpChecks(port, c.expect.http!));
            expect(served.signal, served.output).toBeNull();
            expect([0, 143], served.output).toContain(served.status);
            for (const f of c.expect.afterStop?.present ?? []) expect(fs.existsSync(path.join(out(), 'workspace', f)), f).toBe(true);
          });
        }
      });
    });
  }
}
