/**
 * Lock files an install writes that the source did not hold (`npm install` writes package-lock.json
 * when there is none): kept in a cache layer and put back when the modules layer is reused, so the app
 * after the build is the same whether the dependencies were installed or reused, and the same input
 * gives the same image. The app's own lock files are left as they are.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_FILES } from '../../../lib/js-project/lock-files.ts';
import type { Logger } from '../../../lib/log.ts';

/** The lock files at the app root now. */
export function presentLocks(appDir: string): Set<string> {
  return new Set(Object.values(LOCK_FILES).filter((f) => fs.existsSync(path.join(appDir, f))));
}

/** After an install: the lock files that appeared since `before`, kept in the folder `kept` (a cache layer). */
export function keepGeneratedLocks(appDir: string, before: Set<string>, kept: string, log: Logger): void {
  fs.rmSync(kept, { recursive: true, force: true });
  fs.mkdirSync(kept, { recursive: true });
  for (const f of presentLocks(appDir)) {
    if (before.has(f)) continue;
    fs.copyFileSync(path.join(appDir, f), path.join(kept, f));
    log.debug(`kept ${f}, written by the install, in a cache layer: a rebuild that reuses the modules puts it back`);
  }
}

/** On reuse: the lock files the install wrote, where it wrote them (unless the source has its own now). */
export function placeGeneratedLocks(kept: string, appDir: string): void {
  for (const f of fs.readdirSync(kept)) if (!fs.existsSync(path.join(appDir, f))) fs.copyFileSync(path.join(kept, f), path.join(appDir, f));
}
