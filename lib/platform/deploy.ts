/**
 * `rbp deploy` after its build: start the default process, wait for it to listen, run the
 * deployment health check (contract, "Deployment health check" and "Errors"), and keep the app
 * running (or stop it, with --check).
 *
 * As a platform does, the deployment is decided before any restart: an app that exits before the
 * check passed fails the deploy at once, with its status and the last lines of its output. Once
 * deployed, a crash is restarted (`--restart on-failure`, the default) with the launcher's back-off.
 * The app's output passes through rbp (to stderr under --json, so that stdout holds the JSON alone).
 */
import os from 'node:os';
import type { Writable } from 'node:stream';
import { EXIT } from '../cnb/exit.ts';
import { UserError, type UserErrorData } from '../errors.ts';
import { formatDuration, type Logger } from '../log.ts';
import { appListenPort } from '../launch/ports.ts';
import { isBlocked } from '../launch/request-flow/activation.ts';
import { HEALTHY_RUN_MS, restartDelay, type RestartPolicy } from '../launch/restart.ts';
import { INSTANCE_SIZES } from '../launch/instance.ts';
import { read } from '../config/read.ts';
import type { LaunchPlan, Running } from './launcher.ts';
import { markInUse } from './in-use.ts';

export interface DeployOptions {
  out: string;
  port: number;
  userEnv: Record<string, string>;
  instance: string;
  restart: RestartPolicy;
  check: boolean;
  timeoutMs: number;
  log: Logger;
  /** Where the app's stdout goes (stderr under --json) and its stderr. */
  appOut: Writable;
  appErr: Writable;
}

/** What the deployment came to, for --json; `error` when it failed. */
export interface DeployReport {
  deployed: boolean;
  url: string;
  process?: string;
  healthCheck: { path: string; status: string }[];
  error?: UserErrorData;
}

/** How many lines of the app's output a crash report shows. */
export const LAST_LINES = 20;

/** The last lines written to two streams, in order. */
class Tail {
  private lines: string[] = [];
  private partial = '';
  push(chunk: Buffer | string): void {
    const parts = (this.partial + String(chunk)).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    this.lines = [...this.lines, ...parts].slice(-LAST_LINES);
  }
  last(): string[] {
    return [...this.lines, ...(this.partial ? [this.partial] : [])].slice(-LAST_LINES);
  }
}

function statusText(status: number): string {
  if (status <= 128) return `exit status ${status}`;
  const name = Object.entries(os.constants.signals).find(([, n]) => n === status - 128)?.[0];
  return name ? `killed by ${name} (status ${status})` : `exit status ${status}`;
}

export function crashedError(process_: string, status: number, lines: string[]): UserError {
  return new UserError({
    id: 'platform/deploy/crashed',
    title: `The application exited (${statusText(status)}) before the deployment was checked`,
    seen: { what: `process ${process_}`, value: statusText(status) },
    rule: 'A deployment starts the app and checks that it answers on its port; an app that exits first fails the deployment (after the check, a crash is restarted).',
    details: lines.length
      ? [`its last ${lines.length === 1 ? 'line' : `${lines.length} lines`} of output:`, ...lines.map((l) => `  ${l}`)]
      : ['it printed nothing'],
    fix: 'Fix what its output says (rbp run OUT starts it again the same way), then deploy again.',
  });
}

export function notListeningError(port: number, timeoutMs: number): UserError {
  return new UserError({
    id: 'platform/deploy/not-listening',
    title: `Nothing listened on port ${port} within ${Math.round(timeoutMs / 1000)}s`,
    seen: { what: 'port', value: String(port) },
    rule: 'The app listens on the port the platform gives it (PORT, 8080 by default; 9000 behind request-flow middleware) before the health check.',
    fix: 'Make the app listen on $PORT on 0.0.0.0, or give it longer with --timeout SECONDS.',
  });
}

export function healthCheckError(failing: { path: string; status: string }[]): UserError {
  return new UserError({
    id: 'platform/deploy/health-check',
    title: 'Health check failed',
    seen: { what: failing.length === 1 ? 'path' : 'paths', value: failing.map((f) => f.path).join(' ') },
    rule: 'Every path of CC_HEALTH_CHECK_PATH and CC_HEALTH_CHECK_PATH_<n> (default /) must answer 200.',
    details: failing.map((f) => `- GET ${f.path} returned ${f.status}.`),
    fix: 'If the deployment fails after this message, please update your configuration and redeploy.',
  });
}

/** Starts the app, checks it, and runs it (or stops it with --check). `report` gets the decision. */
export async function deploy(o: DeployOptions, report: (r: DeployReport) => void = () => undefined): Promise<number> {
  const { log } = o;
  const { checkListenPort, planLaunch, start } = await import('./launcher.ts');
  // No RBP_RESTART: until the check passed, a crash fails the deployment; rbp restarts after that.
  const plan = planLaunch({ outDir: o.out, port: o.port, userEnv: o.userEnv, instance: o.instance, memory: INSTANCE_SIZES[o.instance]!, args: [] });
  const url = `http://127.0.0.1:${o.port}/`;
  log.section('Deploy');
  if (plan.task) {
    log.info(`running task: ${plan.argv.join(' ')}`);
    const code = await start(plan).exited;
    log.info(`task exited with status ${code}`);
    report({ deployed: code === 0, url, process: plan.process, healthCheck: [] });
    return code;
  }
  await checkListenPort(plan, o.port);
  // rbp prune keeps an OUT a running app uses.
  markInUse(o.out);
  const tail = new Tail();
  const launch = (): Running => {
    log.info(`starting process ${plan.process}: ${plan.argv.join(' ')}`);
    const running = start(plan, 'pipe');
    running.child.stdout?.on('data', (d: Buffer) => (tail.push(d), o.appOut.write(d)));
    running.child.stderr?.on('data', (d: Buffer) => (tail.push(d), o.appErr.write(d)));
    return running;
  };
  const running = launch();
  // Cleared when the app ends, read after awaits: a field, which TypeScript does not narrow to the `true` it starts as.
  const app = { alive: true };
  void running.exited.then(() => (app.alive = false));
  const stop = async () => {
    if (app.alive) running.stop('SIGTERM');
    return running.exited;
  };
  const failed = async (e: UserError, healthCheck: DeployReport['healthCheck'] = []): Promise<number> => {
    await stop();
    report({ deployed: false, url, process: plan.process, healthCheck, error: e.data });
    log.error(e.data);
    return EXIT.healthCheckFailed;
  };
  // Whatever goes wrong in the check, the app does not stay behind.
  try {
    const { healthCheck, healthCheckPaths, waitForPort } = await import('./health.ts');
    try {
      await waitForPort(o.port, { timeoutMs: o.timeoutMs, alive: () => app.alive });
    } catch {
      if (!app.alive) return await failed(crashedError(plan.process, await running.exited, tail.last()));
      return await failed(notListeningError(o.port, o.timeoutMs));
    }
    const paths = healthCheckPaths(o.userEnv);
    // With CC_REQUEST_FLOW=block the public port answers 403 by design; the platform's check then
    // reaches the application on its own port, as the launch decides it (lib/launch/ports.ts appPort).
    const blocked = isBlocked(o.userEnv);
    const checkPort = blocked ? appListenPort(plan.env, undefined, plan.cwd) : o.port;
    if (blocked) log.info(`CC_REQUEST_FLOW=block: public access is blocked, so the health check goes to the application's port ${checkPort}`);
    if (blocked) await waitForPort(checkPort, { timeoutMs: o.timeoutMs, alive: () => app.alive }).catch(() => undefined);
    const r = await healthCheck(checkPort, paths);
    for (const l of r.lines) log.line(l);
    if (!app.alive) return await failed(crashedError(plan.process, await running.exited, tail.last()), r.results);
    if (!r.ok) return await failed(healthCheckError(r.results.filter((x) => x.status !== '200')), r.results);
    log.info(`deployed: ${url} answers on ${paths.length} health-check path(s)`);
    report({ deployed: true, url, process: plan.process, healthCheck: r.results });
  } catch (e) {
    await stop();
    throw e;
  }
  if (o.check) {
    await stop();
    return 0;
  }
  return await keepRunning(running, launch, plan, o);
}

/**
 * The deployed app runs until it ends; with on-failure a non-zero exit starts it again after the
 * back-off. A stop asked of rbp (SIGTERM, SIGINT, SIGHUP) ends the run: the status is the app's.
 */
async function keepRunning(first: Running, launch: () => Running, plan: LaunchPlan, o: DeployOptions): Promise<number> {
  // Set by a signal while the app runs or waits to restart: a field, which TypeScript does not narrow to the `false` it starts as.
  const asked = { stop: false };
  let wake = () => {};
  const onSignal = () => {
    asked.stop = true;
    wake();
  };
  const sigs = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  for (const s of sigs) process.on(s, onSignal);
  try {
    let running = first;
    let attempt = 0;
    for (;;) {
      const t0 = performance.now();
      const status = await running.exited;
      if (o.restart !== 'on-failure' || status === 0 || asked.stop) return status;
      attempt = performance.now() - t0 >= HEALTHY_RUN_MS ? 1 : attempt + 1;
      const delay = restartDelay(attempt, read<number>(plan.env, 'RBP_RESTART_FIRST_DELAY')!.value * 1000);
      o.log.line(`! restarting the app in ${formatDuration(delay)} (restart ${attempt}, --restart on-failure; last ${statusText(status)})`);
      // The wait ends on its timer, or early on a stop asked meanwhile (nothing above awaits, so none came between).
      const woke = await new Promise<'timer' | 'stop'>((r) => {
        const timer = setTimeout(() => r('timer'), delay);
        wake = () => {
          clearTimeout(timer);
          r('stop');
        };
      });
      if (woke === 'stop') return status;
      running = launch();
    }
  } finally {
    for (const s of sigs) process.off(s, onSignal);
  }
}
