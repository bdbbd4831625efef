/**
 * Lock files an install writes that the source did not hold (`npm install` writes package-lock.json
 * when there is none): kept in the modules layer and put back when the layer is reused, so the app
 * after the build is the same whether the dependencies were installed or reused, and the same input
 * gives the same image (issue 23). The app's own lock files are left as they are.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_FILES } from '../../../lib/js-project/lock-files.ts';
import type { Logger } from '../../../lib/log.ts';

/** Where the modules layer keeps them. */
const KEPT = '.rbp-generated-locks';

/** The lock files at the app root now. */
export function presentLocks(appDir: string): Set<string> {
  return new Set(Object.values(LOCK_FILES).filter((f) => fs.existsSync(path.join(appDir, f))));
}

/** After an install: the lock files that appeared since `before`, kept in the layer. */
export function keepGeneratedLocks(appDir: string, before: Set<string>, layerPath: string, log: Logger): void {
  const kept = path.join(layerPath, KEPT);
  fs.rmSync(kept, { recursive: true, force: true });
  for (const f of presentLocks(appDir)) {
    if (before.has(f)) continue;
    fs.mkdirSync(kept, { recursive: true });
    fs.copyFileSync(path.join(appDir, f), path.join(kept, f));
    log.debug(`kept ${f}, written by the install, in the modules layer: a rebuild that reuses the layer puts it back`);
  }
}

/** On reuse: the lock files the install wrote, where it wrote them (unless the source has its own now). */
export function placeGeneratedLocks(layerPath: string, appDir: string): void {
  const kept = path.join(layerPath, KEPT);
  if (!fs.existsSync(kept)) return;
  for (const f of fs.readdirSync(kept)) if (!fs.existsSync(path.join(appDir, f))) fs.copyFileSync(path.join(kept, f), path.join(appDir, f));
}
