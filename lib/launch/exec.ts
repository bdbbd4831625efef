/**
 * The launcher steps aside (DESIGN, the launch entrypoint, step 3). When nothing needs supervising
 * and the Node.js it runs on has `process.execve` (22.15+, 23.11+), the launch process becomes the
 * app: the same pid, so the platform's signals reach the app itself, its exit status is the run's,
 * and no Node.js stays resident beside it. Otherwise the supervisor (supervisor.ts) runs the app.
 *
 * The launcher stays when:
 * - a request-flow chain or the block stands in front of the app (it starts and watches them);
 * - the runtime asks for it (`Plan.supervise`: the node runtime's poststart runs after the app exits);
 * - the app is a shell that does not `exec` its command: a SIGTERM to the shell alone would leave its
 *   children running, and only the supervisor signals the whole process group;
 * - this Node.js has no `process.execve`;
 * - the command is not something execve can start (not found, not executable, neither ELF nor `#!`).
 *   A failed execve is not an exception Node.js lets us catch: it aborts the process, so every
 *   cause we can see is checked first.
 */
import fs from 'node:fs';
import { findOnPath, isExecutableFile } from '../fsx.ts';

/** Why the launch stays beside the app: a restart policy; a shell that would leave children behind. */
export const RESTART_WHY = 'RBP_RESTART=on-failure: the launcher starts the app again when it crashes';
export const KEEPS_CHILDREN_WHY = 'the shell command does not end in exec: only the supervisor stops its whole process group';

export type LaunchMode = { mode: 'exec'; why: string; file: string } | { mode: 'supervise'; why: string };

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

/** This Node.js's `process.execve`, if it has one. */
export function execveOf(proc: NodeJS.Process = process): Execve | undefined {
  const f = (proc as unknown as { execve?: unknown }).execve;
  return typeof f === 'function' ? (f.bind(proc) as Execve) : undefined;
}

/** Why execve could not start `file`, or undefined when it can: ELF or a `#!` script, executable. */
export function execveProblem(file: string): string | undefined {
  if (!isExecutableFile(file)) return `${file} is not an executable file`;
  const head = Buffer.alloc(4);
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    fs.readSync(fd, head, 0, 4, 0);
  } catch {
    return `${file} cannot be read`;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  // execvp runs a script without `#!` with /bin/sh; execve refuses it (ENOEXEC).
  if (head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])) || head.subarray(0, 2).toString('latin1') === '#!') return undefined;
  return `${file} is neither a binary nor a #! script`;
}

/** A `sh -c` command that ends in `exec`: the shell becomes the command, and signals reach it. */
export function shellKeepsChildren(argv: string[]): boolean {
  if (!['sh', '/bin/sh', 'bash', '/bin/bash'].includes(argv[0] ?? '') || argv[1] !== '-c') return false;
  const script = (argv[2] ?? '').trim();
  return !/^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*exec\s/.test(script) || /[;&|\n]/.test(script.replace(/'[^']*'|"[^"]*"/g, ''));
}

export interface ModeInput {
  argv: string[];
  /** The app's environment, as it would be spawned (its PATH finds argv[0]). */
  env: Record<string, string>;
  cwd: string;
  /** Why the runtime needs the launcher to stay (Plan.supervise). */
  supervise?: string;
  /** The request flow in front of the app, when there is one. */
  flow?: { block: boolean; chain: string[] };
  execve: boolean;
  nodeVersion: string;
  /** RBP_RESTART: with on-failure the launcher stays to start the app again. */
  restart?: 'no' | 'on-failure';
}

/** Whether the launcher replaces itself with the app, and why; every reason to stay is given. */
export function chooseMode(input: ModeInput): LaunchMode {
  const stay: string[] = [];
  if (input.flow?.block) stay.push('public access is blocked: the launcher answers 403 in front of the app');
  else if (input.flow?.chain.length) stay.push(`request flow: ${input.flow.chain.join(' → ')} in front of the app`);
  if (input.supervise) stay.push(input.supervise);
  if (input.restart === 'on-failure') stay.push(RESTART_WHY);
  if (shellKeepsChildren(input.argv)) stay.push(KEEPS_CHILDREN_WHY);
  if (!input.execve) stay.push(`Node.js ${input.nodeVersion} (the launcher's) has no process.execve (22.15+, 23.11+)`);
  const cmd = input.argv[0] ?? '';
  const file = resolveCommand(cmd, input.env.PATH, input.cwd);
  const problem = file ? execveProblem(file) : `${cmd} is not on the app's PATH`;
  if (problem) stay.push(problem);
  if (stay.length) return { mode: 'supervise', why: stay.join('; ') };
  return { mode: 'exec', file: file!, why: `nothing to supervise: the launcher replaces itself with ${file} (process.execve)` };
}

/**
 * Replaces this process with `argv` run from `file` in `cwd`, with exactly `env`. Returns only if
 * execve refused before trying (an error Node.js throws); the caller then supervises instead.
 */
export function stepAside(
  file: string,
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  execve: Execve,
  note = `- exec ${argv[0]} (the launcher steps aside: nothing to supervise)\n`,
): Error {
  // Node.js ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across execve; a spawned
  // child gets them back at their defaults. Handling then releasing a signal leaves it at SIG_DFL.
  for (const sig of ['SIGPIPE', 'SIGXFSZ'] as const) {
    const noop = () => {};
    process.on(sig, noop);
    process.off(sig, noop);
  }
  const before = process.cwd();
  try {
    process.chdir(cwd);
    // Written synchronously: nothing buffered in this process survives the exec.
    if (note) fs.writeSync(1, note);
    return execve(file, argv, env);
  } catch (e) {
    try {
      process.chdir(before);
    } catch {
      // The supervisor spawns with an explicit cwd anyway.
    }
    return e instanceof Error ? e : new Error(String(e));
  }
}

/**
 * `exec` in front of a simple command, so the shell is replaced by the app and signals reach it
 * (Debian's sh does not exec the last command by itself). Compound commands stay as they are.
 */
export function execCommand(command: string): string {
  if (/[;&|<>()`$\n\\]|\b(if|for|while|case|until)\b/.test(command.replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, ''))) return command;
  const m = /^((?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*)(.+)$/s.exec(command.trim());
  if (!m || /^exec\s/.test(m[2]!)) return command;
  return `${m[1]}exec ${m[2]}`;
}

/** `/bin/sh -c` with `exec` put in front of a simple command (see execCommand). */
export function shellCommand(command: string): string[] {
  return ['/bin/sh', '-c', execCommand(command)];
}

/** Where the process's command is (lib/fsx.ts findOnPath). */
export const resolveCommand = findOnPath;
