/** Small file-system questions asked all over: is it a folder, an executable file, where is a command. */
import fs from 'node:fs';
import path from 'node:path';

export function isDir(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
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
