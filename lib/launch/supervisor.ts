/**
 * The supervisor of the launch entrypoint: starts the members of the chain inside-out (the app
 * first), waits for each to listen before starting the next, forwards SIGTERM/SIGINT/SIGHUP to all,
 * and when any member exits, stops the others and resolves with a status that says which one failed.
 *
 * Each process runs in its own process group and signals go to the whole group, so a shell wrapper
 * (`/bin/sh -c`, `npm start`) never leaves its children behind.
 */
import { spawn } from 'node:child_process';
import type { Logger } from '../log.ts';
import { formatDuration } from '../log.ts';
import { signalNumber } from '../cnb/exit.ts';
import { listening } from './request-flow/allocate.ts';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** It could not be started at all. */
  error?: Error;
}

export interface Handle {
  pid?: number;
  exited: Promise<Exit>;
  signal(sig: NodeJS.Signals): void;
}

export interface Member {
  /** For the log: `app`, `cache proxy`. */
  name: string;
  /** The command, as the log may show it. */
  shown: string;
  /** The port it must accept connections on before the next member starts. */
  listen?: number;
  /** The supervisor's status when this member is the one that ends the run. */
  status(exit: Exit): number;
  /** The status when it does not listen in time. */
  notListeningStatus?: number;
  /** While waiting for it to listen: a port that must stay closed, and what it means if it opens. */
  misplaced?: { port: number; message: string };
  start(): Handle;
  cleanup?(): void;
}

export interface SuperviseOptions {
  log: Logger;
  /** How long a member may take to listen. */
  listenTimeoutMs: number;
  /** How long members get between SIGTERM and SIGKILL when the run stops. */
  stopTimeoutMs: number;
  /** The member whose status is the launcher's when the run ends by a signal (the app). */
  primary: string;
  /** Printed once every member listens. */
  ready?: string;
  /** Filled with how the run ended: a signal stopped it, or a member exited (cleanly or not). */
  outcome?: { cause?: 'signal' | 'clean-exit' | 'failure' };
  /** A failure is followed by a restart (RBP_RESTART=on-failure): the launcher does not exit. */
  restarts?: boolean;
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export function exitStatus(exit: Exit): number {
  if (exit.code !== null) return exit.code;
  return 128 + (exit.signal ? (signalNumber(exit.signal) ?? 0) : 0);
}

function describeExit(exit: Exit): string {
  if (exit.error) return `could not start (${exit.error.message})`;
  return exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`;
}

/** A process in its own process group; stdin closed unless asked. */
export function spawnMember(argv: string[], opts: { env: Record<string, string>; cwd?: string; stdin?: 'inherit' | 'ignore' }): Handle {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: [opts.stdin ?? 'ignore', 'inherit', 'inherit'], detached: true });
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    pid: child.pid,
    exited,
    signal(sig) {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is gone, or was never created (the process did not start).
      }
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function supervise(members: Member[], opts: SuperviseOptions): Promise<number> {
  const { log } = opts;
  const started: { member: Member; handle: Handle; done: boolean; exit?: Exit }[] = [];
  let firstExit: ((v: { member: Member; exit: Exit }) => void) | undefined;
  const exitedOne = new Promise<{ member: Member; exit: Exit }>((r) => (firstExit = r));
  let gotSignal: ((s: NodeJS.Signals) => void) | undefined;
  const signalled = new Promise<NodeJS.Signals>((r) => (gotSignal = r));
  let stopping: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    // Forwarded at once to everything running; repeating a signal while stopping changes nothing.
    if (stopping === sig) return;
    stopping = sig;
    log.info(`${sig}: stopping ${started.map((s) => s.member.name).join(', ')}`);
    for (const s of started) if (!s.done) s.handle.signal(sig);
    gotSignal!(sig);
  };
  const handlers = SIGNALS.map((s) => [s, () => onSignal(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);

  const stopAll = async (): Promise<void> => {
    for (const s of started) s.handle.signal('SIGTERM');
    const all = Promise.all(started.map((s) => s.handle.exited));
    const timedOut = await Promise.race([all.then(() => false), sleep(opts.stopTimeoutMs).then(() => true)]);
    if (timedOut) {
      const left = started.filter((s) => !s.done).map((s) => s.member.name);
      log.line(`! ${left.join(', ')} still running after ${formatDuration(opts.stopTimeoutMs)}: SIGKILL`);
    }
    // SIGKILL every group: whatever a member left behind goes too.
    for (const s of started) s.handle.signal('SIGKILL');
    await Promise.race([all, sleep(2000)]);
    for (const s of started) s.member.cleanup?.();
  };

  const finish = async (status: number, why?: string): Promise<number> => {
    await stopAll();
    for (const [s, h] of handlers) process.off(s, h);
    if (why) log.line(`! launch exits with status ${status}: ${why}`);
    return status;
  };

  const fail = (member: Member, exit: Exit): Promise<number> => {
    const status = member.status(exit);
    if (member.name === opts.primary && status === 0 && !exit.error) {
      // The app ending by itself with status 0 is no failure: say so plainly.
      if (opts.outcome) opts.outcome.cause = 'clean-exit';
      log.info(`${member.name} exited with status 0${started.length > 1 ? '; stopping the others' : ''}`);
      return finish(0);
    }
    if (opts.outcome) opts.outcome.cause = 'failure';
    log.line(`! ${member.name} (${member.shown}) ${describeExit(exit)}${started.length > 1 ? '; stopping the others' : ''}`);
    return finish(status, opts.restarts ? undefined : `${member.name} failed`);
  };

  const byPrimary = async (sig: NodeJS.Signals): Promise<number> => {
    if (opts.outcome) opts.outcome.cause = 'signal';
    await stopAll();
    for (const [s, h] of handlers) process.off(s, h);
    const primary = started.find((s) => s.member.name === opts.primary);
    return primary?.exit ? exitStatus(primary.exit) : 128 + (signalNumber(sig) ?? 0);
  };

  const t0 = performance.now();
  for (const member of members) {
    if (stopping) return byPrimary(stopping);
    log.info(`starting ${member.name}${member.listen ? ` on port ${member.listen}` : ''}: ${member.shown}`);
    const entry: (typeof started)[number] = { member, handle: member.start(), done: false };
    started.push(entry);
    void entry.handle.exited.then((exit) => {
      entry.done = true;
      entry.exit = exit;
      firstExit!({ member, exit });
    });
    if (member.listen === undefined) continue;
    const t1 = performance.now();
    const outcome = await Promise.race([
      waitListening(member, opts.listenTimeoutMs, () => entry.done || stopping !== undefined).then((listened) => ({ listened })),
      exitedOne.then((e) => ({ exited: e })),
      signalled.then((sig) => ({ sig })),
    ]);
    if ('exited' in outcome) return fail(outcome.exited.member, outcome.exited.exit);
    if ('sig' in outcome) return byPrimary(outcome.sig);
    if (outcome.listened !== true) {
      if (opts.outcome) opts.outcome.cause = 'failure';
      log.line(`! ${member.name} ${outcome.listened}`);
      return finish(member.notListeningStatus ?? member.status({ code: 1, signal: null }), `${member.name} did not listen`);
    }
    log.detail(`listening on ${member.listen} (${formatDuration(performance.now() - t1)})`);
  }
  if (opts.ready) log.info(`${opts.ready} (${formatDuration(performance.now() - t0)})`);
  const outcome = await Promise.race([exitedOne.then((e) => ({ exited: e })), signalled.then((sig) => ({ sig }))]);
  if ('sig' in outcome) return byPrimary(outcome.sig);
  return fail(outcome.exited.member, outcome.exited.exit);
}

/** true once the member listens; otherwise why not. */
async function waitListening(member: Member, timeoutMs: number, gone: () => boolean): Promise<true | string> {
  const deadline = performance.now() + timeoutMs;
  let delay = 20;
  while (!gone()) {
    if (await listening(member.listen!)) return true;
    if (member.misplaced && (await listening(member.misplaced.port))) return member.misplaced.message;
    if (performance.now() > deadline) return `did not listen on port ${member.listen} within ${formatDuration(timeoutMs)}`;
    await sleep(delay);
    delay = Math.min(200, delay * 2);
  }
  // It exited or a signal came: the race reports that.
  return new Promise(() => {});
}
