/**
 * The launch plan (DESIGN, the launch entrypoint): everything the launch decides, as one typed value
 * computed once by `planLaunch` from what the build decided (the runtime's plan) and the run
 * environment: the process, the port as a number and where it came from, each variable the launch
 * sets with its source, the request-flow chain, the restart policy and the health check.
 *
 * Two forms carry it out, and nothing else decides anything:
 * - the Node.js launcher (entry.ts) executes it, supervising the chain when there is one;
 * - the shell form (shell.ts), a POSIX sh program rendered from it, execs or supervises the app with
 *   no Node.js beside it. The direct launch script (direct.ts) is that form rendered at build, with
 *   the port and the restart policy left to the run environment by the same rules.
 * `rbp run --dry-run --json` prints it (planJson), under `launch`.
 */
import { raw, read } from '../config/read.ts';
import { redactEnv, redactUrl, type UserError } from '../errors.ts';
import type { LaunchMode } from './exec.ts';
import { healthCheckPaths } from './health-check.ts';
import { appPort, publicPort } from './ports.ts';
import type { FlowPlan } from './request-flow/plan.ts';
import { planFlow } from './request-flow/plan.ts';
import { restartPlan, type RestartPlan } from './restart.ts';
import { instanceMemory } from './instance.ts';
import { applyRunEnv, type RunEnvRule } from './run-env.ts';

export interface LaunchContext {
  /** The launch environment. */
  env: NodeJS.ProcessEnv;
  /** The app's folder (the process's working directory at launch). */
  appDir: string;
  /** The port the app listens on: the port plan's (ports.ts), 9000 behind the request flow. */
  port: number;
}

/** Commands run around the app (npm's prestart and poststart): before it starts, after it ends. */
export interface Hooks {
  prestart?: string;
  poststart?: string;
}

/** What a runtime plans, given the launch context: its command, its variables and the facts it shows. */
export interface RuntimePlan {
  /** What runs, argv[0] looked up on PATH. */
  argv: string[];
  /** Variables set for the process on top of the launch environment. */
  env: Record<string, string>;
  cwd?: string;
  /** Facts for the dry-run output and the log (webroot, server). */
  facts: Record<string, unknown>;
  /** Why the app is always supervised, whatever the run environment (poststart runs after it ends). */
  supervise?: string;
  hooks?: Hooks;
  /**
   * Variables derived from the run environment by rules (run-env.ts), set on top of `env`: what
   * the plan may not read from the environment itself if it is to be written as a launch script.
   */
  runEnv?: RunEnvRule[];
}

/** What a runtime gives the launch: its own port variable, and how it plans its command. */
export interface RuntimeLaunch {
  /** CC_STATIC_PORT, CC_PHPSERVER_PORT; none for node (its app reads PORT). */
  portVariable?: string;
  /**
   * The operator's variable naming a server of the run image that replaces the built one at launch
   * (RBP_TOOL_FRANKENPHP), and the built one's path: the direct launch script reads it at run time.
   */
  serverOverride?: { variable: string; builtPath: string };
  /**
   * Run environments the runtime refuses outright (phpserver on a pico instance): when `variable`
   * holds `value` (trimmed, any case), the launch stops with `error` before anything starts.
   */
  refusals?: Refusal[];
  plan(ctx: LaunchContext): RuntimePlan | Promise<RuntimePlan>;
}

export interface Refusal {
  variable: string;
  value: string;
  error: (seen: string) => UserError;
}

/** Throws the error of the first refusal the environment meets. */
export function checkRefusals(runtime: Pick<RuntimeLaunch, 'refusals'>, env: NodeJS.ProcessEnv): void {
  for (const r of runtime.refusals ?? []) {
    const seen = raw(env, r.variable);
    if (seen?.toLowerCase() === r.value.toLowerCase()) throw r.error(seen);
  }
}

/** Why a plan with a poststart hook is supervised, when the runtime gave no reason of its own. */
export const POSTSTART_WHY = 'poststart runs after the app exits';

/**
 * The runtime's reason to supervise the app whatever the run environment: its own, else its
 * poststart hook (which runs once the app has ended, so the launch must outlive the app).
 */
export function superviseReason(planned: Pick<RuntimePlan, 'supervise' | 'hooks'>): string | undefined {
  return planned.supervise ?? (planned.hooks?.poststart ? POSTSTART_WHY : undefined);
}

/** Where a variable the launch sets comes from: the port plan, or the runtime's own plan. */
export type EnvSource = 'port' | 'runtime';

/**
 * The app's port variables: PORT always (a Caddyfile's {$PORT}, a run command's $PORT, a node app's
 * process.env.PORT); behind the request flow the runtime's own variable says the same port, so an app
 * that reads it does not listen on the public port. `port` is text: the direct launch script plans
 * with a reference the script fills in.
 */
export function portEnv(port: number | string, portVariable: string | undefined, behindFlow: boolean): Record<string, string> {
  const text = String(port);
  return { PORT: text, ...(behindFlow && portVariable ? { [portVariable]: text } : {}) };
}

/** The variables the launch sets for the app, each with its source: the port's under the runtime's. */
export function planEnv(
  runtimeEnv: Record<string, string>,
  port: number | string,
  portVariable: string | undefined,
  behindFlow: boolean,
): { env: Record<string, string>; envSources: Record<string, EnvSource> } {
  const ports = portEnv(port, portVariable, behindFlow);
  const envSources: Record<string, EnvSource> = {};
  for (const k of Object.keys(ports)) envSources[k] = 'port';
  for (const k of Object.keys(runtimeEnv)) envSources[k] = 'runtime';
  return { env: { ...ports, ...runtimeEnv }, envSources };
}

/** The context the launch gives a runtime: the port is the port plan's (ports.ts), 9000 behind the request flow. */
export function launchContext(env: NodeJS.ProcessEnv, appDir: string, portVariable: string | undefined): LaunchContext {
  return { env, appDir, port: appPort(env, portVariable, appDir).port };
}

export interface LaunchPlan {
  /** The app's command, argv[0] looked up on the app's PATH. */
  argv: string[];
  cwd: string;
  /** The variables the launch sets on top of the launch environment. */
  env: Record<string, string>;
  envSources: Record<string, EnvSource>;
  /** The port the app listens on, and the variable (or rule) it came from. */
  port: number;
  portSource: string;
  publicPort: number;
  /** The request-flow chain between the public port and the app, when there is one. */
  requestFlow?: FlowPlan;
  restart: RestartPlan;
  /** How long a hop may take to listen, and the processes to stop (RBP_LISTEN_TIMEOUT, RBP_STOP_TIMEOUT). */
  timeouts: { listenMs: number; stopMs: number };
  /** What the platform checks once the app runs: every path must answer 200 on the public port. */
  healthCheck: { port: number; paths: string[] };
  hooks: Hooks;
  /** The runtime's reason to supervise the app whatever the run environment. */
  supervise?: string;
  facts: Record<string, unknown>;
}

const seconds = (env: NodeJS.ProcessEnv, name: string): number => read<number>(env, name)!.value * 1000;

/**
 * The launch plan: the runtime's refusals first, then the request flow, the app's port, the
 * runtime's own plan with that port, the restart policy and the health check. Every user error of
 * the run environment is thrown here, before anything starts.
 */
export async function planLaunch(runtime: RuntimeLaunch, env: NodeJS.ProcessEnv, appDir: string): Promise<LaunchPlan> {
  checkRefusals(runtime, env);
  const requestFlow = await planFlow(env, appDir);
  const port = appPort(env, runtime.portVariable, appDir);
  const planned = await runtime.plan({ env, appDir, port: port.port });
  // The instance memory, read only for a plan whose rules use it (and then one of its facts).
  const memory = planned.runEnv?.some((r) => r.kind === 'memory-flag') ? instanceMemory(env) : undefined;
  const runtimeEnv = { ...planned.env, ...applyRunEnv(planned.runEnv ?? [], env, memory) };
  const { env: vars, envSources } = planEnv(runtimeEnv, port.port, runtime.portVariable, requestFlow !== undefined);
  const pub = publicPort(env);
  return {
    argv: planned.argv,
    cwd: planned.cwd ?? appDir,
    env: vars,
    envSources,
    port: port.port,
    portSource: port.source,
    publicPort: pub,
    ...(requestFlow ? { requestFlow } : {}),
    restart: restartPlan(env),
    timeouts: { listenMs: seconds(env, 'RBP_LISTEN_TIMEOUT'), stopMs: seconds(env, 'RBP_STOP_TIMEOUT') },
    healthCheck: { port: pub, paths: healthCheckPaths(env) },
    hooks: planned.hooks ?? {},
    ...(superviseReason(planned) ? { supervise: superviseReason(planned) } : {}),
    facts: { ...planned.facts, ...(memory ? { memory } : {}) },
  };
}

/** Who supervises the app when the launch stays beside it: the shell form, or the Node.js launcher. */
export interface Supervisor {
  by: 'shell' | 'node';
  why: string;
}

/**
 * The plan as `rbp run --dry-run` shows it: every process, its command line, its ports, how it is
 * started and by what. `direct` is the direct launch script's account (direct.ts), when it handed over.
 */
export function planJson(
  plan: LaunchPlan,
  mode: LaunchMode,
  supervisor: Supervisor | undefined,
  direct?: { direct: true } | { direct: false; why: string },
): object {
  const flow = plan.requestFlow;
  const app = { name: 'app', argv: plan.argv, cwd: plan.cwd, listen: plan.port };
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
    cwd: plan.cwd,
    env: redactEnv(plan.env),
    ...plan.facts,
    port: plan.port,
    // exec: the launch process becomes the app; supervise: it starts the app and stays beside it.
    mode: mode.mode,
    modeWhy: mode.why,
    ...(supervisor ? { supervisor: supervisor.by, supervisorWhy: supervisor.why } : {}),
    // A direct launch (direct.ts): whether its script starts the app itself, or why it hands over.
    ...(direct ? { launchScript: direct } : {}),
    requestFlow: flow
      ? { publicPort: flow.publicPort, appPort: flow.appPort, block: flow.block, chain: flow.chain, skipped: flow.skipped }
      : { publicPort: plan.publicPort, appPort: plan.port, block: false, chain: [], skipped: [] },
    // From the public port inward; they start in the reverse order.
    processes: [...block, ...middlewares, app],
    portSource: plan.portSource,
    envSources: plan.envSources,
    restart: plan.restart,
    timeouts: plan.timeouts,
    healthCheck: plan.healthCheck,
    hooks: plan.hooks,
  };
}
