/**
 * Helpers for the static runtime's integration tests: fixture expectations (test.json), builds and
 * launches through the real rbp CLI, and a dependency mirror holding a fixture archive of Static Web
 * Server. That archive only exercises the installer (download, checksum, unpack, cache): the tests
 * that use it look at the command line with `rbp run --dry-run` and never start it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import fg from 'fast-glob';
import * as tar from 'tar';
import { ociArch } from '../../lib/cnb/descriptor.ts';
import { envArgs, FIXTURES, RBP, rbp, tmpDir, type RbpResult } from '../helpers/rbp.ts';

export interface HttpCheck {
  path: string;
  status: number;
  contains?: string;
  header?: [string, string];
}

export interface FixtureSpec {
  description: string;
  env: Record<string, string>;
  server?: 'static-web-server' | 'caddy-run' | 'caddy-file-server';
  command?: string;
  checks?: HttpCheck[];
  /** The exact content of the built application (files and folders, relative). */
  kept?: string[];
  log?: string[];
  fails?: { stage: 'detect' | 'build'; message: string };
}

export function spec(name: string): FixtureSpec {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name, 'test.json'), 'utf8')) as FixtureSpec;
}

/** The Caddy this machine has: RBP_TOOL_CADDY, else caddy on PATH (Debian's 2.6.2). */
export async function caddyTool(): Promise<string | undefined> {
  if (process.env.RBP_TOOL_CADDY) return process.env.RBP_TOOL_CADDY;
  const r = await execa('sh', ['-c', 'command -v caddy'], { reject: false });
  return r.exitCode === 0 ? String(r.stdout).trim() : undefined;
}

const SWS_VERSION = '2.42.0';
const SWS_TRIPLE: Record<string, string> = { amd64: 'x86_64-unknown-linux-gnu', arm64: 'aarch64-unknown-linux-gnu' };

/** A mirror (RBP_DEPENDENCY_MIRROR layout) holding a Static Web Server fixture archive and its sha256. */
export async function swsMirror(): Promise<string> {
  const mirror = tmpDir('rbp-sws-mirror-');
  const top = `static-web-server-v${SWS_VERSION}-${SWS_TRIPLE[ociArch()]}`;
  const stage = tmpDir('rbp-sws-stage-');
  fs.mkdirSync(path.join(stage, top));
  fs.writeFileSync(path.join(stage, top, 'static-web-server'), `#!/bin/sh\necho "static-web-server ${SWS_VERSION} (fixture archive for installer tests; never serves)"\n`, { mode: 0o755 });
  const dir = path.join(mirror, 'static-web-server', SWS_VERSION);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${top}.tar.gz`);
  await tar.create({ gzip: true, file, cwd: stage }, [top]);
  const sha = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  fs.writeFileSync(`${file}.sha256`, `${sha}  ${top}.tar.gz\n`);
  return mirror;
}

export async function build(app: string, out: string, env: Record<string, string>, operator: Record<string, string>, cache?: string, extraArgs: string[] = []): Promise<RbpResult> {
  return rbp(['build', app, '--type', 'static', '--out', out, ...(cache ? ['--cache', cache] : []), ...extraArgs, ...envArgs(env)], { env: operator });
}

/** `rbp run OUT --dry-run`: the launch plan of our entrypoint. */
export async function dryRun(out: string, port: number, env: Record<string, string> = {}): Promise<{ argv: string[]; env: Record<string, string>; port: number; server: string }> {
  const r = await rbp(['run', out, '--dry-run', '--port', String(port), ...envArgs(env)]);
  if (r.exitCode !== 0) throw new Error(`rbp run --dry-run failed:\n${r.all}`);
  return (JSON.parse(r.stdout) as { launch: { argv: string[]; env: Record<string, string>; port: number; server: string } }).launch;
}

/** The built application's files and folders, relative, sorted. */
export function workspaceEntries(out: string): string[] {
  return fg.sync('**', { cwd: path.join(out, 'workspace'), dot: true, onlyFiles: false }).sort();
}

export interface Served {
  get(p: string): Promise<{ status: number; body: string; headers: Headers }>;
  stop(): Promise<void>;
  output(): string;
}

/** Starts `rbp run OUT --port P` and waits until it answers HTTP. */
export async function serve(out: string, port: number, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Served> {
  const child = execa('node', [RBP, 'run', out, '--port', String(port), ...envArgs(env)], { reject: false, all: true, env: { NO_COLOR: '1' } });
  let all = '';
  child.all?.on('data', (d: Buffer) => (all += d.toString()));
  let exited = false;
  void child.then(() => (exited = true));
  const get = async (p: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, { redirect: 'manual' });
    return { status: r.status, body: await r.text(), headers: r.headers };
  };
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await child;
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await get('/');
      break;
    } catch {
      if (exited || Date.now() > deadline) {
        await stop();
        throw new Error(`the app did not answer on port ${port}:\n${all}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { get, stop, output: () => all };
}

export async function runChecks(s: Served, checks: HttpCheck[]): Promise<void> {
  const { expect } = await import('vitest');
  for (const c of checks) {
    const r = await s.get(c.path);
    expect({ path: c.path, status: r.status }).toEqual({ path: c.path, status: c.status });
    if (c.contains) expect(r.body).toContain(c.contains);
    if (c.header) expect(r.headers.get(c.header[0])).toBe(c.header[1]);
  }
}

export { envArgs };
