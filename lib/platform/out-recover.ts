/**
 * After a crash (SIGKILL, a power cut), when no build runs: the buildpack the dead build started is
 * stopped, and OUT is made the last complete build again. A build happens in OUT itself, the previous
 * OUT waiting in OUT.rbp-previous: the complete one wins, OUT when it holds rbp.toml (the build had
 * ended), else the previous one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDir, rmrf } from './fsops.ts';
import { rbpInfoPath } from './metadata.ts';
import { lockHolder, stopOrphans } from './out-lock.ts';
import { OUT_MARKER, previousOf } from './out-paths.ts';

/** Returns what it did, for the log; nothing when there was nothing to do or a build still runs. */
export function recover(out: string): string | undefined {
  if (lockHolder(out) !== undefined) return undefined;
  stopOrphans(out);
  const prev = previousOf(out);
  if (!fs.existsSync(prev)) return undefined;
  if (fs.existsSync(rbpInfoPath(out)) && fs.existsSync(path.join(out, OUT_MARKER))) {
    rmrf(prev);
    return undefined;
  }
  // Only a folder rbp made (the marker is its first file), or an empty one, is thrown away.
  if (fs.existsSync(out)) {
    if (!fs.existsSync(path.join(out, OUT_MARKER)) && !(isDir(out) && fs.readdirSync(out).length === 0)) return undefined;
    rmrf(out);
  }
  fs.renameSync(prev, out);
  return `an interrupted build left ${out} incomplete: the previous build is back`;
}
