/**
 * OUT, the cache and the folders rbp keeps beside them, and which of them rbp may use:
 *   OUT/.rbp-out        written first into each new build: this folder is rbp's to replace
 *   OUT/rbp.toml        written last: the build is complete
 *   OUT.rbp-previous    the previous OUT while a build runs
 *   OUT.rbp-lock        the pid of the build that owns OUT
 *   CACHE/.rbp-cache    this folder is an rbp layer cache, and what export recorded (layer-cache.ts)
 *   CACHE.rbp-lock      the pid of the build that uses the cache
 * A path rbp may not use is refused before anything is touched, with the error that says why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { isDir } from './fsops.ts';

export const OUT_MARKER = '.rbp-out';
export const CACHE_MARKER = '.rbp-cache';

export const previousOf = (out: string) => `${out}.rbp-previous`;
export const lockOf = (dir: string) => `${dir}.rbp-lock`;

/** The longest name rbp gives a folder beside OUT or the cache. */
const LONGEST_SUFFIX = '.rbp-previous';
/** Linux's longest file name, in bytes. */
const NAME_MAX = 255;

/** Whether `inner` is `outer` or below it (both absolute, resolved). */
export function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** The real path of `p`, following symlinks for the part of it that exists. */
export function realish(p: string): string {
  const abs = path.resolve(p);
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...tail.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return abs;
      tail.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** Why an existing folder is not one rbp may replace, or undefined when it may. */
function notOurs(dir: string, marker: string, looksOurs: (dir: string, entries: string[]) => boolean): string | undefined {
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is a file, not a folder';
  const entries = fs.readdirSync(dir);
  if (entries.length === 0 || entries.includes(marker) || looksOurs(dir, entries)) return undefined;
  return `is not empty and was not made by rbp (it holds ${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', …' : ''})`;
}

/** An OUT of an older rbp (before the marker): rbp.toml or the lifecycle's layers/config. */
const looksLikeOut = (dir: string, entries: string[]): boolean =>
  entries.includes('rbp.toml') ||
  (entries.every((e) => ['workspace', 'layers', 'rbp.toml'].includes(e)) && fs.existsSync(path.join(dir, 'layers', 'config', 'metadata.toml')));

/** A cache of an older rbp: folders of `<layer>.toml` files and layer folders only. */
const looksLikeCache = (dir: string, entries: string[]): boolean =>
  entries.every((e) => isDir(path.join(dir, e)) && fs.readdirSync(path.join(dir, e)).every((f) => f.endsWith('.toml') || isDir(path.join(dir, e, f))));

/** Whether `dir` is a mount point: another file system than its parent's, or listed as one (a bind mount). */
function isMountPoint(dir: string): boolean {
  try {
    if (fs.statSync(dir).dev !== fs.statSync(path.dirname(dir)).dev) return true;
    const real = fs.realpathSync(dir);
    // mountinfo's 5th field, with spaces and the like written \ooo.
    return fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))) === real);
  } catch {
    return false;
  }
}

export interface BuildPaths {
  appDir: string;
  outDir: string;
  /** The cache folder; `explicit` when the user chose it (--cache). */
  cacheDir: string;
  explicitCache: boolean;
}

const FIX_OUT = 'Give --out a folder of its own outside the application, for example --out ../app-out (a new or empty folder, or an earlier rbp build).';

function outError(id: string, title: string, value: string, rule: string, fix = FIX_OUT): UserError {
  return new UserError({ id, title, seen: { what: '--out', value }, rule, fix });
}

/** Refuses an OUT or a cache rbp may not use (nothing is touched). */
export function checkBuildPaths(p: BuildPaths): void {
  const out = realish(p.outDir);
  const app = realish(p.appDir);
  const cache = realish(p.cacheDir);
  if (path.dirname(out) === out) throw outError('platform/out/root', 'OUT is the root folder', p.outDir, 'OUT is replaced by every build; it cannot be /.');
  if (within(out, app)) {
    throw outError(
      'platform/out/inside-app',
      out === app ? 'OUT is the application folder' : 'OUT is inside the application folder',
      p.outDir,
      'The build copies APP into OUT/workspace and replaces OUT; OUT cannot be APP or inside it.',
    );
  }
  if (within(app, out))
    throw outError(
      'platform/out/contains-app',
      'OUT contains the application folder',
      p.outDir,
      'OUT is replaced by every build; the application folder cannot be inside it.',
    );
  const tooLong = [path.basename(p.outDir), path.basename(p.cacheDir)].map((n) => `${n}${LONGEST_SUFFIX}`).find((n) => Buffer.byteLength(n) > NAME_MAX);
  if (tooLong) {
    throw outError(
      'platform/out/name-too-long',
      'The name of OUT is too long for the folders rbp keeps beside it',
      p.outDir,
      `rbp keeps folders beside OUT and the cache, named after them (OUT${LONGEST_SUFFIX}, OUT.rbp-lock); a name is at most ${NAME_MAX} bytes, and ${tooLong.slice(0, 24)}… would be ${Buffer.byteLength(tooLong)}.`,
      'Give --out (and --cache) a shorter name.',
    );
  }
  const why = notOurs(p.outDir, OUT_MARKER, looksLikeOut);
  if (why)
    throw outError(
      'platform/out/not-rbp',
      'OUT is a folder rbp did not make',
      p.outDir,
      `rbp build replaces OUT entirely, so it must be new, empty or an earlier rbp build; ${p.outDir} ${why}.`,
    );
  const cacheErr = (id: string, title: string, rule: string) =>
    new UserError({
      id,
      title,
      seen: { what: p.explicitCache ? '--cache' : 'the cache beside OUT', value: p.cacheDir },
      rule,
      fix: 'Give --cache a folder of its own (new, empty or an earlier rbp cache), outside the application and OUT.',
    });
  if (path.dirname(cache) === cache)
    throw cacheErr('platform/cache/root', 'The cache folder is the root folder', 'The cache is replaced by every build; it cannot be /.');
  if (within(cache, out) || within(out, cache))
    throw cacheErr(
      'platform/cache/overlaps-out',
      'The cache folder and OUT overlap',
      'The cache and OUT are replaced separately; neither may be inside the other.',
    );
  if (within(app, cache))
    throw cacheErr(
      'platform/cache/contains-app',
      'The cache folder contains the application',
      'The cache is replaced by every build; the application cannot be inside it.',
    );
  const cwhy = notOurs(p.cacheDir, CACHE_MARKER, looksLikeCache);
  if (cwhy)
    throw cacheErr(
      'platform/cache/not-rbp',
      'The cache folder is not an rbp cache',
      `The cache is replaced by every build, so it must be new, empty or an earlier rbp cache; it ${cwhy}.`,
    );
  if (fs.existsSync(p.outDir) && isMountPoint(p.outDir)) {
    throw outError(
      'platform/out/cannot-move',
      'OUT is a mount point',
      p.outDir,
      'rbp sets the previous OUT aside by renaming it while it builds, and a mount point cannot be renamed.',
      'Mount the volume one folder up and give --out a folder inside it, for example --out /mnt/volume/app-out.',
    );
  }
}
