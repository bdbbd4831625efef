/**
 * Helpers for the request-flow tests: the test buildpack fixtures/flow-buildpack bundled the way
 * `npm run build` bundles ours, builds of the flow fixture apps with it, and `rbp run` in the
 * background with its output collected.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { envArgs, FIXTURES, RBP, rbp, ROOT, tmpDir, type RbpResult } from '../helpers/rbp.ts';
import { settledFlag } from '../helpers/settled.ts';

let bundled: Promise<string> | undefined;

/** dist-like directory of the test buildpack: buildpack.toml + bin/{detect,build,launch} + launch/ (the launch's sh). */
export function flowBuildpack(): Promise<string> {
  bundled ??= (async () => {
    const src = path.join(FIXTURES, 'flow-buildpack');
    const out = path.join(tmpDir('rbp-flow-bp-'), 'flow');
    fs.mkdirSync(path.join(out, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(src, 'buildpack.toml'), path.join(out, 'buildpack.toml'));
    fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "commonjs" }\n');
    fs.cpSync(path.join(ROOT, 'lib', 'launch', 'sh'), path.join(out, 'launch'), { recursive: true });
    for (const entry of ['detect', 'build', 'launch']) {
      const outfile = path.join(out, 'bin', entry);
      await esbuild.build({
        entryPoints: [path.join(src, 'src', `${entry}.ts`)],
        outfile,
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        logLevel: 'warning',
        banner: { js: '#!/usr/bin/env node' },
      });
      fs.chmodSync(outfile, 0o755);
    }
    return out;
  })();
  return bundled;
}

/** `rbp build` of a fixture app with the test buildpack; FLOW_RUNTIME picks the runtime's port rules. */
export async function buildFlowApp(
  fixture: string,
  opts: { runtime?: string; env?: Record<string, string> } = {},
): Promise<{ out: string; result: RbpResult }> {
  const bp = await flowBuildpack();
  const out = path.join(tmpDir('rbp-flow-out-'), 'out');
  const envArgs = Object.entries({ FLOW_RUNTIME: opts.runtime ?? 'node', ...opts.env }).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const result = await rbp(['build', path.join(FIXTURES, fixture), '--out', out, '--buildpack', bp, ...envArgs]);
  return { out, result };
}

/** What these tests read of the plan `rbp run --dry-run` prints (lib/launch/plan.ts, planJson). */
export interface DryRunLaunch {
  argv: string[];
  env: Record<string, string>;
  requestFlow: unknown;
  processes: { name: string; listen: number; forward?: number; secrets?: string[] }[];
}

/** `rbp run --dry-run`: the launch entrypoint's own plan (none when rbp failed). */
export async function dryRun(
  out: string,
  port: number,
  env: Record<string, string> = {},
  operator: Record<string, string> = {},
): Promise<{ result: RbpResult; launch: DryRunLaunch | undefined }> {
  const result = await rbp(['run', out, '--port', String(port), '--dry-run', ...envArgs(env)], { env: operator });
  return { result, launch: result.exitCode === 0 ? JSON.parse(result.stdout).launch : undefined };
}

export interface Running {
  proc: ResultPromise;
  output: () => string;
  /** Resolves with rbp's exit status. */
  exited: Promise<number>;
  stop(): Promise<number>;
}

/** `rbp run OUT --port PORT` in the background; `operator` are RBP_* variables of rbp's own environment. */
export function startRun(out: string, port: number, env: Record<string, string> = {}, operator: Record<string, string> = {}): Running {
  // No SIGKILL from execa 5 s after stop(): rbp's own grace period (RBP_STOP_TIMEOUT + 5 s) ends a
  // process that outlives SIGTERM (FrankenPHP sometimes does); killing rbp first would leave that
  // process, in its own group, holding the output open.
  const proc = execa('node', [RBP, 'run', out, '--port', String(port), ...envArgs(env)], {
    reject: false,
    all: true,
    env: { NO_COLOR: '1', ...operator },
    forceKillAfterDelay: false,
  });
  let text = '';
  proc.all.on('data', (d: Buffer) => (text += d.toString()));
  const exited = proc.then((r) => r.exitCode ?? -1);
  return {
    proc,
    output: () => text,
    exited,
    async stop() {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** GET until the port answers (or the process ends, or the time runs out). */
export async function waitHttp(port: number, run: Running, path_ = '/', timeoutMs = 30_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  const done = settledFlag(run.exited);
  for (;;) {
    if (done()) throw new Error(`rbp run exited before port ${port} answered:\n${run.output()}`);
    try {
      return await fetch(`http://127.0.0.1:${port}${path_}`);
    } catch {
      if (Date.now() > deadline) throw new Error(`port ${port} did not answer in ${timeoutMs}ms:\n${run.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Until the output shows `text` (the launcher logs a step after the port already answers). */
export async function waitOutput(run: Running, text: string | RegExp, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const has = () => (typeof text === 'string' ? run.output().includes(text) : text.test(run.output()));
  while (!has()) {
    if (Date.now() > deadline) throw new Error(`output never showed ${text}:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return run.output();
}

export function get(port: number, p = '/'): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${p}`);
}

export { envArgs };
