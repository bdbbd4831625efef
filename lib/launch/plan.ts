/**
 * The launch plan (DESIGN, the launch entrypoint): everything the launch decides, as one typed value
 * computed once by `planLaunch` from what the build decided (the runtime's plan) and the run
 * environment: the app's command and variables, its port and where it came from, the request-flow
 * chain, the restart policy, the timeouts, and whether the launch becomes the app (exec) or stays
 * beside it (supervise), with every reason.
 *
 * One program carries it out: the POSIX sh of sh/ (rbp-launch.sh, supervise.sh), which reads the plan
 * as data (plan-data.ts) and decides nothing. The planner (planner.ts) hands it the plan at launch;
 * a launch with no Node.js uses the plan the build stored (stored-plan.ts).
 * `rbp run --dry-run --json` prints it (planJson), under `launch`.
 */
import { raw, read } from '../config/read.ts';
import { redactEnv, redactUrl, type UserError } from '../errors.ts';
import { healthCheckPaths } from './health-check.ts';
import { appPort, publicPort } from './ports.ts';
import { planFlow, type FlowPlan } from './request-flow/plan.ts';
import { restartPlan, RESTART_WHY, type RestartPlan } from './restart.ts';

export interface LaunchContext {
  /** The launch environment. */
  env: NodeJS.ProcessEnv;
  /** The app's folder (the process's working directory at launch). */
  appDir: string;
  /** The folder of the buildpack's layers: what the build decided names its layers relative to it. */
  layersDir: string;
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
  /** Why the app is always supervised, whatever the run environment. */
  supervise?: string;
  hooks?: Hooks;
}

/** What a runtime gives the launch: its own port variable, its refusals, and how it plans its command. */
export interface RuntimeLaunch {
  /** CC_STATIC_PORT, CC_PHPSERVER_PORT; none for node (its app reads PORT). */
  portVariable?: string;
  /**
   * Run environments the runtime refuses outright (phpserver on a pico instance): when `variable`
   * holds `value` (trimmed, any case), the launch stops with `error` before anything starts.
   */
  refusals?: Refusal[];
  plan(ctx: LaunchContext): RuntimePlan;
}

export interface Refusal {
  variable: string;
  value: string;
  error: (seen: string) => UserError;
}

/** Where a variable the launch sets comes from: the port plan, or the runtime's own plan. */
export type EnvSource = 'port' | 'runtime';

/**
 * The app's port variables: PORT always (a Caddyfile's {$PORT}, a run command's $PORT, a node app's
 * process.env.PORT); behind the request flow the runtime's own variable says the same port, so an app
 * that reads it does not listen on the public port.
 */
export function portEnv(port: number, portVariable: string | undefined, behindFlow: boolean): Record<string, string> {
  const text = String(port);
  return { PORT: text, ...(behindFlow && portVariable ? { [portVariable]: text } : {}) };
}

/** The context the launch gives a runtime: the port is the port plan's (ports.ts), 9000 behind the request flow. */
export function launchContext(env: NodeJS.ProcessEnv, appDir: string, portVariable: string | undefined, layersDir = appDir): LaunchContext {
  return { env, appDir, layersDir, port: appPort(env, portVariable, appDir).port };
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
  hooks: Hooks;
  /** exec: the launch becomes the app; supervise: it stays beside the app, for `why`. */
  mode: 'exec' | 'supervise';
  why: string;
  facts: Record<string, unknown>;
}

const seconds = (env: NodeJS.ProcessEnv, name: string): number => read<number>(env, name)!.value * 1000;

/** A `sh -c` command that does not end in a plain `exec`: a signal to the shell alone would leave its children. */
export function shellKeepsChildren(argv: string[]): boolean {
  if (!['sh', '/bin/sh', 'bash', '/bin/bash'].includes(argv[0] ?? '') || argv[1] !== '-c') return false;
  const script = (argv[2] ?? '').trim();
  return !/^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*exec\s/.test(script) || /[;&|\n]/.test(script.replace(/'[^']*'|"[^"]*"/g, ''));
}

export const KEEPS_CHILDREN_WHY = 'the shell command does not end in exec: only the supervisor stops its whole process group';

/** Every reason the launch stays beside the app; none: it becomes the app. */
function reasonsToStay(planned: RuntimePlan, flow: FlowPlan | undefined, restart: RestartPlan): string[] {
  return [
    ...(flow?.block ? ['public access is blocked: a 403 server answers in front of the app'] : []),
    ...(flow?.chain.length ? [`request flow: ${flow.chain.join(' → ')} in front of the app`] : []),
    ...(planned.supervise ? [planned.supervise] : []),
    ...(restart.policy === 'on-failure' ? [RESTART_WHY] : []),
    ...(shellKeepsChildren(planned.argv) ? [KEEPS_CHILDREN_WHY] : []),
  ];
}

/**
 * The launch plan: the runtime's refusals first, then the request flow, the app's port, the
 * runtime's own plan with that port, the restart policy. Every user error of the run environment
 * is thrown here, before anything starts. `port` replaces the port plan's (a stored plan's stand-in).
 */
export async function planLaunch(
  runtime: RuntimeLaunch,
  env: NodeJS.ProcessEnv,
  appDir: string,
  layersDir: string,
  opts: { port?: number } = {},
): Promise<LaunchPlan> {
  for (const r of runtime.refusals ?? []) {
    const seen = raw(env, r.variable);
    if (seen?.toLowerCase() === r.value.toLowerCase()) throw r.error(seen);
  }
  const requestFlow = await planFlow(env, appDir);
  const port = opts.port !== undefined ? { port: opts.port, source: 'the launch' } : appPort(env, runtime.portVariable, appDir);
  const planned = runtime.plan({ env, appDir, layersDir, port: port.port });
  const ports = portEnv(port.port, runtime.portVariable, requestFlow !== undefined);
  const envSources: Record<string, EnvSource> = {};
  for (const k of Object.keys(ports)) envSources[k] = 'port';
  for (const k of Object.keys(planned.env)) envSources[k] = 'runtime';
  const restart = restartPlan(env);
  const stay = reasonsToStay(planned, requestFlow, restart);
  return {
    argv: planned.argv,
    cwd: planned.cwd ?? appDir,
    env: { ...ports, ...planned.env },
    envSources,
    port: port.port,
    portSource: port.source,
    publicPort: publicPort(env),
    ...(requestFlow ? { requestFlow } : {}),
    restart,
    timeouts: { listenMs: seconds(env, 'RBP_LISTEN_TIMEOUT'), stopMs: seconds(env, 'RBP_STOP_TIMEOUT') },
    hooks: planned.hooks ?? {},
    mode: stay.length ? 'supervise' : 'exec',
    why: stay.length ? stay.join('; ') : 'nothing to supervise: the launch replaces itself with the app',
    facts: planned.facts,
  };
}

/** The plan as `rbp run --dry-run` shows it: every process, its command line, its ports, how it is started. */
export function planJson(plan: LaunchPlan, env: NodeJS.ProcessEnv): object {
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
  return {
    argv: plan.argv,
    cwd: plan.cwd,
    env: redactEnv(plan.env),
    ...plan.facts,
    port: plan.port,
    // exec: the launch process becomes the app; supervise: it starts the app and stays beside it.
    mode: plan.mode,
    modeWhy: plan.why,
    requestFlow: flow
      ? { publicPort: flow.publicPort, appPort: flow.appPort, block: flow.block, chain: flow.chain, skipped: flow.skipped }
      : { publicPort: plan.publicPort, appPort: plan.port, block: false, chain: [], skipped: [] },
    // From the public port inward; they start in the reverse order.
    processes: [...middlewares, app],
    portSource: plan.portSource,
    envSources: plan.envSources,
    restart: plan.restart,
    timeouts: plan.timeouts,
    healthCheck: { port: plan.publicPort, paths: healthCheckPaths(env) },
    hooks: plan.hooks,
  };
}
