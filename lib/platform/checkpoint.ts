/**
 * Named steps of a build, where rbp's reliability tests stop it to kill it there (SIGKILL) and look
 * at OUT as any reader would (test/reliability/out-atomic.test.ts): with RBP_TEST_STOP_AT=<name>,
 * rbp stops itself (SIGSTOP) on reaching that step, and the test kills it, or lets it go on
 * (SIGCONT). Every step of the OUT transaction that changes what is on disk has one.
 */
import { raw } from '../config/read.ts';

export const CHECKPOINTS = [
  /** OUT locked, an earlier build's litter swept, the new generation made (empty but for its marker). */
  'begun',
  /** The app copied into the new generation's workspace. */
  'copied',
  /** Detection done. */
  'detected',
  /**
   * Only where the group's first buildpack waits at the build gate (ours, build-gate.ts): its
   * bin/build started and waiting, restore not begun.
   */
  'prestarted',
  /** Layers restored from the cache and the previous build. */
  'restored',
  /** Every buildpack built. */
  'built',
  /** Export: the new cache written, launch layers in place, no metadata yet. */
  'exporting',
  /** Export: metadata.toml written, not rbp.toml. */
  'exported-metadata',
  /** Export done: rbp.toml written, the new generation is complete. */
  'exported',
  /** About to switch OUT to the new generation. */
  'switching',
  /** Only where renameat2 is missing: OUT renamed away, the new generation not yet renamed in. */
  'switch-halfway',
  /** OUT switched; the new cache not yet in place. */
  'switched',
  /** The new cache in place; spares not yet taken from the previous generation. */
  'cache-committed',
  /** Spares taken; the previous generation not yet removed. */
  'spared',
  /** The previous generation moved aside (OUT.rbp-old/), not yet removed. */
  'retiring',
  /** Committed; OUT's lock not yet given up. */
  'committed',
] as const;

export type Checkpoint = (typeof CHECKPOINTS)[number];

const stopAt = raw(process.env, 'RBP_TEST_STOP_AT');

export function checkpoint(name: Checkpoint): void {
  if (stopAt === name) process.kill(process.pid, 'SIGSTOP');
}
