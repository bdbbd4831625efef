/** Small file-system questions asked all over: is it a folder, an executable file, where is a command, what a JSON file holds. */
import fs from 'node:fs';
import path from 'node:path';

/**
 * stat, or undefined for anything that is not there as asked: missing (ENOENT), a file on the way
 * (ENOTDIR), a name too long, a symlink loop. `throwIfNoEntry: false` covers only the first.
 */
export function statIfAny(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

/** A JSON file's value, or undefined when it cannot be read or parsed. */
export function readJsonIfAny<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function isDir(p: string): boolean {
  return statIfAny(p)?.isDirectory() ?? false;
}

export function isExecutableFile(f: string): boolean {
  try {
    fs.accessSync(f, fs.constants.X_OK);
    return fs.statSync(f).isFile();
  } catch {
    return false;
  }
}

/**
 * Where `cmd` is: a path containing `/` is taken relative to `cwd`; a name is looked up on `pathVar`,
 * an empty entry meaning the working directory (as execvp and Go's exec.LookPath read it).
 */
export function findOnPath(cmd: string, pathVar: string | undefined, cwd: string = process.cwd()): string | undefined {
  if (cmd.includes('/')) return path.resolve(cwd, cmd);
  for (const dir of (pathVar ?? '').split(':')) {
    const f = path.resolve(cwd, dir, cmd);
    if (isExecutableFile(f)) return f;
  }
  return undefined;
}

/**
 * Moves a file or folder: one rename, or, when `from` and `to` are on different file systems
 * (EXDEV: a platform mounts the app and the layers as separate volumes, as kpack and pack do), a
 * copy that keeps links as written, then the removal of `from`.
 */
export function moveAcross(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    fs.rmSync(from, { recursive: true, force: true });
  }
}

/**
 * A second name for every file of the folder `from` at `to` (hard links; folders made anew, symlinks
 * written as they were): both trees share the files' contents, nothing is copied. Where the two are
 * on different file systems (EXDEV) or the file system has no hard links, a copy that keeps links as
 * written. `to` must not exist.
 */
export function linkTree(from: string, to: string): void {
  try {
    linkDir(from, to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw e;
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  }
}

function linkDir(from: string, to: string): void {
  fs.mkdirSync(to, { mode: fs.statSync(from).mode & 0o7777 });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) linkDir(src, dst);
    else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src), dst);
    else fs.linkSync(src, dst);
  }
}

/** A hard link; a copy across file systems (a cache on another disk), the only way across. */
export function linkFile(s: string, d: string): void {
  try {
    fs.linkSync(s, d);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EXDEV' || (e as NodeJS.ErrnoException).code === 'EPERM') fs.copyFileSync(s, d);
    else throw e;
  }
}
