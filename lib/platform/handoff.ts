/**
 * `rbp run` hands its place over: nothing of rbp stays resident beside the process it starts. The
 * package's bin, dist/rbp (scripts/rbp.sh), runs rbp.js with a channel on fd 3 and its pid in
 * HANDOFF_PID: rbp.js plans the launch, writes on fd 3 the few lines of sh that start the process
 * (its folder, exactly its environment, its argv) and exits 0; the wrapper execs them. The process
 * then has the pid `rbp run` was started with, as with execve (launcher.ts execInstead): the
 * platform's signals reach it and its exit status is the run's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shQuote } from '../launch/plan-data.ts';
import { EXIT } from '../cnb/exit.ts';
import type { LaunchPlan } from './launcher.ts';

/**
 * Set by dist/rbp for rbp.js: the wrapper's pid, which the process will have; the channel is fd 3.
 * Between rbp's own two halves, as extra-ca.ts's DEFERRED_CA_CERTS: not a setting (lib/config).
 */
export const HANDOFF_PID = '_RBP_HANDOFF';
export const HANDOFF_FD = 3;

/**
 * The wrapper's pid when rbp.js runs under dist/rbp with a channel to hand over through (fd 3 a
 * pipe); else undefined. Never a guess: in a Node.js started without it, fd 3 may be libuv's own.
 */
export function handoffChannel(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const pid = Number(env[HANDOFF_PID]);
  if (!Number.isInteger(pid) || pid <= 1) return undefined;
  try {
    return fs.fstatSync(HANDOFF_FD).isFIFO() ? pid : undefined;
  } catch {
    return undefined;
  }
}

type Process = Pick<LaunchPlan, 'argv' | 'cwd' | 'env'>;

/**
 * Why the sh lines could not start `p` as execve would, or undefined when they can: `env -i` reads
 * NAME=VALUE words up to the command and options before them, so the command must be an absolute
 * path without `=` and no name may start with `-`; no word may hold a NUL byte.
 */
export function handoffProblem(p: Process): string | undefined {
  const file = p.argv[0] ?? '';
  if (!path.isAbsolute(file) || file.includes('=')) return `the command ${JSON.stringify(file)} is not an absolute path without '='`;
  if (!path.isAbsolute(p.cwd)) return `the folder ${p.cwd} is not absolute`;
  const bad = Object.keys(p.env).find((k) => k === '' || k.startsWith('-') || k.includes('='));
  if (bad !== undefined) return `the variable name ${JSON.stringify(bad)}`;
  const words = [...p.argv, p.cwd, ...Object.entries(p.env).flat()];
  if (words.some((w) => w.includes('\0'))) return 'a NUL byte in an argument or a variable';
  return undefined;
}

/**
 * The sh that starts `p` in place of the wrapper: into its folder, then `exec env -i` with exactly
 * its environment (env execs the command in turn: the same pid). A folder that is gone fails as a
 * launch failure (82), as the lifecycle's launcher does.
 */
export function handoffScript(p: Process): string {
  const vars = Object.entries(p.env).map(([k, v]) => shQuote(`${k}=${v}`));
  return [`cd ${shQuote(p.cwd)} || exit ${EXIT.launchFailed}`, ['exec env -i', ...vars, ...p.argv.map(shQuote)].join(' '), ''].join('\n');
}

/** Writes the hand-over on the channel: `handed`, or `gone` when the wrapper is no longer there to read it (a signal stopped it). */
export function handOver(p: Process): 'handed' | 'gone' {
  const text = Buffer.from(handoffScript(p));
  try {
    for (let at = 0; at < text.length;) at += fs.writeSync(HANDOFF_FD, text, at);
    fs.closeSync(HANDOFF_FD);
    return 'handed';
  } catch {
    return 'gone';
  }
}

/** Closes the channel (handoffChannel said there is one): a process rbp starts itself must not hold the wrapper's pipe. */
export function closeChannel(): void {
  try {
    fs.closeSync(HANDOFF_FD);
  } catch {
    // already closed
  }
}
