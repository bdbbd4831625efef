/**
 * The one resolver for a path inside the application that comes from the app or from a variable
 * (the cache VCL, a Caddyfile, a worker, the webroot, an output folder, a build-cache override): the
 * value is relative to the app root (a leading `/` means the root, as the contract writes webroots),
 * and the path must stay inside the app after following every symlink. Reading a file outside the
 * app would print its lines into the build log through a tool's error, or copy it into the image.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from './errors.ts';
import { statIfAny } from './fsx.ts';

export type AppPathKind = 'file' | 'dir' | 'any';

export interface AppPath {
  /** The absolute path in the app (symlinks not followed). */
  abs: string;
  /** Relative to the app root, `/`-separated; '' for the root itself. */
  rel: string;
  /** What is there once symlinks are followed; undefined when nothing is. */
  type: 'file' | 'dir' | 'other' | undefined;
}

export type AppPathProblem = 'outside' | 'missing' | 'not-file' | 'not-dir' | 'unusable';

/** Whether `inner` is `outer` or below it. */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The real path of the part of `p` that exists, with the rest appended. */
function realish(p: string): string {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      // realpath(3), one call: Node.js's own realpathSync lstats every component in JavaScript.
      return path.join(fs.realpathSync.native(cur), ...tail.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A dangling symlink: where it points decides.
      if (code === 'ENOENT') {
        const st = fs.lstatSync(cur, { throwIfNoEntry: false });
        if (st?.isSymbolicLink()) {
          const target = path.resolve(path.dirname(cur), fs.readlinkSync(cur));
          return realish(path.join(target, ...tail.reverse()));
        }
      } else if (code !== 'ENOTDIR') throw e;
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      tail.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** Resolves `value` in `appDir`; `problem` says why it cannot be used (nothing throws). */
export function resolveAppPath(appDir: string, value: string, kind: AppPathKind = 'any', mustExist = true): { path?: AppPath; problem?: AppPathProblem } {
  const root = path.resolve(appDir);
  const abs = path.resolve(root, `.${path.sep}${value.replace(/^\/+/, '')}`);
  if (!within(abs, root)) return { problem: 'outside' };
  let real: string;
  let realRoot: string;
  try {
    realRoot = realish(root);
    real = realish(abs);
  } catch {
    return { problem: 'unusable' };
  }
  if (!within(real, realRoot)) return { problem: 'outside' };
  let st;
  try {
    st = fs.statSync(real, { throwIfNoEntry: false });
  } catch {
    return { problem: 'unusable' };
  }
  const type = st ? (st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other') : undefined;
  const found: AppPath = { abs, rel: path.relative(root, abs).split(path.sep).join('/'), type };
  if (!type) return mustExist ? { problem: 'missing', path: found } : { path: found };
  if (kind === 'file' && type !== 'file') return { problem: 'not-file', path: found };
  if (kind === 'dir' && type !== 'dir') return { problem: 'not-dir', path: found };
  return { path: found };
}

const RULE: Record<AppPathProblem, (what: string, kind: AppPathKind) => string> = {
  outside: (w) => `${w} is a path inside the application (relative to its root; a leading / means the root), also once symbolic links are followed.`,
  missing: (w, k) => `${w} names ${k === 'dir' ? 'a folder' : 'a file'} of the application, which must exist.`,
  'not-file': (w) => `${w} names a file of the application, not a folder.`,
  'not-dir': (w) => `${w} names a folder of the application, not a file.`,
  unusable: (w) => `${w} must be a path the build can read (not too long, every folder on the way readable).`,
};

/** The user error for a path `resolveAppPath` refused. */
/** `id` is a prefix (`<id>/<problem>`), unless `fullId` gives the whole id (one per variable: lib/config). */
export function appPathError(o: {
  id: string;
  fullId?: string;
  what: string;
  value: string;
  problem: AppPathProblem;
  kind: AppPathKind;
  fix: string;
  where?: string;
}): UserError {
  const titles: Record<AppPathProblem, string> = {
    outside: `${o.what} points outside the application`,
    missing: `${o.what} names something that does not exist`,
    'not-file': `${o.what} names a folder, not a file`,
    'not-dir': `${o.what} names a file, not a folder`,
    unusable: `${o.what} cannot be used as a path`,
  };
  return new UserError({
    id: o.fullId ?? `${o.id}/${o.problem}`,
    title: titles[o.problem],
    seen: { what: o.what, value: o.value.length > 200 ? `${o.value.slice(0, 200)}…` : o.value, where: o.where ?? 'the application environment' },
    rule: RULE[o.problem](o.what, o.kind),
    fix: o.fix,
  });
}

/**
 * The index files each runtime serves a folder with, in the order it looks for them: the one place
 * that says it (static rule 3: index.html or index.htm; phpserver detection: index.php, then
 * index.html).
 */
export const INDEX_FILES = {
  static: ['index.html', 'index.htm'],
  phpserver: ['index.php', 'index.html'],
} as const satisfies Record<string, readonly string[]>;

/** The first of `names` that is a file in `dir` (symlinks followed), or undefined. */
export function findIndex(dir: string, names: readonly string[]): string | undefined {
  return names.find((f) => statIfAny(path.join(dir, f))?.isFile());
}
