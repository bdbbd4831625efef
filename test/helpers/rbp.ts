/** Test helpers: run the built rbp CLI, find free ports, make temporary directories. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';
import { settledFlag } from './settled.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RBP = path.join(ROOT, 'dist', 'rbp.js');
export const FIXTURES = path.join(ROOT, 'fixtures');

export interface RbpResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as printed. */
  all: string;
}

/**
 * PATH without the node_modules/.bin folders `npm test` and `npx` put first: the repository's own
 * tools (tsc, eslint…) are not on a build machine, and an app's build must not find them.
 */
export const MACHINE_PATH = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((d) => !d.endsWith(`${path.sep}node_modules${path.sep}.bin`))
  .join(path.delimiter);

/** Runs `node dist/rbp.js ...args`; never throws on a non-zero exit. NO_COLOR keeps logs plain. */
export async function rbp(args: string[], opts: Options = {}): Promise<RbpResult> {
  // `node --`: else Node.js 20 reads an `--env-file` meant for rbp itself (as the bin's shebang does).
  const env = { NO_COLOR: '1', PATH: MACHINE_PATH, ...(opts.env ?? {}) };
  const r = await execa('node', ['--', RBP, ...args], { reject: false, all: true, ...opts, env });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), all: String(r.all ?? '') };
}

/**
 * Ports for rbp and the servers it starts, which bind them later than this check: each test worker
 * (VITEST_POOL_ID) takes them in turn from a range of its own, below the kernel's ephemeral ports
 * (32768 and up), so two test files running at once are never handed the same port, and neither is
 * a socket the kernel numbers itself. Each is checked free before it is handed out.
 */
const PORTS_PER_WORKER = 500;
let nextPort = 0;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.unref();
    s.once('error', () => resolve(false));
    s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
  });
}

/** This worker's range of ports: [base, base + size). */
export function workerPorts(): { base: number; size: number } {
  // RBP_TEST_PORT_SLOT moves a whole test run to other ranges, for two runs on one machine at once
  // (two checkouts of the project); each run's workers stay apart within it.
  const slot = Number(process.env.RBP_TEST_PORT_SLOT ?? 0) || 0;
  const worker = (Math.max(0, Number(process.env.VITEST_POOL_ID ?? 1) - 1) + slot * 2) % 24;
  return { base: 20_000 + worker * PORTS_PER_WORKER, size: PORTS_PER_WORKER };
}

/** A port nothing listens on right now, in this worker's own range (see above). */
export async function freePort(): Promise<number> {
  const { base, size } = workerPorts();
  for (let tried = 0; tried < size; tried++) {
    const port = base + (nextPort++ % size);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${base}-${base + size - 1}`);
}

export function tmpDir(prefix = 'rbp-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A temporary app folder holding `files` (relative path → content). */
export function appWith(files: Record<string, string>): string {
  const dir = tmpDir('rbp-app-');
  for (const [f, c] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), c);
  }
  return dir;
}

/** Copies a fixture app to a temporary directory, so a test may change it. */
export function copyFixture(name: string): string {
  const dst = path.join(tmpDir(), name);
  fs.cpSync(path.join(FIXTURES, name), dst, { recursive: true });
  return dst;
}

/** Whether a command is on PATH (for tests that need a tool this machine may not have). */
export async function have(cmd: string): Promise<boolean> {
  const r = await execa('sh', ['-c', `command -v ${cmd}`], { reject: false });
  return r.exitCode === 0;
}

/** `--env K=V` arguments for rbp. */
export function envArgs(env: Record<string, string> = {}): string[] {
  return Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
}

/** Waits until something answers HTTP on the port; fails early when `alive()` says the app is gone. */
export async function waitForHttp(port: number, alive: () => boolean, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (!alive()) throw new Error('the app exited before it listened');
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`nothing answered on port ${port} within ${timeoutMs}ms`);
}

export interface Served {
  status: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Starts `rbp run OUT` on a free port, runs `checks`, sends SIGTERM and returns how rbp exited. */
export async function serve(out: string, env: Record<string, string>, checks: (port: number) => Promise<void>, extraArgs: string[] = []): Promise<Served> {
  const port = await freePort();
  const child = spawn('node', [RBP, 'run', out, '--port', String(port), ...extraArgs, ...envArgs(env)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: MACHINE_PATH, NO_COLOR: '1' },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer | string) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer | string) => (output += d.toString()));
  const exited = new Promise<{ status: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (status, signal) => resolve({ status, signal })),
  );
  const ended = settledFlag(exited);
  try {
    await waitForHttp(port, () => !ended()).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${output}`);
    });
    await checks(port).catch((e: unknown) => {
      (e as Error).message = `${(e as Error).message}\n--- rbp run's output:\n${output}`;
      throw e;
    });
  } finally {
    if (!ended()) child.kill('SIGTERM');
  }
  return { ...(await exited), output };
}
