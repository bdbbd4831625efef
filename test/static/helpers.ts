/**
 * Helpers for the static runtime's integration tests: fixture expectations (test.json), builds and
 * launches through the real rbp CLI, the real tools (RBP_TOOL_*, see test/helpers/tool-cache.ts), and
 * a dependency mirror (RBP_DEPENDENCY_MIRROR layout) holding the real Static Web Server and Hugo
 * binaries packed the way their upstream releases are: the buildpack installs them through its
 * installer (mirror, checksum, unpack) and every server it starts is the real one.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import fg from 'fast-glob';
import * as tar from 'tar';
import { ociArch } from '../../lib/cnb/descriptor.ts';
import { envArgs, RBP, rbp, tmpDir, type RbpResult } from '../helpers/rbp.ts';
import { settledFlag } from '../helpers/settled.ts';
import { readFixture, type Case, type HttpCheck } from '../helpers/fixture-spec.ts';
import { realTool, type RealTool } from '../helpers/tool-cache.ts';

export type { HttpCheck } from '../helpers/fixture-spec.ts';

/** A static fixture's one case (test/helpers/fixture-spec.ts, the schema of every test.json): its variables and what must happen. */
export type StaticFixture = Case['expect'] & { env: Record<string, string> };

export function spec(name: string): StaticFixture {
  const c = readFixture(name).cases[0]!;
  return { env: c.env ?? {}, ...c.expect };
}

/** The contract's Caddy (2.11.2, from the tool cache): never Debian's. */
export const contractCaddy = (who: string): RealTool => realTool('RBP_TOOL_CADDY', who);
export const swsTool = (who: string): RealTool => realTool('RBP_TOOL_STATIC_WEB_SERVER', who);

export const SWS_VERSION = '2.42.0';
const SWS_TRIPLE: Record<string, string> = { amd64: 'x86_64-unknown-linux-gnu', arm64: 'aarch64-unknown-linux-gnu' };

/**
 * Adds `<id>/<version>/<file>` (a .tar.gz of `files`, each `[name in the archive, source file]`) and
 * its `.sha256` to a mirror folder.
 */
async function addArchive(mirror: string, id: string, version: string, file: string, files: [string, string][]): Promise<void> {
  const stage = tmpDir('rbp-mirror-stage-');
  for (const [name, source] of files) {
    fs.mkdirSync(path.dirname(path.join(stage, name)), { recursive: true });
    fs.copyFileSync(source, path.join(stage, name));
    fs.chmodSync(path.join(stage, name), 0o755);
  }
  const dir = path.join(mirror, id, version);
  fs.mkdirSync(dir, { recursive: true });
  const archive = path.join(dir, file);
  await tar.create({ gzip: true, file: archive, cwd: stage }, fs.readdirSync(stage));
  fs.rmSync(stage, { recursive: true, force: true });
  const sha = crypto.createHash('sha256').update(fs.readFileSync(archive)).digest('hex');
  fs.writeFileSync(`${archive}.sha256`, `${sha}  ${file}\n`);
}

/**
 * The Caddy the launcher tests (test/launch) serve with: RBP_TOOL_CADDY, else none. Debian's caddy
 * on PATH (2.6.2) is not the contract's, so it is no longer picked up.
 */
export async function caddyTool(): Promise<string | undefined> {
  return process.env.RBP_TOOL_CADDY?.trim() || undefined;
}

const mirrors = new Map<string, Promise<string>>();

/**
 * A mirror holding the real Static Web Server (RBP_TOOL_STATIC_WEB_SERVER) as its release archive
 * (`static-web-server-v<X>-<triple>/static-web-server`), made once per test file.
 */
export function swsMirror(sws: string): Promise<string> {
  const key = `sws:${sws}`;
  if (!mirrors.has(key)) {
    mirrors.set(
      key,
      (async () => {
        const mirror = tmpDir('rbp-sws-mirror-');
        const top = `static-web-server-v${SWS_VERSION}-${SWS_TRIPLE[ociArch()]}`;
        await addArchive(mirror, 'static-web-server', SWS_VERSION, `${top}.tar.gz`, [[`${top}/static-web-server`, sws]]);
        return mirror;
      })(),
    );
  }
  return mirrors.get(key)!;
}

/** Adds real Hugo binaries (by their full version) to a mirror, as Hugo's release archives. */
export async function addHugo(mirror: string, binaries: Record<string, string>): Promise<string> {
  for (const [version, bin] of Object.entries(binaries)) {
    await addArchive(mirror, 'hugo', version, `hugo_extended_${version}_linux-${ociArch()}.tar.gz`, [['hugo', bin]]);
  }
  return mirror;
}

/**
 * `rbp build APP --type static`. The build sees only the operator tools `operator` names: the tests'
 * own RBP_TOOL_* (set for the whole run by scripts/tools/env.sh) are blanked, which counts as unset.
 */
export async function build(
  app: string,
  out: string,
  env: Record<string, string>,
  operator: Record<string, string>,
  cache?: string,
  extraArgs: string[] = [],
): Promise<RbpResult> {
  const blank = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('RBP_TOOL_'))
      .map((k) => [k, '']),
  );
  return rbp(['build', app, '--type', 'static', '--out', out, ...(cache ? ['--cache', cache] : []), ...extraArgs, ...envArgs(env)], {
    env: { ...blank, ...operator },
  });
}

/** `rbp run OUT --dry-run`: the launch plan of our entrypoint. */
export async function dryRun(
  out: string,
  port: number,
  env: Record<string, string> = {},
): Promise<{ argv: string[]; env: Record<string, string>; port: number; server: string }> {
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
  child.all.on('data', (d: Buffer) => (all += d.toString()));
  const exited = settledFlag(child);
  const get = async (p: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, { redirect: 'manual' });
    return { status: r.status, body: await r.text(), headers: r.headers };
  };
  const stop = async () => {
    if (!exited()) child.kill('SIGTERM');
    await child;
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await get('/');
      break;
    } catch {
      if (exited() || Date.now() > deadline) {
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
