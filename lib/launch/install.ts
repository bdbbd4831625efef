/**
 * The build end of the launch: `installLaunch` checks the request flow (a broken cache VCL fails the
 * build), writes the `launcher` layer and declares the `web` process as `rbp-launch`, a command the
 * launch finds on PATH (a launch layer's bin/ is on it, as the Buildpack API says), so that
 * launch.toml names no folder of the build. The layer holds:
 * - bin/rbp-launch and supervise.sh (lib/launch/sh/): the launch itself, POSIX sh, which carries out
 *   a plan it reads as data;
 * - plan.cjs, the planner (the buildpack's bin/launch), and decision.toml, what the build decided;
 * - planner-node, a relative link to the Node.js that runs the planner when the image has one of its
 *   own: the runtime's (the node runtime's), or one installed because the launch needs it and the
 *   operator named none (launcher-node.ts);
 * - stored-plan.sh, for a runtime that offers it (static, phpserver): the plan made now, which a
 *   launch with no Node.js follows (stored-plan.ts).
 * rbp run gives the planner its own Node.js (RBP_LAUNCHER_NODE) when the layer links none.
 * Nothing in the layer names a folder of the build: the scripts find their layer from their own path.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BuildContext } from '../cnb/context.ts';
import { DRY_RUN_LABEL, writeLaunchToml, type ProcessDef } from '../cnb/launch.ts';
import { writeToml } from '../cnb/toml.ts';
import { Logger } from '../log.ts';
import { DECISION_FILE, type LaunchDecision } from './decision.ts';
import { forgetLauncherNode, installLauncherNode, operatorNode, usableRuntimeNode, type RuntimeNode } from './launcher-node.ts';
import type { RuntimeLaunch } from './plan.ts';
import { isActive } from './request-flow/activation.ts';
import { checkRequestFlowAtBuild } from './request-flow/build-check.ts';
import { STORED_PLAN_FILE, storePlan } from './stored-plan.ts';

/** The `web` process's command: found on PATH in the launcher layer's bin/. */
export const LAUNCH_COMMAND = 'rbp-launch';
/** Where a built buildpack keeps the sh of lib/launch/sh/ (scripts/build.mjs copies it there). */
export const SH_DIR = 'launch';
export const LAUNCHER_LAYER = 'launcher';

export interface LaunchOptions {
  /** The runtime's own Node.js, in one of its launch layers (the node runtime's): the planner runs on it. */
  node?: RuntimeNode;
  /** The runtime's launch, planned now and stored for a launch with no Node.js. */
  stored?: RuntimeLaunch;
  /** Processes beside `web`. */
  processes?: ProcessDef[];
  log?: Logger;
}

/** A link from the layer to `target`: relative when it is inside the buildpack's layers, so it holds wherever they are. */
function linkNode(ctx: BuildContext, layer: string, target: string): void {
  const inside = !path.relative(ctx.layersDir, target).startsWith('..');
  fs.symlinkSync(inside ? path.relative(layer, target) : target, path.join(layer, 'planner-node'));
}

/** The launcher layer's files: the launch's sh, the planner, the build's decision. */
function writeLayer(ctx: BuildContext, decision: LaunchDecision): string {
  // `launch` is a reserved layer name; the launch's layer is `launcher`.
  const layer = ctx.layers.fresh(LAUNCHER_LAYER, { launch: true }, decision);
  fs.mkdirSync(path.join(layer.path, 'bin'), { recursive: true });
  const sh = path.join(ctx.buildpackDir, SH_DIR);
  fs.copyFileSync(path.join(sh, 'rbp-launch.sh'), path.join(layer.path, 'bin', LAUNCH_COMMAND));
  fs.chmodSync(path.join(layer.path, 'bin', LAUNCH_COMMAND), 0o755);
  fs.copyFileSync(path.join(sh, 'supervise.sh'), path.join(layer.path, 'supervise.sh'));
  fs.copyFileSync(path.join(ctx.buildpackDir, 'bin', 'launch'), path.join(layer.path, 'plan.cjs'));
  // The decision also goes inside the layer: an app image holds layer folders, not their .toml
  // (the lifecycle keeps layer metadata in an image label), and the planner must find it there.
  writeToml(path.join(layer.path, DECISION_FILE), { metadata: decision });
  return layer.path;
}

/**
 * Checks the request flow, writes the `launcher` layer and declares `web` (and `opts.processes`).
 * The image gets a Node.js for the planner only when the launch needs one and has none: the runtime
 * carries none, the operator names none (RBP_LAUNCHER_NODE), and the plan cannot be stored (a request
 * flow, or a plan that depends on what may not be stored).
 */
export async function installLaunch(ctx: BuildContext, decision: LaunchDecision, opts: LaunchOptions = {}): Promise<void> {
  const log = opts.log ?? new Logger();
  checkRequestFlowAtBuild(ctx.appDir, ctx.env, log);
  const layer = writeLayer(ctx, decision);
  // A request flow is planned at launch only: its ports are the launch's, its tools the run image's.
  const flow = isActive(ctx.env, ctx.appDir);
  const stored = opts.stored && !flow ? await storePlan(opts.stored, { env: ctx.env, appDir: ctx.appDir, layersDir: ctx.layersDir }) : undefined;
  if (stored?.ok) fs.writeFileSync(path.join(layer, STORED_PLAN_FILE), stored.text);
  const needs = [
    ...(flow ? ['the request flow is active'] : []),
    ...(!opts.stored ? ['the runtime plans its command at launch'] : stored && !stored.ok ? [stored.why] : []),
  ];
  const runtimeNode = opts.node ? usableRuntimeNode(opts.node, log) : undefined;
  const given = runtimeNode ?? (needs.length ? operatorNode(ctx.env, log) : undefined);
  if (runtimeNode) linkNode(ctx, layer, runtimeNode.path);
  if (given || !needs.length) forgetLauncherNode(ctx.layers, log);
  else {
    log.info(`launch: the image needs a Node.js to plan the launch: ${needs.join('; ')}`);
    linkNode(ctx, layer, (await installLauncherNode({ layers: ctx.layers, env: ctx.env, log })).path);
  }
  if (stored?.ok && !runtimeNode && !needs.length) {
    const inputs = stored.reads.filter((k) => k.startsWith('CC_') && ctx.env[k] !== undefined);
    log.info(
      `launch: no Node.js in the image: the launch follows the plan stored at build (${stored.argv0}${inputs.length ? `; ${inputs.join(', ')} as at build` : ''}), and plans again where it is given one (RBP_LAUNCHER_NODE, which rbp run sets)`,
    );
  }
  writeLaunchToml(path.join(ctx.layersDir, 'launch.toml'), {
    // Only web runs rbp-launch, which prints its plan for a dry run; other processes are commands of their own.
    labels: [{ key: DRY_RUN_LABEL, value: 'web' }],
    processes: [{ type: 'web', command: [LAUNCH_COMMAND], args: [], default: true }, ...(opts.processes ?? [])],
  });
}
