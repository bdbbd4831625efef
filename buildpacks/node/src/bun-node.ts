/**
 * `node` meaning Bun at launch. `bun --bun run start` makes `node` in the scripts mean Bun through a
 * folder it shares between all its runs, `/tmp/bun-node-<revision>/node -> <the bun that made it>`
 * (Bun 1.3 ignores TMPDIR and BUN_TMPDIR for it). When the Bun that made the link is gone, the link
 * dangles and `node` falls through to the next one on PATH: Node.js, and the app runs on the wrong
 * runtime without a word. So the launch makes its own private folder, created fresh, holding
 * `node -> this app's bun`, and puts it first on PATH: after Bun's own folder, before Node.js.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The first executable `name` on `pathVar`. */
export function which(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(':')) {
    if (!dir) continue;
    const f = path.join(dir, name);
    try {
      fs.accessSync(f, fs.constants.X_OK);
      if (fs.statSync(f).isFile()) return f;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Creates the private folder with `node -> bun` and returns the PATH with it first; PATH unchanged when no bun is found. */
export function bunNodeFirst(pathVar: string, tmp = os.tmpdir()): { path: string; dir?: string } {
  const bun = which('bun', pathVar);
  if (!bun) return { path: pathVar };
  const dir = fs.mkdtempSync(path.join(tmp, 'rbp-bun-node-'));
  fs.symlinkSync(fs.realpathSync(bun), path.join(dir, 'node'));
  return { path: `${dir}:${pathVar}`, dir };
}
