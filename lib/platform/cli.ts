/** The `rbp` command line: detect, build, run, deploy. */
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT } from '../cnb/exit.ts';
import { isUserError, UserError } from '../errors.ts';
import { Logger } from '../log.ts';
import { DEFAULT_INSTANCE, INSTANCE_SIZES, parseInstance, parseMemory } from '../launch/instance.ts';
import { build } from './build.ts';
import { collectEnv } from './cli-env.ts';
import { detect } from './detect.ts';
import { filteredHostEnv, operatorEnv } from './env.ts';
import { healthCheck, healthCheckPaths, waitForPort } from './health.ts';
import { dryRun, planLaunch, start } from './launcher.ts';
import { readRbpInfo } from './metadata.ts';
import { RESTART_VARIABLE, restartPolicy, type RestartPolicy } from '../launch/restart.ts';
import { AUTO_ORDER, resolveOrder } from './order.ts';
import { appPortBehindMiddleware } from '../launch/ports.ts';
import { isBlocked } from '../launch/request-flow/activation.ts';
import { writePlatformEnv } from '../cnb/env.ts';
import fs from 'node:fs';

export const USAGE = `rbp — a local Cloud Native Buildpacks lifecycle, no Docker needed

Usage:
  rbp detect APP [--type T | --buildpack DIR... | --order FILE] [--env K=V]... [--env-file F]
  rbp build  APP --out OUT [--type T | --buildpack DIR... | --order FILE] [--cache DIR] [--clear-cache]
                 [--env K=V]... [--env-file F] [--binding DIR]... [--task CMD] [--instance SIZE]
  rbp run    OUT [--process TYPE] [--port PORT] [--env K=V]... [--env-file F] [--instance SIZE]
                 [--memory SIZE] [--restart no|on-failure] [--dry-run] [-- ARGS...]
  rbp deploy APP [build options] [--out OUT] [--port PORT] [--restart no|on-failure] [--check]
                 [--timeout SECONDS]

--restart on-failure starts a crashed app again, with back-off (1 s, 2 s, 4 s… up to 30 s); the
default is no for run, on-failure for deploy.

--buildpack DIR may be a composite buildpack: its components are found by id@version among the
other --buildpack directories, beside it (<dir>/<escaped-id>/<version>/) and ours.
Without --type or --buildpack the buildpacks are tried in this order: ${AUTO_ORDER.join(', ')}.
Instance sizes: ${Object.entries(INSTANCE_SIZES)
  .map(([k, v]) => `${k} (${v >= 1 << 30 ? `${v / (1 << 30)} GiB` : `${v / (1 << 20)} MiB`})`)
  .join(', ')}; default ${DEFAULT_INSTANCE}.
Exit codes: detect 20 (no group passed), 21 (a buildpack failed); build 51 (a buildpack failed),
62 (export); run: the process's status, 82 when it could not start; deploy 3 (health check failed);
2 bad usage.`;

const common = {
  env: { type: 'string', multiple: true },
  'env-file': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;
const selection = {
  type: { type: 'string' },
  buildpack: { type: 'string', multiple: true },
  order: { type: 'string' },
} as const;
const buildOpts = {
  ...selection,
  out: { type: 'string' },
  cache: { type: 'string' },
  'clear-cache': { type: 'boolean' },
  task: { type: 'string' },
  instance: { type: 'string' },
  binding: { type: 'string', multiple: true },
} as const;
const runOpts = {
  process: { type: 'string' },
  port: { type: 'string' },
  instance: { type: 'string' },
  memory: { type: 'string' },
  'dry-run': { type: 'boolean' },
  restart: { type: 'string' },
} as const;

function usage(msg: string): UserError {
  return new UserError({ id: 'platform/usage', title: msg, rule: 'See the usage below.', fix: USAGE });
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw usage(`expected one ${what}, got ${positionals.length ? positionals.join(' ') : 'none'}`);
  return positionals[0]!;
}

function parsePort(v: string | undefined): number {
  if (v === undefined) return 8080;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new UserError({ id: 'platform/port/invalid', title: 'Invalid port', seen: { what: '--port', value: v }, rule: 'A port is a whole number from 1 to 65535.', fix: 'Use for example --port 8080.' });
  }
  return n;
}

function parseTimeout(v: string | undefined): number {
  if (v === undefined) return 60;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UserError({ id: 'platform/timeout/invalid', title: 'Invalid timeout', seen: { what: '--timeout', value: v }, rule: 'The timeout is a number of seconds greater than 0.', fix: 'Use for example --timeout 120.' });
  }
  return n;
}

function defaultDeployOut(app: string): string {
  const abs = path.resolve(app);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const hash = crypto.createHash('sha256').update(abs).digest('hex').slice(0, 8);
  return path.join(base, 'rbp', 'deploy', `${path.basename(abs)}-${hash}`);
}

export async function main(argv: string[], log = new Logger()): Promise<number> {
  const dd = argv.indexOf('--');
  const passthrough = dd === -1 ? [] : argv.slice(dd + 1);
  const [cmd, ...rest] = dd === -1 ? argv : argv.slice(0, dd);
  try {
    switch (cmd) {
      case 'detect': {
        const { values, positionals } = parseArgs({ args: rest, options: { ...common, ...selection }, allowPositionals: true });
        if (values.help) return (log.line(USAGE), 0);
        const app = one(positionals, 'APP directory');
        const env = collectEnv(values['env-file'], values.env);
        const order = resolveOrder({ type: values.type, buildpacks: values.buildpack, orderFile: values.order });
        const platformDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-platform-'));
        try {
          writePlatformEnv(platformDir, env);
          log.section('Detect');
          const r = await detect(order, path.resolve(app), { base: filteredHostEnv(), user: env, operator: operatorEnv(), platformDir }, log);
          if (r.group) {
            log.info(`group: ${r.group.map((g) => `${g.descriptor.buildpack.id}@${g.descriptor.buildpack.version}`).join(', ')}`);
            for (const e of r.entries ?? []) log.detail(`plan: ${e.requires.map((q) => q.name).join(', ')} ← ${e.providers.map((p) => p.descriptor.buildpack.id).join(', ')}`);
          } else log.line(r.code === EXIT.detectError ? 'ERROR: detection failed with a buildpack error' : 'ERROR: no buildpack group passed detection');
          return r.code;
        } finally {
          fs.rmSync(platformDir, { recursive: true, force: true });
        }
      }
      case 'build':
      case 'deploy': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { ...common, ...buildOpts, ...(cmd === 'deploy' ? { port: { type: 'string' }, check: { type: 'boolean' }, timeout: { type: 'string' }, restart: { type: 'string' } } : {}) },
          allowPositionals: true,
        });
        if (values.help) return (log.line(USAGE), 0);
        const app = one(positionals, 'APP directory');
        const out = values.out ?? (cmd === 'deploy' ? defaultDeployOut(app) : undefined);
        if (!out) throw usage('rbp build needs --out OUT');
        const instance = parseInstance(values.instance ?? DEFAULT_INSTANCE);
        const userEnv = collectEnv(values['env-file'], values.env);
        const port = parsePort((values as { port?: string }).port);
        const timeoutMs = parseTimeout((values as { timeout?: string }).timeout) * 1000;
        const restart = cmd === 'deploy' ? restartPolicy((values as { restart?: string }).restart ?? 'on-failure', '--restart') : 'no';
        const order = resolveOrder({ type: values.type, buildpacks: values.buildpack, orderFile: values.order });
        const r = await build({
          appDir: app,
          outDir: out,
          order,
          cacheDir: values.cache,
          clearCache: values['clear-cache'],
          userEnv,
          bindings: values.binding,
          task: values.task,
          instance,
          instanceMemory: INSTANCE_SIZES[instance]!,
          log,
        });
        if (r.code !== 0 || cmd === 'build') return r.code;
        return deploy({ out, port, userEnv, instance, restart, check: Boolean((values as { check?: boolean }).check), timeoutMs, log });
      }
      case 'run': {
        const { values, positionals } = parseArgs({ args: rest, options: { ...common, ...runOpts }, allowPositionals: true });
        if (values.help) return (log.line(USAGE), 0);
        const out = one(positionals, 'OUT directory');
        const info = readRbpInfo(path.resolve(out));
        const instance = parseInstance(values.instance ?? info?.instance ?? DEFAULT_INSTANCE);
        const memory = values.memory ? parseMemory(values.memory) : INSTANCE_SIZES[instance]!;
        const restart = restartPolicy(values.restart ?? 'no', '--restart');
        const userEnv = collectEnv(values['env-file'], values.env);
        const plan = planLaunch({
          outDir: out,
          processType: values.process,
          port: parsePort(values.port),
          userEnv,
          instance,
          memory,
          args: passthrough,
        });
        plan.env[RESTART_VARIABLE] = restart;
        // On stderr: stdout is the app's, and --dry-run's JSON.
        warnMissingBuildEnv(info?.['env-names'], userEnv, new Logger({ out: process.stderr }));
        if (values['dry-run']) {
          process.stdout.write(`${JSON.stringify(dryRun(plan), null, 2)}\n`);
          return 0;
        }
        return await start(plan).exited;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        log.line(USAGE);
        return cmd === undefined ? EXIT.usage : 0;
      default:
        throw usage(`unknown command ${JSON.stringify(cmd)}`);
    }
  } catch (e) {
    if (isUserError(e)) {
      log.error(e.data);
      // The launcher's "failed before the process started" (lifecycle 80-89).
      if (e.id.startsWith('platform/launch/')) return EXIT.launchFailed;
      return e.id === 'platform/usage' || e.id.startsWith('platform/') ? EXIT.usage : 1;
    }
    if (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      log.error(usage(e.message).data);
      return EXIT.usage;
    }
    throw e;
  }
}

/**
 * Variables given to `rbp build --env` that this run does not set: the app was built with them and
 * may need them at run time too. Names only: values may be secrets.
 */
export function missingBuildEnv(names: string[] | undefined, userEnv: Record<string, string>): string[] {
  return (names ?? []).filter((n) => !(n in userEnv));
}

function warnMissingBuildEnv(names: string[] | undefined, userEnv: Record<string, string>, log: Logger): void {
  const missing = missingBuildEnv(names, userEnv);
  if (missing.length) log.warn(`set at build (rbp build --env) but not for this run: ${missing.join(', ')}; give them again with --env NAME=VALUE if the app needs them`);
}

async function deploy(o: { out: string; port: number; userEnv: Record<string, string>; instance: string; restart: RestartPolicy; check: boolean; timeoutMs: number; log: Logger }): Promise<number> {
  const { log } = o;
  const plan = planLaunch({ outDir: o.out, port: o.port, userEnv: o.userEnv, instance: o.instance, memory: INSTANCE_SIZES[o.instance]!, args: [] });
  plan.env[RESTART_VARIABLE] = o.restart;
  log.section('Deploy');
  if (plan.task) {
    log.info(`running task: ${plan.argv.join(' ')}`);
    const code = await start(plan).exited;
    log.info(`task exited with status ${code}`);
    return code;
  }
  log.info(`starting process ${plan.process}: ${plan.argv.join(' ')}`);
  const running = start(plan);
  let alive = true;
  void running.exited.then(() => (alive = false));
  const stop = async () => {
    if (alive) running.stop('SIGTERM');
    return running.exited;
  };
  try {
    await waitForPort(o.port, { timeoutMs: o.timeoutMs, alive: () => alive });
  } catch (e) {
    log.line(`Health check failed: ${(e as Error).message}`);
    await stop();
    return EXIT.healthCheckFailed;
  }
  const paths = healthCheckPaths(o.userEnv);
  // With CC_REQUEST_FLOW=block the public port answers 403 by design; the platform's check then
  // reaches the application on its own port.
  const blocked = isBlocked(o.userEnv);
  const checkPort = blocked ? appPortBehindMiddleware({ ...process.env, ...o.userEnv }) : o.port;
  if (blocked) log.info(`CC_REQUEST_FLOW=block: public access is blocked, so the health check goes to the application's port ${checkPort}`);
  if (blocked) await waitForPort(checkPort, { timeoutMs: o.timeoutMs, alive: () => alive }).catch(() => undefined);
  const r = await healthCheck(checkPort, paths);
  for (const l of r.lines) log.line(l);
  if (!r.ok) {
    await stop();
    return EXIT.healthCheckFailed;
  }
  log.info(`deployed: http://127.0.0.1:${o.port}/ answers on ${paths.length} health-check path(s)`);
  if (o.check) {
    await stop();
    return 0;
  }
  return running.exited;
}
