/**
 * The build end of our launch entrypoint (the run end is entry.ts): `installLaunch` checks the request
 * flow (a broken cache VCL fails the build), copies the buildpack's own bin/launch into a launch layer
 * whose metadata records what the build decided, and declares the process: the direct launch script
 * (direct.ts) when the runtime offers one and its command allows it, else that launch run by a
 * Node.js the run image is known to have, or one installed for it (launcher-node.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BuildContext } from '../cnb/context.ts';
import { DRY_RUN_LABEL, writeLaunchToml, type ProcessDef } from '../cnb/launch.ts';
import { writeToml } from '../cnb/toml.ts';
import { Logger } from '../log.ts';
import { DECISION_FILE, type LaunchDecision } from './decision.ts';
import { NODE_LAUNCHER_FILE, planDirect, type DirectPlan } from './direct.ts';
import { forgetLauncherNode, installLauncherNode, knownLauncherNode, type RuntimeNode } from './launcher-node.ts';
import type { RuntimeLaunch } from './plan.ts';
import { isActive } from './request-flow/activation.ts';
import { checkRequestFlowAtBuild } from './request-flow/build-check.ts';

export interface LaunchOptions {
  /**
   * The runtime's own Node.js, installed in one of its launch layers (the node runtime's): the
   * launcher runs on it when it is recent enough, and nothing else is installed.
   */
  node?: RuntimeNode;
  /**
   * The runtime's launch, for a direct launch (direct.ts): its command planned now, with the build's
   * variables, and written as a POSIX sh script that starts the server with no Node.js in front.
   */
  direct?: RuntimeLaunch;
  /** Processes beside `web`. */
  processes?: ProcessDef[];
  log?: Logger;
}

/**
 * Checks the request flow, decides how the app is launched and writes the `launcher` layer and `web`:
 * - a direct launch (direct.ts) when the runtime offers one and its command allows it: the process
 *   is the script, and a Node.js for the launcher comes only when something already needs it;
 * - else the Node.js launcher: `<node> <launcher>/bin/launch`, on the Node.js launcher-node.ts picks.
 * Returns the process's command file.
 *
 * Not `async` on purpose: when no Node.js needs installing (a direct launch without one, the runtime's,
 * or RBP_LAUNCHER_NODE, which rbp always sets) everything is done, and every error thrown, before it
 * returns, so a build that calls it without `await` still works.
 */
export function installLaunch(ctx: BuildContext, decision: LaunchDecision, opts: LaunchOptions = {}): Promise<string> {
  const log = opts.log ?? new Logger();
  checkRequestFlowAtBuild(ctx.appDir, ctx.env, log);
  const extra = opts.processes ?? [];
  const direct = opts.direct ? planDirect(opts.direct, ctx.env) : undefined;
  // What makes the image need a Node.js for the launcher, whatever the run environment says.
  const needs = [...(isActive(ctx.env, ctx.appDir) ? ['the request flow is active'] : []), ...(direct && !direct.ok ? [direct.why] : [])];
  const known = knownLauncherNode({ runtimeNode: opts.node, env: ctx.env, log });
  const write = (node: string | undefined) => (direct?.ok ? writeDirect(ctx, decision, direct, node, extra, log) : writeLauncher(ctx, decision, node!, extra));
  if (direct && !direct.ok) log.info(`launch: through the Node.js launcher: ${direct.why}`);
  if (known || (direct?.ok && !needs.length)) {
    forgetLauncherNode(ctx.layers, log);
    return Promise.resolve(write(known?.path));
  }
  if (direct?.ok) log.info(`launch: the image needs Node.js for the launcher: ${needs.join('; ')}`);
  return installLauncherNode({ layers: ctx.layers, env: ctx.env, log }).then((node) => write(node.path));
}

function launcherLayer(ctx: BuildContext, decision: LaunchDecision): string {
  // `launch` is a reserved layer name; the entrypoint layer is `launcher`.
  const layer = ctx.layers.fresh('launcher', { launch: true }, decision);
  fs.mkdirSync(path.join(layer.path, 'bin'), { recursive: true });
  // The decision also goes inside the layer: an app image holds layer folders, not their .toml
  // (the lifecycle keeps layer metadata in an image label), and the entrypoint must find it there.
  writeToml(path.join(layer.path, DECISION_FILE), { metadata: decision });
  return layer.path;
}

function writeProcesses(ctx: BuildContext, web: string[], dryRunAware: boolean, extra: ProcessDef[]): void {
  const processes: ProcessDef[] = [{ type: 'web', command: web, args: [], default: true }, ...extra];
  writeLaunchToml(path.join(ctx.layersDir, 'launch.toml'), {
    // Only web runs this launch entrypoint, which prints its plan for a dry run; other processes are commands of their own.
    labels: dryRunAware ? [{ key: DRY_RUN_LABEL, value: 'web' }] : [],
    processes,
  });
}

function copyNodeLauncher(ctx: BuildContext, target: string): void {
  fs.copyFileSync(path.join(ctx.buildpackDir, 'bin', 'launch'), target);
  fs.chmodSync(target, 0o755);
}

function writeLauncher(ctx: BuildContext, decision: LaunchDecision, node: string, extra: ProcessDef[]): string {
  const target = path.join(launcherLayer(ctx, decision), 'bin', 'launch');
  copyNodeLauncher(ctx, target);
  // An absolute node: the run image's PATH may hold no node, or another one.
  writeProcesses(ctx, [node, target], true, extra);
  return target;
}

function writeDirect(
  ctx: BuildContext,
  decision: LaunchDecision,
  direct: Extract<DirectPlan, { ok: true }>,
  node: string | undefined,
  extra: ProcessDef[],
  log: Logger,
): string {
  const bin = path.join(launcherLayer(ctx, decision), 'bin');
  const target = path.join(bin, 'launch');
  fs.writeFileSync(target, direct.script(node), { mode: 0o755 });
  if (node) copyNodeLauncher(ctx, path.join(bin, NODE_LAUNCHER_FILE));
  // Without a Node.js nothing can print the launch plan: rbp run --dry-run shows the process alone.
  writeProcesses(ctx, [target], node !== undefined, extra);
  const inputs = direct.reads.length ? `; ${direct.reads.join(', ')} as at build` : '';
  log.info(
    `launch: direct, the launch script starts ${direct.argv0} itself${inputs}; ${node ? `the Node.js launcher (${node}) takes over for a request flow or a dry run` : 'no Node.js in the image'}`,
  );
  return target;
}
