/**
 * The copy of the application that detect and build work on, made before detect as pack makes it
 * (project.toml's include/exclude applied): nothing a buildpack writes reaches the user's source.
 * Files are cloned (a reflink, where the file system has it) or else copied, never hard-linked: a
 * buildpack may write into a file in place, which would change the user's file through a link.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { isDir } from '../fsx.ts';

/** `rbp <command> APP` takes the application's folder: refused when there is none. */
export function checkAppDir(dir: string, command: string): void {
  if (isDir(dir)) return;
  throw new UserError({
    id: 'platform/app/not-found',
    title: 'Application directory not found',
    seen: { what: 'APP', value: dir },
    rule: `rbp ${command} takes the directory of the application source.`,
    fix: 'Give the path of an existing directory.',
  });
}

/** Whether a path relative to the app (`/`-separated) goes into the build: project.toml include/exclude. */
export type AppFilter = (rel: string, isDir: boolean) => boolean;

/**
 * Copies `appDir` to `dest` (which must not exist), leaving out `skip` (folders inside the app
 * that are rbp's own, such as a cache) and what `keep` refuses. Only files, folders and symlinks are
 * an app's source: a FIFO, socket or device is refused (a copy would block or fail).
 */
export function copyApp(appDir: string, dest: string, skip: string[] = [], keep?: AppFilter): void {
  fs.cpSync(appDir, dest, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    mode: fs.constants.COPYFILE_FICLONE,
    filter: (src) => {
      if (skip.some((s) => src === s || src.startsWith(`${s}${path.sep}`))) return false;
      const st = fs.lstatSync(src);
      if (!st.isFile() && !st.isDirectory() && !st.isSymbolicLink()) {
        throw new UserError({
          id: 'platform/app/special-file',
          title: 'The application holds a file that is not a regular file, folder or symlink',
          seen: { what: 'APP', value: path.relative(appDir, src), where: appDir },
          rule: `The build copies the application's files; ${st.isFIFO() ? 'a named pipe (FIFO)' : st.isSocket() ? 'a socket' : 'a device'} cannot be copied.`,
          fix: 'Remove it from the application folder (or build from a clean checkout).',
        });
      }
      if (!keep || src === appDir) return true;
      return keep(path.relative(appDir, src).split(path.sep).join('/'), st.isDirectory());
    },
  });
}
