/** Test helpers: run the built rbp CLI, find free ports, make temporary directories. */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';

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

/** Runs `node dist/rbp.js ...args`; never throws on a non-zero exit. NO_COLOR keeps logs plain. */
export async function rbp(args: string[], opts: Options = {}): Promise<RbpResult> {
  const r = await execa('node', [RBP, ...args], { reject: false, all: true, ...opts, env: { NO_COLOR: '1', ...(opts.env ?? {}) } });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), all: String(r.all ?? '') };
}

/** A port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export function tmpDir(prefix = 'rbp-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
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
