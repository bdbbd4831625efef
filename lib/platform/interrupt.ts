/**
 * SIGINT, SIGTERM and SIGHUP during a build. Buildpacks run in a process group of their own (so a
 * Ctrl-C in the terminal reaches rbp, not npm halfway through a write); on a signal rbp stops that
 * whole group (TERM, then KILL after a grace period), and the build fails at its next step with
 * 128+n, through the same undo path as any failed build: OUT comes back, temp folders go.
 */
import { PhaseFailure, signalExit } from '../cnb/exit.ts';

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const GRACE_MS = 5000;

export class Interrupt {
  signal: NodeJS.Signals | undefined;
  private readonly groups = new Set<number>();
  private readonly handler = (sig: NodeJS.Signals) => {
    this.signal ??= sig;
    for (const g of this.groups) this.stopGroup(g);
  };

  constructor() {
    for (const s of SIGNALS) process.on(s, this.handler);
  }

  /** A child started with `detached: true` leads its own group: a signal stops all of it. */
  track(pid: number | undefined): void {
    if (pid === undefined) return;
    this.groups.add(pid);
    if (this.signal) this.stopGroup(pid);
  }

  untrack(pid: number | undefined): void {
    if (pid !== undefined) this.groups.delete(pid);
  }

  private stopGroup(pgid: number): void {
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pgid, sig);
      } catch {
        // the group is gone
      }
    };
    kill('SIGTERM');
    setTimeout(() => kill('SIGKILL'), GRACE_MS).unref();
  }

  /** Throws once a signal came: the build stops at its next step. */
  check(): void {
    if (this.signal) throw new PhaseFailure(signalExit(this.signal), `interrupted by ${this.signal}`);
  }

  dispose(): void {
    for (const s of SIGNALS) process.off(s, this.handler);
  }
}
