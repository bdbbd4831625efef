/**
 * Every fixtures/php-* app, case by case as its test.json says: the build (with the server installed
 * from a local mirror, real Debian PHP and Composer), its log and error, the files it leaves, the exact
 * launch command (`rbp run --dry-run`), tasks run for real, and HTTP checks. With the real server
 * (RBP_TOOL_FRANKENPHP, see support.ts) every build uses it as the operator's server and every HTTP
 * check goes through it; without it they fail in CI and are skipped locally, saying why. A
 * CC_RUN_COMMAND case that needs no server is served for real either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execaSync } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, copyFixture, freePort, rbp, serve as serveOut, tmpDir, type Served } from '../helpers/rbp.ts';
import { COMPOSER, PHP, SERVER, envArgs, itWithServer, makeMirror, operatorEnv } from './support.ts';

interface HttpCheck {
  path: string;
  status: number;
  contains?: string;
  /** Text that must not be in the body (a file outside the webroot). */
  notContains?: string;
}

interface Case {
  name: string;
  env?: Record<string, string>;
  runEnv?: Record<string, string>;
  operatorEnv?: Record<string, string>;
  task?: string;
  instance?: string;
  serveWithoutServer?: boolean;
  expect: {
    build: 'pass' | 'fail';
    log?: string[];
    errorId?: string;
    files?: { present?: string[]; absent?: string[]; contains?: Record<string, string> };
    launch?: { argv: string[]; env?: Record<string, string>; server?: Record<string, string> };
    task?: { exitCode: number; contains: string[] };
    http?: HttpCheck[];
  };
}

interface FixtureSpec {
  description: string;
  needsComposerPhar?: boolean;
  cases: Case[];
}

const fixtures = fs
  .readdirSync(FIXTURES)
  .filter((n) => n.startsWith('php-') && fs.existsSync(path.join(FIXTURES, n, 'test.json')))
  .sort();

let mirror: string;
let work: string;
beforeAll(() => {
  mirror = makeMirror();
  work = tmpDir('rbp-php-fixtures-');
});
afterAll(() => {
  fs.rmSync(mirror, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

function appFor(name: string, spec: FixtureSpec): string {
  if (!spec.needsComposerPhar) return path.join(FIXTURES, name);
  const app = copyFixture(name);
  execaSync(PHP, ['-d', 'phar.readonly=0', path.join(import.meta.dirname, 'make-composer-phar.php'), COMPOSER, path.join(app, 'composer.phar')]);
  return app;
}

function fill(s: string, vars: Record<string, string>): string {
  return s.replace(/\{(server|app|port)\}/g, (_, k: string) => vars[k]!);
}

/** Starts `rbp run OUT`, checks each path, then sends SIGTERM and returns rbp's exit status. */
async function serve(out: string, env: Record<string, string>, checks: HttpCheck[]): Promise<Served> {
  return serveOut(out, env, async (port) => {
    for (const c of checks) {
      const res = await fetch(`http://127.0.0.1:${port}${c.path}`);
      const body = await res.text();
      expect(res.status, `GET ${c.path}: ${body}`).toBe(c.status);
      if (c.contains) expect(body).toContain(c.contains);
      if (c.notContains) expect(body).not.toContain(c.notContains);
    }
  });
}

for (const name of fixtures) {
  const spec = JSON.parse(fs.readFileSync(path.join(FIXTURES, name, 'test.json'), 'utf8')) as FixtureSpec;
  describe(`${name}: ${spec.description}`, () => {
    spec.cases.forEach((c, i) => {
      const out = () => path.join(work, `${name}-${i}`, 'out');
      let built = false;
      it(c.name, async () => {
        const app = appFor(name, spec);
        const args = ['build', app, '--out', out(), '--type', 'phpserver', '--cache', path.join(work, `${name}-${i}`, 'cache'), ...envArgs(c.env)];
        if (c.task) args.push('--task', c.task);
        if (c.instance) args.push('--instance', c.instance);
        const r = await rbp(args, { env: operatorEnv(mirror, { ...(SERVER ? { RBP_TOOL_FRANKENPHP: SERVER } : {}), ...c.operatorEnv }) });
        if (c.expect.build === 'pass') expect(r.exitCode, r.all).toBe(0);
        else expect(r.exitCode, r.all).not.toBe(0);
        for (const l of c.expect.log ?? []) expect(r.all).toContain(l);
        if (c.expect.errorId) expect(r.all).toContain(`(error id: ${c.expect.errorId})`);
        if (c.expect.build === 'fail') expect(r.all).not.toMatch(/^\s+at .+\(.+:\d+:\d+\)$/m); // no stack trace
        const ws = path.join(out(), 'workspace');
        for (const f of c.expect.files?.present ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(true);
        for (const f of c.expect.files?.absent ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(false);
        for (const [f, s] of Object.entries(c.expect.files?.contains ?? {})) expect(fs.readFileSync(path.join(ws, f), 'utf8')).toContain(s);

        if (c.expect.launch) {
          const port = await freePort();
          const run = await rbp(['run', out(), '--dry-run', '--port', String(port), ...envArgs(c.runEnv)]);
          expect(run.exitCode, run.all).toBe(0);
          const launch = JSON.parse(run.stdout).launch;
          const vars = { server: SERVER ?? path.join(out(), 'layers', 'rbp_phpserver', 'frankenphp', 'bin', 'frankenphp'), app: ws, port: String(port) };
          expect(launch.argv).toEqual(c.expect.launch.argv.map((a) => fill(a, vars)));
          expect(launch.cwd).toBe(ws);
          for (const [k, v] of Object.entries(c.expect.launch.env ?? {})) expect(launch.env[k]).toBe(fill(v, vars));
          if (c.expect.launch.server) expect(launch.server).toMatchObject(c.expect.launch.server);
        }
        if (c.expect.task) {
          const run = await rbp(['run', out(), ...envArgs(c.runEnv)], { env: { RBP_TOOL_PHP: PHP } });
          expect(run.exitCode, run.all).toBe(c.expect.task.exitCode);
          for (const s of c.expect.task.contains) expect(run.all).toContain(s);
        }
        built = true;
      });

      if (c.expect.http) {
        const name = `${c.name}: serves over HTTP, stops on SIGTERM`;
        const check = async () => {
          expect(built, 'the build of this case failed').toBe(true);
          const { status, signal } = await serve(out(), { RBP_TOOL_PHP: PHP, ...(c.runEnv ?? {}) }, c.expect.http!);
          // The server got SIGTERM and the launcher passed its status on (143 = killed by SIGTERM).
          expect(signal).toBeNull();
          expect([0, 143]).toContain(status);
        };
        if (c.serveWithoutServer) it(name, check);
        else itWithServer(name, check);
      }
    });
  });
}
