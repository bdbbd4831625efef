/**
 * The steps of a build where the reliability tests stop rbp (RBP_TEST_STOP_AT=<step>: it sends
 * itself SIGSTOP there) to kill it with SIGKILL, and check that OUT and the cache are still usable.
 */
import { raw } from '../config/read.ts';

/**
 * In order: begun (OUT locked, the previous OUT set aside, OUT made anew with its marker), copied (the
 * app in OUT's workspace), detected, restored, built, exporting (the cache written, launch layers in
 * place, no metadata yet), exported (rbp.toml written: OUT is complete; the cache's record not yet
 * written, the previous OUT not yet removed), committed (OUT's lock not yet given up).
 */
export const CHECKPOINTS = ['begun', 'copied', 'detected', 'restored', 'built', 'exporting', 'exported', 'committed'] as const;

export type Checkpoint = (typeof CHECKPOINTS)[number];

const stopAt = raw(process.env, 'RBP_TEST_STOP_AT');

export function checkpoint(name: Checkpoint): void {
  if (stopAt === name) process.kill(process.pid, 'SIGSTOP');
}
