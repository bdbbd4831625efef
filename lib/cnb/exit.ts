/**
 * Exit codes of the Buildpack API and of the lifecycle phases (cnb-spec.md §1, §8), and the one
 * policy that turns an error into an exit code, for the buildpacks, the launch entrypoint and rbp.
 */
import os from 'node:os';
import { isUserError, type UserErrorData } from '../errors.ts';

export const EXIT = {
  ok: 0,
  /** bin/detect: this buildpack does not apply. */
  detectFail: 100,
  /** bin/detect, bin/build: broken input or a bug. */
  error: 1,
  /** Lifecycle: a buildpack.toml it cannot read (its generic failure, as it cannot initialise its detector). */
  descriptorInvalid: 1,
  /** Lifecycle: a buildpack's Buildpack API is one it does not support (or does not parse). */
  buildpackApi: 12,
  /** Lifecycle: every group failed detection. */
  detectNoGroup: 20,
  /** Lifecycle: detection failed with at least one buildpack error. */
  detectError: 21,
  /** Lifecycle: a buildpack's bin/build failed. */
  buildFailed: 51,
  /** Lifecycle: the build failed otherwise, e.g. a buildpack wrote invalid output (launch.toml, <layer>.toml, build.toml, SBOM). */
  buildError: 52,
  /** Lifecycle: export failed. */
  exportFailed: 62,
  /** Launcher: failure before the process started. */
  launchFailed: 82,
  /** rbp: bad command line or bad input. */
  usage: 2,
  /** rbp deploy: the health check failed. */
  healthCheckFailed: 3,
  /** A bug (EX_SOFTWARE): an error that is not a user error. */
  bug: 70,
} as const;

/**
 * A phase ended with the lifecycle's status for it (51 a buildpack failed, 62 export failed, 82
 * the process could not start, 128+n a signal). `shown` is what to show, when it is a user error.
 */
export class PhaseFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly shown?: unknown,
    /** The user error a buildpack printed before it failed (its id, title, rule and fix), read from its output. */
    readonly reported?: UserErrorData,
  ) {
    super(message);
    this.name = 'PhaseFailure';
  }
}

/**
 * 128 + the signal's number, as a shell reports a process ended by it; 15 stands in for a name this
 * system lacks (SIGINFO, SIGLOST on Linux), whatever @types/node's table says.
 */
export function signalExit(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = os.constants.signals;
  return 128 + (numbers[signal] ?? 15);
}

/**
 * Who is exiting: `rbp` (the CLI), `buildpack` (bin/detect, bin/build: any failure is 1, the
 * Buildpack API's error) or `entrypoint` (a launch entrypoint: 1 for bad input, 70 for a bug).
 */
export type Exiter = 'rbp' | 'buildpack' | 'entrypoint';

export function exitCodeFor(e: unknown, who: Exiter): number {
  if (e instanceof PhaseFailure) return e.code;
  if (who === 'buildpack') return EXIT.error;
  if (isUserError(e)) return who === 'rbp' ? EXIT.usage : EXIT.error;
  return EXIT.bug;
}
