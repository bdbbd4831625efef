/**
 * Moving layer folders around without copying file by file: a rename when the folder can go, a tree
 * of hard links when it must be in two places (a reused launch+cache layer, in the previous OUT and
 * the new one while a build runs; in an explicit --cache too). Linked files are shared, so a
 * buildpack that rewrites a reused launch+cache layer's files in place and then fails changes the
 * previous build's copy too; cache-only layers, the ones tools write to (npm's cache), are moved
 * instead, and dropped from the cache when a build fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { linkFile } from '../fsx.ts';

/** Recreates `src` at `dst` with directories made anew and every file hard-linked. */
export function linkTree(src: string, dst: string): void {
  const st = fs.lstatSync(src);
  if (st.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(src), dst);
    return;
  }
  if (!st.isDirectory()) {
    linkFile(src, dst);
    return;
  }
  fs.mkdirSync(dst, { mode: st.mode & 0o7777 });
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    const d = path.join(dst, e.name);
    if (e.isDirectory()) linkTree(s, d);
    else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(s), d);
    else linkFile(s, d);
  }
  fs.chmodSync(dst, st.mode & 0o7777);
}

/** Renames, falling back to link-then-remove across file systems. */
export function moveTree(src: string, dst: string): void {
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  try {
    fs.renameSync(src, dst);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    linkTree(src, dst);
    fs.rmSync(src, { recursive: true, force: true });
  }
}

export const rmrf = (p: string) => fs.rmSync(p, { recursive: true, force: true });

export { isDir, linkFile } from '../fsx.ts';

/** Blocks the thread for `ms` (a wait for the file system's clock to tick: at most a few milliseconds). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Which folder this is: inode and birth time, since a folder removed and made again often gets the
 * same inode number back.
 */
export function identity(p: string): string | undefined {
  try {
    const st = fs.statSync(p, { bigint: true });
    return `${st.ino}:${st.birthtimeNs}`;
  } catch {
    return undefined;
  }
}
