/**
 * The Node.js that runs the launch planner (planner.ts, plan.cjs): the run image of a static or PHP
 * app may have no Node.js at all. In order:
 * 1. the runtime's own Node.js, when its buildpack gives it (the node runtime installs one into a
 *    launch layer), if it is recent enough to run the planner;
 * 2. the one the launch environment names with RBP_LAUNCHER_NODE (rbp run gives its own; rbp build
 *    sets it to say so): given at build, the build counts on the launch having it;
 * 3. else, when the launch needs one, Node.js of the contract's LTS line, installed from the npm
 *    registry's official builds into the launch layer `launcher-node`, cached, and reused while the
 *    resolved release is unchanged.
 */
import { raw } from '../config/read.ts';
import { spawnSync } from 'node:child_process';
import { finished } from '../child-result.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../cnb/layers.ts';
import { installTool, type ToolOrigin } from '../deps/install.ts';
import { nodePackage, npmRegistrySource, toolRegistry } from '../deps/npm.ts';
import { operatorVariable } from '../deps/operator.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';

export const LAUNCHER_NODE_VARIABLE = 'RBP_LAUNCHER_NODE';
export const LAUNCHER_NODE_LAYER = 'launcher-node';
/** The contract's LTS line (Node.js 24). */
export const LAUNCHER_NODE_LINE = '24.x';
/** The planner is bundled for node20: older releases may lack what it uses. */
export const LAUNCHER_NODE_MIN_MAJOR = 20;

export interface LauncherNode {
  /** Absolute path of the node executable the launch process starts with. */
  path: string;
  version: string | undefined;
  source: 'runtime' | 'operator' | ToolOrigin;
}

/**
 * The runtime's Node.js as its buildpack installed it: the version is the one it resolved and
 * checked, so it is not asked again (`node --version` from a build costs a process start).
 */
export interface RuntimeNode {
  path: string;
  /** Undefined when its buildpack could not tell (an operator's node that printed none): then it is asked. */
  version?: string;
}

export type NodeProbe = { ok: true; version: string } | { ok: false; problem: string; version?: string };

/** Whether a Node.js of this version can run the planner. */
function versionProbe(file: string, version: string): NodeProbe {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? 0);
  return major >= LAUNCHER_NODE_MIN_MAJOR
    ? { ok: true, version }
    : { ok: false, version, problem: `${file} is Node.js ${version}; the planner needs ${LAUNCHER_NODE_MIN_MAJOR} or later` };
}

/** Runs `file --version`: a Node.js the planner can run on, or why not. */
export function probeNode(file: string): NodeProbe {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file);
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return { ok: false, problem: stat ? `${file} is not executable` : `${file} does not exist` };
  }
  if (!stat.isFile()) return { ok: false, problem: `${file} is not a file` };
  const r = finished(spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] }));
  const out = (r.stdout ?? '').trim();
  const m = /^v(\d+)\.\d+\.\d+/.exec(out);
  if (r.error || r.status !== 0 || !m) {
    const said = r.error ? r.error.message : `\`${file} --version\` printed ${JSON.stringify(out.split('\n')[0] ?? '')}`;
    return { ok: false, problem: `${file} is not a Node.js executable that runs here (${said})` };
  }
  return versionProbe(file, m[0].slice(1));
}

/** The runtime's Node.js, when the planner can run on it. */
export function usableRuntimeNode(runtimeNode: RuntimeNode, log: Logger): LauncherNode | undefined {
  const { path: file } = runtimeNode;
  const p = runtimeNode.version ? versionProbe(file, runtimeNode.version) : probeNode(file);
  if (p.ok) {
    log.info(`launch: planned at launch on the runtime's Node.js ${p.version}`);
    return { path: file, version: p.version, source: 'runtime' };
  }
  log.info(`launch: not planned on the runtime's Node.js: ${p.problem}`);
  return undefined;
}

/** RBP_LAUNCHER_NODE at build, checked: the Node.js the launch environment will name. */
export function operatorNode(env: Record<string, string | undefined>, log: Logger): LauncherNode | undefined {
  const value = raw(env, LAUNCHER_NODE_VARIABLE);
  if (!value) return undefined;
  const p: NodeProbe = path.isAbsolute(value) ? probeNode(value) : { ok: false, problem: `${value} is not an absolute path` };
  if (!p.ok) {
    throw new UserError({
      id: 'launch/launcher-node/unusable',
      title: `${LAUNCHER_NODE_VARIABLE} does not name a Node.js the launch planner can run on`,
      seen: { what: LAUNCHER_NODE_VARIABLE, value, where: 'the operator configuration' },
      rule: `${LAUNCHER_NODE_VARIABLE} is the absolute path of a Node.js ${LAUNCHER_NODE_MIN_MAJOR} or later that the launch environment provides (and the build image too: the build checks it there)`,
      fix: `point ${LAUNCHER_NODE_VARIABLE} at such a node executable, or unset it to let the build install Node.js ${LAUNCHER_NODE_LINE} for the launch`,
      details: [p.problem],
    });
  }
  log.info(`launch: planned at launch on the Node.js the launch environment names (${LAUNCHER_NODE_VARIABLE}=${value}, ${p.version})`);
  return { path: value, version: p.version, source: 'operator' };
}

/** Drops a `launcher-node` layer left by an earlier build: it would be exported and cached for nothing. */
export function forgetLauncherNode(layers: Layers, log: Logger): void {
  const before = layers.restored(LAUNCHER_NODE_LAYER);
  if (!before.metadata && !before.hasContents) return;
  layers.remove(LAUNCHER_NODE_LAYER);
  log.detail(`layer ${LAUNCHER_NODE_LAYER} of an earlier build removed: the launch does not need its own Node.js`);
}

/** Node.js of the LTS line in the launch layer `launcher-node`, reused while its metadata (release, checksum) is unchanged. */
export async function installLauncherNode(opts: { layers: Layers; env: Record<string, string | undefined>; log: Logger }): Promise<LauncherNode> {
  const { layers, log } = opts;
  log.info(`no Node.js given by ${LAUNCHER_NODE_VARIABLE}: installing Node.js ${LAUNCHER_NODE_LINE} for the launch`);
  // RBP_TOOL_NODE names a node of the build image, which says nothing about the run image.
  const env = { ...opts.env, [operatorVariable('node')]: undefined };
  const registry = toolRegistry(env);
  const tool = await log.step(`Node.js ${LAUNCHER_NODE_LINE} for the launch (layer ${LAUNCHER_NODE_LAYER})`, async () => {
    const t = await installTool({
      layers,
      layerName: LAUNCHER_NODE_LAYER,
      source: npmRegistrySource({ pkg: nodePackage(), id: 'node', bin: 'bin/node', log, ...(registry ? { registry } : {}) }),
      constraint: LAUNCHER_NODE_LINE,
      origin: { what: 'the launch planner (Node.js LTS line of the contract)' },
      types: { launch: true },
      env,
      log,
      command: 'node',
    });
    if (t.layer && t.source !== 'cache') trimNodeLayer(t.layer.path, log);
    return t;
  });
  log.info(
    `launch: Node.js ${tool.version} ${tool.source === 'cache' ? `reused from the cache (layer ${LAUNCHER_NODE_LAYER}: ${tool.layer?.reason})` : `installed into the layer ${LAUNCHER_NODE_LAYER}`}`,
  );
  return { path: tool.path, version: tool.version, source: tool.source };
}

/** What the official build carries that running the planner never uses: C headers (for native addons) and docs. */
const UNUSED = ['include', 'share', 'CHANGELOG.md', 'README.md'];

/** Keeps the image small: the headers alone are a third of the release. */
function trimNodeLayer(dir: string, log: Logger): void {
  let bytes = 0;
  for (const name of UNUSED) {
    const p = path.join(dir, name);
    if (!fs.existsSync(p)) continue;
    bytes += sizeOf(p);
    fs.rmSync(p, { recursive: true, force: true });
  }
  if (bytes) log.detail(`left out ${UNUSED.join(', ')} (headers and docs the planner does not use): ${Math.round(bytes / 1e6)} MB`);
}

function sizeOf(p: string): number {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, f) => n + sizeOf(path.join(p, f)), 0);
}
