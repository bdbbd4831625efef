/**
 * The two ends of our launch entrypoint. At build, `installLaunch` checks the request flow (a broken
 * cache VCL fails the build), copies the buildpack's own bin/launch into a launch layer whose
 * metadata records what the build decided, and declares the process: that launch run by a Node.js
 * the run image is known to have, else one installed for it (launcher-node.ts). At run time, `runLaunch` reads
 * that metadata back, lets the runtime plan the command, wraps it in the request-flow chain, and
 * either prints the whole plan (RBP_DRY_RUN=1, for `rbp run --dry-run`) or starts it: replacing itself
 * with the app when nothing needs supervising and Node.js has process.execve (exec.ts), else
 * supervising the app and its middlewares (supervisor.ts).
 */
import { raw, read } from '../config/read.ts';
import { DRY_RUN_LABEL } from '../cnb/launch.ts';
import { exitCodeFor } from '../cnb/exit.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { BuildContext } from '../cnb/context.ts';
import { writeLaunchToml, type ProcessDef } from '../cnb/launch.ts';
import type { Metadata } from '../cnb/layers.ts';
import { readTomlIfExists, writeToml } from '../cnb/toml.ts';
import { isUserError, redactEnv, redactUrl, renderUserError, UserError } from '../errors.ts';
import os from 'node:os';
import { formatDuration, Logger } from '../log.ts';
import { HEALTHY_RUN_MS, RESTART_VARIABLE, restartDelay, restartPolicyOf, type RestartPolicy } from './restart.ts';
import { forgetLauncherNode, installLauncherNode, knownLauncherNode, type RuntimeNode } from './launcher-node.ts';
import { checkPortFree, publicPort } from './ports.ts';
import { checkRefusals, launchContext, portEnv, type RuntimeLaunch } from './context.ts';
import { DIRECT_EXEC, DIRECT_LAUNCH_VARIABLE, NODE_LAUNCHER_FILE, planDirect, type DirectPlan } from './direct.ts';
import { isActive } from './request-flow/activation.ts';
import { checkRequestFlowAtBuild } from './request-flow/build-check.ts';
import { APP_NOT_LISTENING_STATUS, envWithoutOthersSecrets, FAILURE_STATUS, LABEL, type MiddlewareSpec } from './request-flow/middlewares.ts';
import { checkFlowPortsFree, planFlow, type FlowPlan } from './request-flow/plan.ts';
import { blockMember } from './request-flow/block.ts';
import { exitStatus, spawnMember, supervise, type Member } from './supervisor.ts';
import { chooseMode, execveOf, stepAside, type LaunchMode } from './exec.ts';
import { INIT_SHELL, isPid1, underInit } from './pid1.ts';
import { isExecutableFile } from '../fsx.ts';


export interface LaunchDecision extends Metadata {
  runtime: string;
}

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
  writeToml(path.join(layer.path, DECISION_FILE), { metadata: decision } as unknown as Record<string, unknown>);
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

function writeDirect(ctx: BuildContext, decision: LaunchDecision, direct: Extract<DirectPlan, { ok: true }>, node: string | undefined, extra: ProcessDef[], log: Logger): string {
  const bin = path.join(launcherLayer(ctx, decision), 'bin');
  const target = path.join(bin, 'launch');
  fs.writeFileSync(target, direct.script(node), { mode: 0o755 });
  if (node) copyNodeLauncher(ctx, path.join(bin, NODE_LAUNCHER_FILE));
  // Without a Node.js nothing can print the launch plan: rbp run --dry-run shows the process alone.
  writeProcesses(ctx, [target], node !== undefined, extra);
  const inputs = direct.reads.length ? `; ${direct.reads.join(', ')} as at build` : '';
  log.info(
    `launch: direct, the launch script starts ${direct.argv0} itself${inputs}; ${node ? `the Node.js launcher (${node}) takes over for a request flow, a restart policy or a dry run` : 'no Node.js in the image'}`,
  );
  return target;
}

/** Inside the launcher layer: what the build decided, as the layer's metadata also says. */
export const DECISION_FILE = 'decision.toml';

/** What the build decided, from the launcher layer this launch entrypoint was copied into. */
export function readDecision<T extends LaunchDecision>(): T {
  const layerDir = path.dirname(path.dirname(process.argv[1] ?? __filename));
  const t = readTomlIfExists<{ metadata?: T }>(path.join(layerDir, DECISION_FILE));
  if (!t?.metadata) {
    throw new UserError({
      id: 'launch/decision/missing',
      title: 'The launch entrypoint has no build metadata',
      seen: { what: 'launch decision', value: path.join(layerDir, DECISION_FILE) },
      rule: 'The launch entrypoint runs from the launcher layer its buildpack wrote at build; that layer records what the build decided.',
      fix: 'Start the app through its launch process (rbp run OUT, or the image entrypoint), after a build with the buildpack.',
    });
  }
  return t.metadata;
}


export interface Plan {
  /** What runs, argv[0] looked up on PATH. */
  argv: string[];
  /** Variables set for the process on top of the launch environment. */
  env: Record<string, string>;
  cwd?: string;
  /** Facts for the dry-run output and the log (ports, webroot, server). */
  facts: Record<string, unknown>;
  /**
   * Why the launcher must stay beside the app (e.g. a hook that runs after it exits): set, the app
   * is always supervised; unset, the launcher replaces itself with the app when it can (exec.ts).
   */
  supervise?: string;
}

const millis = (env: NodeJS.ProcessEnv, name: string): number => read<number>(env, name)!.value * 1000;

/**
 * What the launch decided before the runtime planned: the request flow, the app's port (the flow's, else
 * the port plan's, ports.ts) and the plan the runtime made with that port. The app's port variables
 * (context.ts portEnv) go under the runtime's own variables.
 */
interface Decided {
  plan: Plan;
  flow: FlowPlan | undefined;
  appPort: number;
  /** The direct launch script's word (direct.ts): `exec` when it would start the app itself, else why not. */
  direct?: string;
}

async function decide(runtime: RuntimeLaunch, env: NodeJS.ProcessEnv, appDir: string): Promise<Decided> {
  checkRefusals(runtime, env);
  const flow = await planFlow(env, appDir);
  const ctx = launchContext(env, appDir, runtime.portVariable);
  const appPort = Number(ctx.port);
  const plan = await runtime.plan(ctx);
  plan.env = { ...portEnv(String(appPort), runtime.portVariable, flow !== undefined), ...plan.env };
  plan.facts = { ...plan.facts, port: appPort };
  return { plan, flow, appPort };
}

/** The app's whole environment, as it is started: no secret of a middleware reaches it. */
function appEnvironment(plan: Plan, env: NodeJS.ProcessEnv): Record<string, string> {
  // The direct launch script's word to this launcher is not part of the app's environment.
  const own = Object.fromEntries(Object.entries(env).filter(([k]) => k !== DIRECT_LAUNCH_VARIABLE));
  return envWithoutOthersSecrets({ ...own, ...plan.env });
}

/** `appEnv` is the app's whole environment (appEnvironment), built once by the caller. */
function launchMode(d: Decided, appEnv: Record<string, string>, restart: RestartPolicy = 'no'): LaunchMode {
  if (d.direct === DIRECT_EXEC) return { mode: 'exec', file: d.plan.argv[0]!, why: `nothing to supervise: the launch script starts ${d.plan.argv[0]} itself (no Node.js)` };
  return chooseMode({
    restart,
    argv: d.plan.argv,
    env: appEnv,
    cwd: d.plan.cwd ?? process.cwd(),
    supervise: d.plan.supervise,
    flow: d.flow,
    execve: execveOf() !== undefined,
    nodeVersion: process.versions.node,
  });
}

/** The whole plan as `rbp run --dry-run` shows it: every process, its command line, its ports, how it is started. */
function dryRunJson(d: Decided, env: NodeJS.ProcessEnv): object {
  const { plan, flow } = d;
  const mode = launchMode(d, appEnvironment(plan, env), safeRestartPolicy(env));
  const app = { name: 'app', argv: plan.argv, cwd: plan.cwd ?? process.cwd(), listen: d.appPort };
  const middlewares = (flow?.middlewares ?? []).map((m) => ({
    name: m.kind,
    argv: m.argv.map(redactUrl),
    cwd: m.cwd,
    listen: m.listen,
    forward: m.forward,
    secrets: m.secrets,
    ...m.facts,
  }));
  const block = flow?.block ? [{ name: 'block', inProcess: true, listen: flow.publicPort, answers: 403 }] : [];
  return {
    argv: plan.argv,
    cwd: plan.cwd ?? process.cwd(),
    env: redactEnv(plan.env),
    ...plan.facts,
    // exec: the launch process becomes the app; supervise: it starts the app and stays beside it.
    mode: mode.mode,
    modeWhy: mode.why,
    // A direct launch (direct.ts): whether its script starts the app itself, or why it hands over.
    ...(d.direct ? { launchScript: d.direct === DIRECT_EXEC ? { direct: true } : { direct: false, why: d.direct } } : {}),
    requestFlow: flow
      ? { publicPort: flow.publicPort, appPort: flow.appPort, block: flow.block, chain: flow.chain, skipped: flow.skipped }
      : { publicPort: publicPort(env), appPort: app.listen, block: false, chain: [], skipped: [] },
    // From the public port inward; they start in the reverse order.
    processes: [...block, ...middlewares, app],
  };
}

function safeRestartPolicy(env: NodeJS.ProcessEnv): RestartPolicy {
  try {
    return restartPolicyOf(env);
  } catch {
    return 'no';
  }
}

function middlewareMember(m: MiddlewareSpec): Member {
  return {
    name: LABEL[m.kind],
    shown: m.shown,
    listen: m.listen,
    status: () => FAILURE_STATUS[m.kind],
    start: () => spawnMember(m.argv, { env: m.env, cwd: m.cwd }),
    cleanup: m.cleanup,
  };
}

function fail(e: unknown): never {
  process.stderr.write(`${isUserError(e) ? renderUserError(e.data) : e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(exitCodeFor(e, 'entrypoint'));
}

export async function runLaunch(runtime: RuntimeLaunch): Promise<void> {
  const env = process.env;
  // Set by a direct launch script that handed over (direct.ts); not part of the app's environment.
  const direct = raw(env, DIRECT_LAUNCH_VARIABLE);
  let d: Decided;
  try {
    d = { ...(await decide(runtime, env, process.cwd())), ...(direct ? { direct } : {}) };
  } catch (e) {
    fail(e);
  }
  const { plan, flow } = d;
  if (raw(env, 'RBP_DRY_RUN') === '1') {
    process.stdout.write(`${JSON.stringify(dryRunJson(d, env), null, 2)}\n`);
    return;
  }
  const log = new Logger();
  if (direct && direct !== DIRECT_EXEC) log.info(`the launch script handed over to the Node.js launcher: ${direct}`);
  let restart: RestartPolicy;
  try {
    restart = restartPolicyOf(env);
    // A busy port is reported before anything starts (with middleware, checkFlowPortsFree does it for every port).
    if (!flow && env.PORT !== undefined) await checkPortFree(d.appPort);
  } catch (e) {
    fail(e);
  }
  const appEnv = appEnvironment(plan, env);
  const mode = launchMode(d, appEnv, restart);
  const execve = execveOf();
  if (mode.mode === 'exec' && execve && isPid1() && isExecutableFile(INIT_SHELL)) {
    // PID 1 (an app image): the app runs under the minimal init, which forwards SIGTERM to it (pid1.ts).
    const e = stepAside(INIT_SHELL, underInit(plan.argv), appEnv, plan.cwd ?? process.cwd(), execve, `- exec ${plan.argv[0]} under a minimal init (the launch is PID 1: ${INIT_SHELL} forwards stop signals to it and reaps children)\n`);
    log.warn(`could not start the init (${e.message}): supervising the app instead`);
  } else if (mode.mode === 'exec' && execve) {
    // Returns only when Node.js refused before replacing anything.
    const e = stepAside(mode.file, plan.argv, appEnv, plan.cwd ?? process.cwd(), execve);
    log.warn(`could not replace the launcher with ${mode.file} (${e.message}): supervising it instead`);
  } else {
    log.info(`the launcher stays to supervise: ${mode.why}`);
  }
  const app: Member = {
    name: 'app',
    shown: plan.argv.map(redactUrl).join(' '),
    status: (exit) => (exit.error ? 127 : exitStatus(exit)),
    start: () => spawnMember(plan.argv, { env: appEnv, cwd: plan.cwd, stdin: 'inherit' }),
  };
  let members: Member[] = [app];
  if (flow) {
    try {
      await checkFlowPortsFree(flow);
    } catch (e) {
      fail(e);
    }
    if (flow.skipped.length) log.info(`public access blocked: not starting ${flow.skipped.map((k) => LABEL[k]).join(', ')}`);
    Object.assign(app, {
      listen: flow.appPort,
      notListeningStatus: APP_NOT_LISTENING_STATUS,
      misplaced: {
        port: flow.publicPort,
        message: `listens on the public port ${flow.publicPort}: behind request-flow middleware it must listen on ${flow.appPort} (its PORT variable)`,
      },
    });
    const outer = flow.block ? [blockMember(flow.publicPort)] : flow.middlewares.map(middlewareMember);
    members = [app, ...outer.reverse()];
  }
  const route = flow ? [`:${flow.publicPort}`, ...(flow.block ? ['403 (blocked)'] : flow.chain), `app :${flow.appPort}`].join(' → ') : '';
  let attempt = 0;
  for (;;) {
    if (flow) for (const m of flow.middlewares) m.prepare?.();
    const outcome: { cause?: 'signal' | 'clean-exit' | 'failure' } = {};
    const t0 = performance.now();
    const status = await supervise(members, {
      log,
      listenTimeoutMs: millis(env, 'RBP_LISTEN_TIMEOUT'),
      stopTimeoutMs: millis(env, 'RBP_STOP_TIMEOUT'),
      primary: 'app',
      ready: flow ? `request flow ready: ${route}` : undefined,
      outcome,
      restarts: restart === 'on-failure',
    });
    if (restart !== 'on-failure' || outcome.cause !== 'failure') process.exit(status);
    attempt = performance.now() - t0 >= HEALTHY_RUN_MS ? 1 : attempt + 1;
    const delay = restartDelay(attempt, millis(env, 'RBP_RESTART_FIRST_DELAY'));
    log.line(`! restarting the app in ${formatDuration(delay)} (restart ${attempt}, ${RESTART_VARIABLE}=on-failure; last status ${status})`);
    const sig = await waitOrSignal(delay);
    if (sig) {
      log.info(`${sig} while waiting to restart: stopping`);
      process.exit(128 + (os.constants.signals[sig] ?? 0));
    }
  }
}

/** Sleeps `ms`; resolves early with the signal when SIGTERM, SIGINT or SIGHUP arrives. */
function waitOrSignal(ms: number): Promise<NodeJS.Signals | undefined> {
  return new Promise((resolve) => {
    const sigs = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
    const handlers = sigs.map((s) => [s, () => done(s)] as const);
    const timer = setTimeout(() => done(undefined), ms);
    function done(sig: NodeJS.Signals | undefined) {
      clearTimeout(timer);
      for (const [s, h] of handlers) process.off(s, h);
      resolve(sig);
    }
    for (const [s, h] of handlers) process.on(s, h);
  });
}
