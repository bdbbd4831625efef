/**
 * The steps of a build where the reliability tests stop rbp (RBP_TEST_STOP_AT=<step>: it sends
 * itself SIGSTOP there) to kill it with SIGKILL, and check that OUT and the cache are still usable.
 */
import { raw } from '../config/read.ts';

export const CHECKPOINTS = [
  /** OUT locked, the previous OUT set aside, OUT made anew (empty but for its marker). */
  'begun',
  /** The app copied into OUT's workspace. */
  'copied',
  /** Detection done. */
  'detected',
  /** Layers restored from the cache and the previous build. */
  'restored',
  /** Every buildpack built. */
  'built',
  /** Export: the cache written, launch layers in place, no metadata yet. */
  'exporting',
  /** Export done: rbp.toml written, OUT is complete; the cache's record not yet written, the previous OUT not yet removed. */
  'exported',
  /** Committed; OUT's lock not yet given up. */
  'committed',
] as const;

export type Checkpoint = (typeof CHECKPOINTS)[number];

const stopAt = raw(process.env, 'RBP_TEST_STOP_AT');

export function checkpoint(name: Checkpoint): void {
  if (stopAt === name) process.kill(process.pid, 'SIGSTOP');
}
