/**
 * The Node.js launcher: the run end of our launch entrypoint (bin/launch; the build end is
 * install.ts). It computes the launch plan once (plan.ts) and prints it (RBP_DRY_RUN=1, for `rbp run
 * --dry-run`; RBP_DRY_RUN=shell: what its shell form would run), or carries it out, keeping no
 * Node.js beside the app unless the request flow needs one:
 * - nothing to supervise: it replaces itself with the app (process.execve, exec.ts), under the
 *   minimal init when it is PID 1 (pid1.ts);
 * - the app to supervise (a restart policy, poststart, a shell that keeps children) and no request
 *   flow: it replaces itself with the plan's shell form (shell.ts), a POSIX sh supervisor;
 * - a request-flow chain of processes in front of the app: it replaces itself with the chain's shell
 *   form (shell-chain.ts), which starts, watches and restarts the app and the middlewares;
 * - the block in front of the app (a 403 server inside this process), or a Node.js with no
 *   process.execve: it supervises the app and the chain itself (supervisor.ts), restarting the app
 *   as the plan says.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { raw } from '../config/read.ts';
import { exitCodeFor, signalNumber } from '../cnb/exit.ts';
import { isUserError, redactUrl, renderUserError } from '../errors.ts';
import { isExecutableFile } from '../fsx.ts';
import { formatDuration, Logger } from '../log.ts';
import { DIRECT_EXEC, DIRECT_LAUNCH_VARIABLE, DIRECT_SUPERVISE } from './direct.ts';
import { chooseMode, execveOf, execveProblem, resolveCommand, RESTART_WHY, stepAside, type LaunchMode } from './exec.ts';
import { INIT_SHELL, initNote, isPid1, underInit } from './pid1.ts';
import { planJson, planLaunch, type LaunchPlan, type RuntimeLaunch, type Supervisor } from './plan.ts';
import { checkPortFree } from './ports.ts';
import { blockMember } from './request-flow/block.ts';
import { APP_NOT_LISTENING_STATUS, envWithoutOthersSecrets, FAILURE_STATUS, LABEL, type MiddlewareSpec } from './request-flow/middlewares.ts';
import { checkFlowPortsFree } from './request-flow/plan.ts';
import { nextRestart, RESTART_VARIABLE } from './restart.ts';
import { shellForm, SHELL_NAME } from './shell.ts';
import { chainForm, chainFormProblem } from './shell-chain.ts';
import { exitStatus, spawnMember, supervise, type Member } from './supervisor.ts';

export { readDecision, type LaunchDecision } from './decision.ts';

/** The launch environment without the direct launch script's word to this launcher (not part of any process's). */
function launchEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[0] !== DIRECT_LAUNCH_VARIABLE && e[1] !== undefined));
}

/** The app's whole environment, as it is started: no secret of a middleware reaches it. */
function appEnvironment(plan: LaunchPlan, env: NodeJS.ProcessEnv): Record<string, string> {
  return envWithoutOthersSecrets({ ...launchEnvironment(env), ...plan.env });
}

/** Whether the kernel's port table is there, which the shell form of a request flow watches. */
const procNet = (): boolean => fs.existsSync('/proc/net/tcp');

/** How the app starts; `direct` is the direct launch script's word (direct.ts) when it handed over. */
function launchMode(plan: LaunchPlan, appEnv: Record<string, string>, direct: string | undefined): LaunchMode {
  if (direct === DIRECT_EXEC)
    return { mode: 'exec', file: plan.argv[0]!, why: `nothing to supervise: the launch script starts ${plan.argv[0]} itself (no Node.js launcher)` };
  if (direct === DIRECT_SUPERVISE) return { mode: 'supervise', why: RESTART_WHY };
  return chooseMode({
    restart: plan.restart.policy,
    argv: plan.argv,
    env: appEnv,
    cwd: plan.cwd,
    supervise: plan.supervise,
    flow: plan.requestFlow,
    execve: execveOf() !== undefined,
    nodeVersion: process.versions.node,
  });
}

/** Who stays beside the app when it is supervised: the shell form, unless only this Node.js can. */
function supervisorOf(plan: LaunchPlan, mode: LaunchMode, appEnv: Record<string, string>, direct: string | undefined): Supervisor | undefined {
  if (mode.mode !== 'supervise') return undefined;
  if (direct === DIRECT_SUPERVISE) return { by: 'shell', why: 'the launch script supervises the app itself (no Node.js launcher)' };
  if (plan.requestFlow) {
    // A chain of processes is the shell form's to run (shell-chain.ts); the block is an HTTP server in this Node.js.
    const problem = chainFormProblem(plan, procNet());
    if (problem) return { by: 'node', why: problem };
    if (execveOf())
      return {
        by: 'shell',
        why: "the launcher replaces itself with the plan's shell form (/bin/sh), which runs the request-flow chain and the app: no Node.js stays beside them",
      };
    return {
      by: 'node',
      // The mode's reasons say why: this Node.js has no process.execve to hand over with.
      why: 'the Node.js launcher runs the request-flow chain in front of the app',
    };
  }
  if (!execveOf())
    return {
      by: 'node',
      why: `Node.js ${process.versions.node} (the launcher's) has no process.execve (22.15+, 23.11+): it cannot hand over to the shell form`,
    };
  const file = resolveCommand(plan.argv[0] ?? '', appEnv.PATH, plan.cwd);
  const problem = file ? execveProblem(file) : `${plan.argv[0]} is not on the app's PATH`;
  if (problem) return { by: 'node', why: problem };
  return { by: 'shell', why: "the launcher replaces itself with the plan's shell form (/bin/sh), which supervises the app: no Node.js stays beside it" };
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

/** A hook of the plan, as npm runs it: the app's environment, npm_lifecycle_event set; its status. */
function runHook(plan: LaunchPlan, appEnv: Record<string, string>, event: 'prestart' | 'poststart'): number {
  const command = plan.hooks[event];
  if (!command) return 0;
  const r = spawnSync('/bin/sh', ['-c', command], { stdio: 'inherit', cwd: plan.cwd, env: { ...appEnv, npm_lifecycle_event: event } });
  if (r.status === 0) return 0;
  process.stderr.write(`launch: the ${event} script failed (exit ${r.status ?? r.signal}): ${command}\n`);
  return r.status ?? 1;
}

/**
 * The launch entrypoint of a runtime. `runtime` may be a function, called inside the launch's error
 * handling: a runtime that reads the build's decision (decision.ts) fails as a user error there.
 */
export async function runLaunch(runtime: RuntimeLaunch | (() => RuntimeLaunch)): Promise<void> {
  const env = process.env;
  // Set by a direct launch script that handed over (direct.ts); not part of the app's environment.
  const direct = raw(env, DIRECT_LAUNCH_VARIABLE);
  let plan: LaunchPlan;
  try {
    plan = await planLaunch(typeof runtime === 'function' ? runtime() : runtime, env, process.cwd());
  } catch (e) {
    fail(e);
  }
  const appEnv = appEnvironment(plan, env);
  const mode = launchMode(plan, appEnv, direct);
  const supervisor = supervisorOf(plan, mode, appEnv, direct);
  const dryRun = raw(env, 'RBP_DRY_RUN');
  if (dryRun === '1') {
    const script = direct
      ? direct === DIRECT_EXEC || direct === DIRECT_SUPERVISE
        ? { direct: true as const }
        : { direct: false as const, why: direct }
      : undefined;
    process.stdout.write(`${JSON.stringify(planJson(plan, mode, supervisor, script), null, 2)}\n`);
    return;
  }
  if (dryRun === 'shell') {
    // What the shell form of this plan would run, as the form itself says (shell.ts rbp_account).
    if (plan.requestFlow && supervisor?.by !== 'shell') return void process.stdout.write(`${JSON.stringify({ form: 'node', why: supervisor?.why })}\n`);
    const [form, formEnv] = plan.requestFlow ? [chainForm(plan, env, mode.why), launchEnvironment(env)] : [shellForm(plan), appEnv];
    const r = spawnSync('/bin/sh', ['-c', form, SHELL_NAME], { stdio: 'inherit', cwd: plan.cwd, env: { ...formEnv, RBP_DRY_RUN: 'shell' } });
    process.exit(r.status ?? 1);
  }
  const log = new Logger();
  if (direct && direct !== DIRECT_EXEC && direct !== DIRECT_SUPERVISE) log.info(`the launch script handed over to the Node.js launcher: ${direct}`);
  try {
    // A busy port is reported before anything starts: with middleware, every port of the flow.
    if (plan.requestFlow) await checkFlowPortsFree(plan.requestFlow);
    else if (env.PORT !== undefined) await checkPortFree(plan.port);
  } catch (e) {
    fail(e);
  }
  const execve = execveOf();
  if (supervisor?.by === 'shell' && execve && plan.requestFlow) {
    // The chain's shell form runs in the launch environment: it gives each member its own (shell-chain.ts).
    const e = stepAside('/bin/sh', ['/bin/sh', '-c', chainForm(plan, env, mode.why), SHELL_NAME], launchEnvironment(env), plan.cwd, execve, '');
    log.warn(`could not hand over to the shell form (${e.message}): supervising the request flow here`);
  } else if (supervisor?.by === 'shell' && execve) {
    // Returns only when Node.js refused before replacing anything: this launcher then supervises.
    const e = stepAside('/bin/sh', ['/bin/sh', '-c', shellForm(plan), SHELL_NAME], appEnv, plan.cwd, execve, '');
    log.warn(`could not hand over to the shell form (${e.message}): supervising the app here`);
  }
  const pre = runHook(plan, appEnv, 'prestart');
  if (pre !== 0) process.exit(pre);
  if (mode.mode === 'exec' && execve && isPid1() && isExecutableFile(INIT_SHELL)) {
    // PID 1 (an app image): the app runs under the minimal init, which forwards SIGTERM to it (pid1.ts).
    const e = stepAside(INIT_SHELL, underInit(plan.argv), appEnv, plan.cwd, execve, `${initNote(plan.argv[0] ?? '')}\n`);
    log.warn(`could not start the init (${e.message}): supervising the app instead`);
  } else if (mode.mode === 'exec' && execve) {
    // Returns only when Node.js refused before replacing anything.
    const e = stepAside(mode.file, plan.argv, appEnv, plan.cwd, execve);
    log.warn(`could not replace the launcher with ${mode.file} (${e.message}): supervising it instead`);
  } else {
    log.info(`the launcher stays to supervise: ${mode.why}`);
  }
  if (plan.hooks.poststart) process.on('exit', () => runHook(plan, appEnv, 'poststart'));
  await superviseHere(plan, appEnv, log);
}

/** The Node.js launcher's own supervision: the app and the request-flow chain, restarted as the plan says. */
async function superviseHere(plan: LaunchPlan, appEnv: Record<string, string>, log: Logger): Promise<never> {
  const flow = plan.requestFlow;
  const app: Member = {
    name: 'app',
    shown: plan.argv.map(redactUrl).join(' '),
    status: (exit) => (exit.error ? 127 : exitStatus(exit)),
    start: () => spawnMember(plan.argv, { env: appEnv, cwd: plan.cwd, stdin: 'inherit' }),
  };
  let members: Member[] = [app];
  if (flow) {
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
  const restarts = plan.restart.policy === 'on-failure';
  let attempt = 0;
  for (;;) {
    if (flow) for (const m of flow.middlewares) m.prepare?.();
    const outcome: { cause?: 'signal' | 'clean-exit' | 'failure' } = {};
    const t0 = performance.now();
    const status = await supervise(members, {
      log,
      listenTimeoutMs: plan.timeouts.listenMs,
      stopTimeoutMs: plan.timeouts.stopMs,
      primary: 'app',
      ready: flow ? `request flow ready: ${route}` : undefined,
      outcome,
      restarts,
    });
    if (!restarts || outcome.cause !== 'failure') process.exit(status);
    const next = nextRestart(attempt, performance.now() - t0, plan.restart);
    attempt = next.attempt;
    log.line(`! restarting the app in ${formatDuration(next.delayMs)} (restart ${attempt}, ${RESTART_VARIABLE}=on-failure; last status ${status})`);
    const sig = await waitOrSignal(next.delayMs);
    if (sig) {
      log.info(`${sig} while waiting to restart: stopping`);
      process.exit(128 + (signalNumber(sig) ?? 0));
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
