/**
 * Lock files an install writes that the source did not hold (`npm install` writes package-lock.json):
 * removed after the install, so the app is the same whether the dependencies were installed or their
 * layer reused, and the same input gives the same image (issue 23). The app's own lock files stay.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_FILES } from '../../../lib/js-project/lock-files.ts';
import type { Logger } from '../../../lib/log.ts';

/** The lock files at the app root now. */
export function presentLocks(appDir: string): Set<string> {
  return new Set(Object.values(LOCK_FILES).filter((f) => fs.existsSync(path.join(appDir, f))));
}

/** Removes the lock files that appeared since `before`. */
export function removeGeneratedLocks(appDir: string, before: Set<string>, log: Logger): void {
  for (const f of presentLocks(appDir)) {
    if (before.has(f)) continue;
    fs.rmSync(path.join(appDir, f), { force: true });
    log.debug(`removed ${f}, written by the install: the source has none, and a rebuild that reuses the dependencies writes none`);
  }
}
