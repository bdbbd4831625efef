/**
 * The one driver of `fixtures/<app>/test.json` (schema: fixture-spec.ts): each case is a real build
 * (`rbp build --type <runtime>`), its log and error, the files it leaves, the launch plan
 * (`rbp run --dry-run`), a task run for real, then the app served for real over HTTP and stopped
 * with SIGTERM. What differs between runtimes (a warm cache, a mirror, the operator's tools, which
 * HTTP checks need a server the machine may lack) comes in as hooks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptView, readFixture, type Case, type FixtureSpec, type HttpCheck } from './fixture-spec.ts';
import { FIXTURES, envArgs, freePort, rbp, serve, tmpDir, type Served } from './rbp.ts';
import { normalizedPlan, type DryRun } from './launch-forms.ts';
import { registryResolved } from './registry-versions.ts';
import { requirement } from './requirement.ts';
import { missingServices, startService } from './services.ts';

export interface RuntimeHooks {
  type: 'node' | 'static' | 'phpserver';
  /** Once per test file, before the first case (a warm cache, a mirror), in `work`. */
  setup?: (work: string) => Promise<void> | void;
  teardown?: (work: string) => Promise<void> | void;
  /** The app folder to build (default the fixture itself; a copy when files must be added). */
  app?: (name: string, spec: FixtureSpec) => string;
  /** The cache folder of a case, made in `dir` (default a new one). */
  cache?: (c: Case, dir: string) => Promise<string> | string;
  /** rbp's own environment for the build: the operator's tools, the mirror. */
  operatorEnv?: (c: Case) => Record<string, string>;
  /** Placeholders of the expected log, launch argv and env besides {app} and {port}: `{caddy}`. */
  launchVars?: (out: string) => Record<string, string>;
  /** Why the cases cannot run here (a tool missing outside CI); they are skipped, saying so. */
  skip?: string;
  /** rbp's environment when a task is run and when the app is served. */
  runOperatorEnv?: () => Record<string, string>;
  /** How a build case is registered: phpserver's that need the real server (`needsServer`) are gated on it. */
  buildTest?: (c: Case) => (name: string, fn: () => Promise<void>, timeout: number) => void;
  /** How an HTTP case is registered: phpserver's need the real server unless the case says not. */
  httpTest?: (c: Case) => (name: string, fn: () => Promise<void>) => void;
  /** Milliseconds for a build case. */
  timeout?: number;
}

export async function httpChecks(port: number, checks: HttpCheck[]): Promise<void> {
  const cookies = new Map<string, string>();
  for (const c of checks) {
    const headers: Record<string, string> = c.withCookies && cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
    // A server that accepts and never answers fails this check, with the server's log, not the test's timeout.
    const res = await fetch(`http://127.0.0.1:${port}${c.path}`, { headers, signal: AbortSignal.timeout(45_000) });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const body = await res.text();
    expect(res.status, `GET ${c.path}: ${body}`).toBe(c.status);
    if (c.contains) expect(body).toContain(c.contains);
    if (c.notContains) expect(body).not.toContain(c.notContains);
    if (c.header) expect(res.headers.get(c.header[0])).toBe(c.header[1]);
  }
}

/** Each `text` occurs exactly `n` times in the log. */
function countLines(log: string, counts: Record<string, number> | undefined): void {
  for (const [text, n] of Object.entries(counts ?? {})) expect(log.split(text).length - 1, `times "${text}" is logged:\n${log}`).toBe(n);
}

const fill = (s: string, vars: Record<string, string>) => s.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);

/** Every file and folder of the built application, relative, `/`-separated. */
const entries = (ws: string): string[] => (fs.readdirSync(ws, { recursive: true }) as string[]).map((e) => e.split(path.sep).join('/'));

/** Registers one describe per fixture, one build test and one HTTP test per case. */
export function fixtureSuite(names: string[], hooks: RuntimeHooks): void {
  let work: string;
  beforeAll(async () => {
    work = tmpDir(`rbp-fixtures-${hooks.type}-`);
    await hooks.setup?.(work);
  }, 600_000);
  afterAll(async () => {
    await hooks.teardown?.(work);
    await fs.promises.rm(work, { recursive: true, force: true });
  }, 300_000);

  if (hooks.skip) console.warn(`skipped: ${names.join(', ')}: ${hooks.skip}`);
  for (const name of names) {
    const spec = readFixture(name);
    describe.skipIf(Boolean(hooks.skip))(`${name}: ${spec.description}`, () => {
      spec.cases.forEach((c, i) => {
        const dir = () => path.join(work, `${name}-${i}`);
        const out = () => path.join(dir(), 'out');
        const e = c.expect;
        let built = false;
        const registerBuild = hooks.buildTest?.(c) ?? ((n: string, fn: () => Promise<void>, timeout: number) => it(n, fn, timeout));
        registerBuild(
          c.name,
          async () => {
            const app = hooks.app ? hooks.app(name, spec) : path.join(FIXTURES, name);
            const cache = hooks.cache ? await hooks.cache(c, path.join(dir(), 'cache')) : path.join(dir(), 'cache');
            const args = ['build', app, '--out', out(), '--type', hooks.type, '--cache', cache, ...envArgs(c.env ?? {})];
            if (c.task) args.push('--task', c.task);
            if (c.instance) args.push('--instance', c.instance);
            const operator = { ...hooks.operatorEnv?.(c), ...c.operatorEnv };
            const r = await rbp(args, { env: operator });
            if (e.build === 'pass') expect(r.exitCode, r.all).toBe(0);
            else expect(r.exitCode, r.all).not.toBe(0);
            const logVars = { app: path.join(out(), 'workspace'), ...hooks.launchVars?.(out()) };
            for (const l of e.log ?? []) expect(r.all).toContain(fill(l, logVars));
            for (const l of e.notLog ?? []) expect(r.all).not.toContain(fill(l, logVars));
            if (e.errorId) expect(r.all).toContain(`(error id: ${e.errorId})`);
            if (e.command) expect(r.all).toContain(e.command);
            countLines(r.all, e.count);
            if (e.build === 'fail') {
              expect(r.all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m); // no stack trace
              return;
            }
            if (e.rebuild) {
              const again = await rbp(args, { env: operator });
              expect(again.exitCode, again.all).toBe(0);
              for (const l of e.rebuild.log ?? []) expect(again.all).toContain(l);
              for (const l of e.rebuild.notLog ?? []) expect(again.all).not.toContain(l);
              countLines(again.all, e.rebuild.count);
            }
            const ws = path.join(out(), 'workspace');
            for (const f of e.files?.present ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(true);
            for (const f of e.files?.absent ?? []) expect(fs.existsSync(path.join(ws, f)), f).toBe(false);
            for (const [f, s] of Object.entries(e.files?.contains ?? {})) expect(fs.readFileSync(path.join(ws, f), 'utf8')).toContain(s);
            if (e.kept) expect(keptView(entries(ws), e.kept)).toEqual([...e.kept].sort());
            {
              // Every built case: its launch plan, snapshotted.
              const port = await freePort();
              const run = await rbp(['run', out(), '--dry-run', '--json', '--port', String(port), ...envArgs(c.runEnv)]);
              expect(run.exitCode, run.all).toBe(0);
              const dry = JSON.parse(run.stdout) as DryRun;
              const launch = dry.launch;
              const resolved = await registryResolved(r.all);
              expect(normalizedPlan(launch ?? { argv: dry.argv }, { out: out(), port, resolved })).toMatchSnapshot('launch plan');
              const vars = { app: ws, port: String(port), ...hooks.launchVars?.(out()) };
              if (e.launch) {
                if (!launch) throw new Error('the process printed no launch plan');
                expect(launch.argv).toEqual(e.launch.argv.map((a) => fill(a, vars)));
                expect(launch.cwd).toBe(ws);
                for (const [k, v] of Object.entries(e.launch.env ?? {})) expect(launch.env[k]).toBe(fill(v, vars));
                if (e.launch.server) expect(launch.server).toMatchObject(e.launch.server);
              }
              if (e.server) expect(launch?.server).toBe(e.server);
            }
            if (e.task) {
              const run = await rbp(['run', out(), ...envArgs(c.runEnv)], { env: hooks.runOperatorEnv?.() ?? {} });
              expect(run.exitCode, run.all).toBe(e.task.exitCode);
              for (const s of e.task.contains) expect(run.all).toContain(s);
            }
            built = true;
          },
          hooks.timeout ?? 600_000,
        );
        if (e.http) {
          // A backing service this machine lacks: the HTTP test fails in CI (.ci/run installs them), is skipped elsewhere, saying why.
          const missing = missingServices(c.services ?? []);
          const services = requirement(missing.length === 0, {
            what: missing.join(', '),
            how: `apt-get install ${missing.join(' ')}`,
            who: `${name} "${c.name}" over HTTP`,
          });
          const register = services.skip
            ? (n: string, fn: () => Promise<void>) => it.skip(n, fn)
            : missing.length
              ? (n: string) => it(n, () => void services.value())
              : (hooks.httpTest?.(c) ?? ((n: string, fn: () => Promise<void>) => it(n, fn, 120_000)));
          register(`${c.name}: serves over HTTP, stops on SIGTERM`, async () => {
            expect(built, 'the build of this case failed').toBe(true);
            const services = await Promise.all((c.services ?? []).map((n) => startService(n)));
            let served: Served;
            try {
              const serviceEnv = Object.assign({}, ...services.map((x) => x.env)) as Record<string, string>;
              served = await serve(out(), { ...hooks.runOperatorEnv?.(), ...serviceEnv, ...(c.runEnv ?? {}) }, (port) => httpChecks(port, e.http!));
            } finally {
              await Promise.all(services.map((x) => x.stop()));
            }
            // The server got SIGTERM and the launcher passed its status on (143 = killed by SIGTERM).
            expect(served.signal, served.output).toBeNull();
            // A clean stop. (FrankenPHP 1.11.1 alone hung here now and then, a request from the readiness
            // probe stuck since its start: scripts/tools/patches/frankenphp-1.11.1-request-during-init.patch.)
            expect(e.stopStatus === undefined ? [0, 143] : [e.stopStatus], served.output).toContain(served.status);
            for (const f of e.afterStop?.present ?? []) expect(fs.existsSync(path.join(out(), 'workspace', f)), f).toBe(true);
          });
        }
      });
    });
  }
}
