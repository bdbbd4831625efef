/**
 * `rbp run`: the launcher (cnb-spec.md §9). The base environment is a short include-list of rbp's
 * own, the operator's RBP_* and the user's variables; launch layers' env goes on top (per buildpack:
 * first every launch layer's bin → PATH and lib → LD_LIBRARY_PATH, then every layer's env/,
 * env.launch/, env.launch/<type>/, layers alphabetically), then exec.d once all env is in place.
 * rbp then becomes the process (execInstead, or handoff.ts), else spawns it and forwards signals.
 * Our own launch process gets rbp's Node.js as RBP_LAUNCHER_NODE to plan on.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { escapeId } from '../cnb/descriptor.ts';
import { applyLayerEnv, applyLayerRoots, type EnvMap } from '../cnb/env.ts';
import { EXIT, PhaseFailure, signalExit } from '../cnb/exit.ts';
import { DRY_RUN_LABEL } from '../cnb/launch.ts';
import { launchLayers } from '../cnb/layers.ts';
import { redactEnv, UserError } from '../errors.ts';
import { checkPortFree } from '../launch/ports.ts';
import { isSet, read } from '../config/read.ts';
import { filteredHostEnv, operatorEnv, TRUST_VARS } from './env.ts';
import { isDir } from './fsops.ts';
import { readLaunchMetadata, type ExportedProcess } from './metadata.ts';
import { findOnPath } from '../fsx.ts';
import { apiAtLeast, isSupportedApi, SUPPORTED_BUILDPACK_APIS } from '../cnb/api.ts';

const LAUNCH_INCLUDE = ['PATH', 'HOME', 'HOSTNAME', 'USER', 'LANG', 'LC_ALL', 'TZ', 'TERM', 'TMPDIR', 'NO_COLOR', ...TRUST_VARS];

export interface RunOptions {
  outDir: string;
  processType?: string;
  port: number;
  userEnv: EnvMap;
  instance: string;
  memory: number;
  args: string[];
  /** rbp run --dry-run: nothing starts, and exec.d programs print on stderr. */
  dryRun?: boolean;
}

export interface LaunchPlan {
  process: string;
  buildpack: string;
  argv: string[];
  cwd: string;
  env: EnvMap;
  /** Whether the process's own launch entrypoint can print its plan (our buildpacks). */
  dryRunAware: boolean;
  task: boolean;
}

/** The process cannot start: the lifecycle's launcher status (82), shown as this user error. */
function launchError(what: string, value: string, rule: string, fix: string): PhaseFailure {
  const e = new UserError({ id: 'platform/launch/process', title: 'Cannot launch the application', seen: { what, value }, rule, fix });
  return new PhaseFailure(EXIT.launchFailed, e.message, e);
}

/**
 * exec.d (cnb-spec.md §5): each executable writes `NAME = "value"` TOML on fd 3; each key is set.
 * Its stdout is the launcher's stdout, as with the lifecycle's launcher; with --dry-run (rbp's own),
 * stderr, so that stdout holds the JSON alone.
 */
function runExecD(dir: string, env: EnvMap, cwd: string, stdout: 1 | 2): void {
  if (!isDir(dir)) return;
  for (const f of fs.readdirSync(dir).sort()) {
    const bin = path.join(dir, f);
    if (!fs.statSync(bin).isFile()) continue;
    const r = spawnSync(bin, [], { cwd, env, stdio: ['ignore', stdout, 'inherit', 'pipe'] });
    if (r.status !== 0)
      throw launchError('exec.d', bin, 'An exec.d program must exit 0.', `Fix ${bin}: ${r.error ? r.error.message : `it exited ${r.status ?? r.signal}`}.`);
    let vars: Record<string, unknown>;
    try {
      vars = parse(r.output[3]?.toString() ?? '');
    } catch (e) {
      throw launchError('exec.d', bin, 'An exec.d program writes TOML to fd 3: NAME = "value" lines.', `Fix ${bin}: ${(e as Error).message.split('\n')[0]}`);
    }
    for (const [k, v] of Object.entries(vars)) if (typeof v === 'string') env[k] = v;
  }
}

/** The launcher's check of metadata.toml's buildpacks (exit 12, as lifecycle cmd/launcher). */
function verifyLaunchApi(bp: { id: string; api?: unknown }, out: string): void {
  if (isSupportedApi(bp.api)) return;
  const e = new UserError({
    id: 'platform/launch/api-unsupported',
    title: `The build used buildpack ${bp.id} of a Buildpack API the launcher does not run`,
    seen: { what: `api of ${bp.id} in layers/config/metadata.toml`, value: String(bp.api), where: out },
    rule: `The launcher runs the processes of buildpacks of Buildpack API ${SUPPORTED_BUILDPACK_APIS.join(', ')}.`,
    fix: `Build again with this rbp (rbp build APP --out ${out}).`,
  });
  throw new PhaseFailure(EXIT.buildpackApi, e.message, e);
}

export function planLaunch(opts: RunOptions): LaunchPlan {
  const out = path.resolve(opts.outDir);
  const md = readLaunchMetadata(out);
  if (!md) {
    throw new UserError({
      id: 'platform/run/not-built',
      title: 'Nothing built there',
      seen: { what: 'OUT', value: opts.outDir },
      rule: 'rbp run takes the output directory of rbp build (it holds layers/config/metadata.toml).',
      fix: `Build first: rbp build APP --out ${opts.outDir}`,
    });
  }
  const type = opts.processType ?? md['buildpack-default-process-type'];
  const types = md.processes.map((p) => p.type).join(', ');
  const rule = 'Without --process, the build must have set a default process.';
  if (!type) throw launchError('--process', '(none)', rule, `Pick one: ${types || '(the build declared no process)'}.`);
  const proc: ExportedProcess | undefined = md.processes.find((p) => p.type === type);
  if (!proc) throw launchError('--process', type, `The process must be one the build declared: ${types || 'none'}.`, 'Use one of those types.');
  const task = type === 'task';
  // As the lifecycle's launcher: every buildpack of the build must be of a Buildpack API it supports.
  for (const bp of md.buildpacks) verifyLaunchApi(bp, out);
  const appDir = path.join(out, 'workspace');
  const env: EnvMap = { ...filteredHostEnv(process.env, LAUNCH_INCLUDE), ...operatorEnv(), ...opts.userEnv };
  Object.assign(env, { RBP_INSTANCE_SIZE: opts.instance, RBP_INSTANCE_MEMORY: String(opts.memory) });
  if (!task) Object.assign(env, { PORT: String(opts.port), RBP_PUBLIC_PORT: String(opts.port) });
  else delete env.PORT;
  const layerDirs = md.buildpacks.map((bp) => launchLayers(path.join(out, 'layers', escapeId(bp.id))));
  for (const dirs of layerDirs) {
    for (const d of dirs) applyLayerRoots(env, d, 'launch');
    for (const d of dirs) applyLayerEnv(env, d, 'launch', type);
  }
  for (const d of layerDirs.flat()) {
    runExecD(path.join(d, 'exec.d'), env, appDir, opts.dryRun ? 2 : 1);
    runExecD(path.join(d, 'exec.d', type), env, appDir, opts.dryRun ? 2 : 1);
  }
  const cwd = proc['working-dir'] ? path.resolve(appDir, proc['working-dir']) : appDir;
  const [cmd, ...fixed] = proc.command;
  const bpApi = md.buildpacks.find((b) => b.id === proc['buildpack-id'])?.api;
  const args = processArgs(proc, opts.args, bpApi);
  const aware = (md.labels ?? []).some((l) => l.key === DRY_RUN_LABEL && l.value.split(',').includes(type));
  // Our launch plans on a Node.js: rbp's own, unless the operator names one.
  if (aware && !isSet(env, 'RBP_LAUNCHER_NODE')) Object.assign(env, { RBP_LAUNCHER_NODE: process.execPath });
  // metadata.toml comes from disk: a process written without `direct` is not the shell form.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare
  if (proc.direct === false) {
    // Before Buildpack API 0.9: bash, after the profile scripts, from the app folder.
    const argv = shellArgv({
      profiles: profileScripts(layerDirs.flat(), type, appDir),
      workingDir: cwd,
      command: proc.command.join(' '),
      args,
      caller: process.argv[1] ?? 'rbp',
    });
    return { process: type, buildpack: proc['buildpack-id'], argv, cwd: appDir, env, dryRunAware: aware, task };
  }
  // Looked up before moving to working-dir, as the lifecycle's launcher: a relative command is relative to the app.
  const bin = findOnPath(cmd!, env.PATH, appDir);
  if (!bin)
    throw launchError(
      'process command',
      cmd!,
      `The command of process ${type} must be an executable on the launch PATH.`,
      'Check the launch layers of the buildpack that declared it.',
    );
  return { process: type, buildpack: proc['buildpack-id'], argv: [bin, ...fixed, ...args], cwd, env, dryRunAware: aware, task };
}

/**
 * A process's arguments after its command, with the user's arguments (lifecycle launch/process.go,
 * Platform API >= 0.10): a command with fixed arguments keeps them, then the user's arguments or
 * else `args`; a one-word command gets `args` then the user's for a buildpack of API < 0.9, the
 * user's instead of `args` from 0.9 on.
 */
export function processArgs(proc: Pick<ExportedProcess, 'command' | 'args'>, user: string[], bpApi: string | undefined): string[] {
  const args = proc.args ?? [];
  if (proc.command.length > 1 || user.length === 0) return user.length ? user : args;
  return apiAtLeast(bpApi, '0.9') ? user : [...args, ...user];
}

/**
 * The profile scripts a shell process sources (lifecycle launch/shell.go): each launch layer's
 * `profile.d/*`, then its `profile.d/<type>/*` (buildpacks in order, layers and files by name),
 * then the app's `.profile` (named relative to the app folder, where bash starts).
 */
export function profileScripts(layerDirs: string[], type: string, appDir: string): string[] {
  const files = (dir: string) =>
    isDir(dir)
      ? fs
          .readdirSync(dir, { withFileTypes: true })
          .filter((e) => !e.isDirectory())
          .map((e) => path.join(dir, e.name))
          .sort()
      : [];
  const out = layerDirs.flatMap((d) => [...files(path.join(d, 'profile.d')), ...files(path.join(d, 'profile.d', type))]);
  const app = fs.statSync(path.join(appDir, '.profile'), { throwIfNoEntry: false });
  if (app && !app.isDirectory()) out.push('.profile');
  return out;
}

/**
 * The lifecycle's bash launch (launch/bash.go), word for word: a script that sources the profiles,
 * moves to the working folder and execs a nested bash. Without arguments the command is a bash
 * script; with arguments, the command and each argument are one word each, evaluated by the shell
 * (`"$(eval echo \"$1\")"`: variables expand, quotes are kept).
 */
export function shellArgv(p: { profiles: string[]; workingDir: string; command: string; args: string[]; caller: string }): string[] {
  let script = p.profiles.map((f) => `source "${f}"\n`).join('');
  script += `cd "${p.workingDir}"\n`;
  if (p.args.length === 0) script += 'exec bash -c "$@"';
  else {
    const words = ['"$(eval echo \\"$0\\")"', ...p.args.map((_, i) => `"$(eval echo \\"\${${i + 1}}\\")"`)];
    script += `exec bash -c '${words.join(' ')}' "\${@:1}"`;
  }
  return ['/bin/bash', '-c', script, p.caller, p.command, ...p.args];
}

/** The plan as JSON; for our processes, with their launch entrypoint's own plan under `launch`. */
export function dryRun(plan: LaunchPlan): object {
  const env = Object.fromEntries(Object.entries(redactEnv(plan.env)).sort(([a], [b]) => (a < b ? -1 : 1)));
  const outp: Record<string, unknown> = { process: plan.process, buildpack: plan.buildpack, argv: plan.argv, cwd: plan.cwd, env };
  if (plan.dryRunAware) {
    const r = spawnSync(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: { ...plan.env, RBP_DRY_RUN: '1' }, encoding: 'utf8' });
    if (r.status !== 0)
      throw launchError(
        'process',
        plan.process,
        'The launch entrypoint must print its plan with RBP_DRY_RUN=1.',
        `It failed (exit ${r.status}): ${r.stderr.trim()}`,
      );
    outp.launch = JSON.parse(r.stdout);
  }
  return outp;
}

export interface Running {
  child: ChildProcess;
  exited: Promise<number>;
  stop(signal?: NodeJS.Signals): void;
}

/** Our buildpacks' processes (ids `rbp/…`) listen on the public port: it must be free before one starts. */
export async function checkListenPort(plan: LaunchPlan, port: number): Promise<void> {
  if (!plan.task && plan.buildpack.startsWith('rbp/')) await checkPortFree(port);
}

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

/** Whether execve can start `file`: an executable ELF or `#!` script (a failed execve aborts Node.js, so it is checked first). */
function execable(file: string): boolean {
  const head = Buffer.alloc(4);
  try {
    fs.accessSync(file, fs.constants.X_OK);
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, head, 0, 4, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
  return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])) || head.subarray(0, 2).toString('latin1') === '#!';
}

/**
 * `rbp run` steps aside when its Node.js has process.execve (22.15+, 23.11+): rbp becomes the
 * process, as the lifecycle's launcher does, so no Node.js stays resident beside it and the signals
 * and the exit status are the process's own. Returns only when it cannot (this Node.js has no execve,
 * or the command is not something execve starts); the caller then starts and waits for it.
 */
export function execInstead(plan: LaunchPlan): void {
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function' || !execable(plan.argv[0]!)) return;
  // Node.js ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across execve; a spawned
  // child gets them back at their defaults. Handling then releasing a signal leaves it at SIG_DFL.
  for (const sig of ['SIGPIPE', 'SIGXFSZ'] as const) {
    const noop = () => {};
    process.on(sig, noop);
    process.off(sig, noop);
  }
  const before = process.cwd();
  try {
    process.chdir(plan.cwd);
    execve.call(process, plan.argv[0]!, plan.argv, plan.env);
  } catch {
    // Refused before replacing anything: rbp starts the process as a child instead.
    process.chdir(before);
  }
}

/** Starts the process; SIGTERM/SIGINT/SIGHUP sent to rbp reach it. Resolves with its exit status. */
export function start(plan: LaunchPlan, stdio: 'inherit' | 'pipe' = 'inherit'): Running {
  // rbp listens before the process starts (a signal between the two would end rbp alone); one that
  // comes before the process exists is passed on as soon as it does.
  // eslint-disable-next-line prefer-const
  let child: ChildProcess | undefined;
  const early: NodeJS.Signals[] = [];
  const signalGroup = (sig: NodeJS.Signals) => {
    if (!child?.pid) {
      if (!child) early.push(sig);
      return;
    }
    try {
      process.kill(-child.pid, sig);
    } catch {
      child.kill(sig);
    }
  };
  // As a platform gives a stopping container a grace period: a process still running this long after
  // SIGTERM or SIGINT is killed; 5 s more than our launch's own RBP_STOP_TIMEOUT for what it supervises.
  const graceMs = read<number>(plan.env, 'RBP_STOP_TIMEOUT')!.value * 1000 + 5000;
  let kill: NodeJS.Timeout | undefined;
  const forward = (sig: NodeJS.Signals) => () => {
    signalGroup(sig);
    if (sig === 'SIGHUP' || kill) return;
    kill = setTimeout(() => {
      process.stderr.write(`! rbp: process ${plan.process} still running ${graceMs / 1000} s after ${sig}: SIGKILL\n`);
      signalGroup('SIGKILL');
    }, graceMs);
  };
  const handlers = (['SIGTERM', 'SIGINT', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  // In its own process group, as a container's process is: a signal rbp forwards reaches everything
  // the process started, and the terminal's Ctrl-C reaches it only through rbp.
  const started = spawn(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    stdio: stdio === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child = started;
  for (const sig of early.splice(0)) signalGroup(sig);
  const exited = new Promise<number>((resolve) => {
    started.on('error', (e) => {
      clearTimeout(kill);
      for (const [s, h] of handlers) process.off(s, h);
      process.stderr.write(`rbp: cannot start ${plan.argv[0]}: ${e.message}\n`);
      resolve(EXIT.launchFailed);
    });
    started.on('exit', (code, signal) => {
      clearTimeout(kill);
      for (const [s, h] of handlers) process.off(s, h);
      resolve(code ?? signalExit(signal ?? 'SIGKILL'));
    });
  });
  // A stop rbp decides itself (rbp deploy --check, a failed health check) has the same grace period.
  return { child: started, exited, stop: (sig = 'SIGTERM') => forward(sig)() };
}
