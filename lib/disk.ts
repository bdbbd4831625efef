/**
 * A write that failed for want of room or rights, as one user error: the folder, its file system
 * (mount point, type, size, room left), the room the write needs, and what to do. The one place
 * that decides it, for every writer: tool downloads and the download cache (lib/deps), a
 * buildpack's own writes (lib/cnb/context.ts), rbp's OUT and layer cache.
 *
 *   catch (e) { throw writeFailure(e, { folder, what: 'the download cache', … }) ?? e; }
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from './errors.ts';
import { formatBytes } from './log.ts';

/** The failures a user fixes on the machine, not in the app: no room, a quota, a read-only mount, no rights. */
export type WriteFailureCode = 'ENOSPC' | 'EDQUOT' | 'EROFS' | 'EACCES';

/** The messages (strerror, C locale) a child such as tar or unzip prints for them; GNU tar reports a short write on its own. */
const STRERROR: [RegExp, WriteFailureCode][] = [
  [/No space left on device|Wrote only \d+ of \d+ bytes/, 'ENOSPC'],
  [/Disk quota exceeded/, 'EDQUOT'],
  [/Read-only file system/, 'EROFS'],
  [/Permission denied/, 'EACCES'],
];

/** The calls that only read: their EACCES is a file that cannot be read. */
const READS = new Set(['scandir', 'opendir', 'stat', 'lstat', 'access', 'readlink', 'read', 'realpath']);

/** The path a failed Node.js file call was writing: the destination of a link or copy, else its path. */
export function writtenPath(e: unknown): string | undefined {
  const { dest, path: p } = (e ?? {}) as { dest?: unknown; path?: unknown };
  return typeof dest === 'string' ? dest : typeof p === 'string' ? p : undefined;
}

/**
 * Why `e` is such a failure, or undefined: a Node.js error's code, or a child's stderr (an execa
 * error) naming one. EACCES counts only when the folder of the path written is not writable (a
 * file that cannot be read is not a disk's problem).
 */
export function writeFailureCode(e: unknown): WriteFailureCode | undefined {
  if (!(e instanceof Error)) return undefined;
  const { code, stderr, syscall } = e as { code?: unknown; stderr?: unknown; syscall?: unknown };
  const p = writtenPath(e);
  // Node.js's recursive mkdir says ENOENT where a read-only or closed folder refused it.
  if (code === 'ENOENT' && syscall === 'mkdir' && p) return refused(p);
  const said = STRERROR.find(([re, c]) => c === code || (typeof stderr === 'string' && re.test(stderr)))?.[1];
  if (said !== 'EACCES') return said;
  if (!p || (typeof syscall === 'string' && READS.has(syscall))) return typeof stderr === 'string' ? said : undefined;
  return refused(p);
}

/** `p`, or its nearest folder that exists. */
function existing(p: string): string {
  let dir = path.resolve(p);
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** EROFS or EACCES when the nearest existing folder above `p` refuses writes; undefined when it takes them. */
function refused(p: string): 'EROFS' | 'EACCES' | undefined {
  try {
    fs.accessSync(existing(path.dirname(p)), fs.constants.W_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'EROFS' || code === 'EACCES' ? code : undefined;
  }
}

/** The file system a path is on: where it is mounted, its type, its size and the room left to this user. */
export interface FileSystem {
  /** Undefined where /proc/self/mountinfo cannot be read (not Linux). */
  mountPoint?: string;
  type?: string;
  size: number;
  free: number;
}

/** The folder's file system, from its nearest existing parent; undefined when none can be asked. */
export function fileSystemOf(folder: string): FileSystem | undefined {
  let p: string;
  let st: fs.StatsFs;
  try {
    p = fs.realpathSync(existing(folder));
    st = fs.statfsSync(p);
  } catch {
    return undefined;
  }
  return { ...mountOf(p), size: st.blocks * st.bsize, free: st.bavail * st.bsize };
}

/** The mount whose mount point holds `p` most closely (the last one mounted there, which hides the others). */
function mountOf(p: string): { mountPoint?: string; type?: string } {
  let text: string;
  try {
    text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return {};
  }
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  let best: { mountPoint: string; type: string } | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point options [optional fields…] - type source super-options
    const fields = line.split(' ');
    const mountPoint = fields[4] === undefined ? undefined : unescape(fields[4]);
    const type = fields.includes('-') ? fields[fields.indexOf('-') + 1] : undefined;
    if (!mountPoint || !type) continue;
    const holds = mountPoint === '/' || p === mountPoint || p.startsWith(`${mountPoint}/`);
    if (holds && mountPoint.length >= (best?.mountPoint.length ?? 0)) best = { mountPoint, type };
  }
  return best ?? {};
}

/** The folder a write went to and what to say about it. */
export interface WriteTarget {
  /** The folder, as its user knows it: the error names it. */
  folder: string;
  /** Its role: `the download cache`, `the layer node of rbp/node`, `OUT`. */
  what: string;
  /** What was being written, for the title: `node 24.15.0`. */
  writing?: string;
  /** The room the write needs in all, when known, and how that adds up (`a 49.1 MiB download, about 172 MiB unpacked`). */
  needed?: { bytes: number; how?: string };
  /** The way to write it elsewhere, ending the fix: `set RBP_DOWNLOAD_CACHE to a folder on a larger file system`. */
  elsewhere?: string;
}

/** `e` as the user error for `target` when it is a write failure (writeFailureCode); undefined otherwise. */
export function writeFailure(e: unknown, target: WriteTarget): UserError | undefined {
  const code = writeFailureCode(e);
  if (!code) return undefined;
  const at = writtenPath(e);
  // A child's own line (`tar: bin/node: Cannot write: No space left on device`), else Node.js's.
  const { stderr, code: own, syscall } = e as { stderr?: unknown; code?: unknown; syscall?: unknown };
  const said = typeof stderr === 'string' ? stderr.split('\n').find((l) => STRERROR.some(([re]) => re.test(l))) : undefined;
  const line = said?.trim() ?? (own !== code && at ? `${code}: ${String(syscall)} '${at}'` : (e as Error).message.split('\n')[0]!);
  return diskError(code, target, fileSystemOf(target.folder), code === 'EACCES' ? `${line} (as uid ${os.userInfo().uid})` : line);
}

/** The error itself, from what was found (writeFailure finds it; tests give it). */
export function diskError(code: WriteFailureCode, t: WriteTarget, fsys: FileSystem | undefined, message: string): UserError {
  const on = fsys?.mountPoint ? `the ${fsys.type} file system mounted at ${fsys.mountPoint}` : 'its file system';
  const where = fsys ? `${on}: ${formatBytes(fsys.size)}, ${formatBytes(fsys.free)} free` : undefined;
  const needs = t.needed ? `about ${formatBytes(t.needed.bytes)}${t.needed.how ? ` (${t.needed.how})` : ''}` : undefined;
  const room = [needs ? `this needs ${needs}` : '', fsys ? `${formatBytes(fsys.free)} is free` : ''].filter(Boolean).join(', and ');
  const orElse = t.elsewhere ? `, or ${t.elsewhere}` : '';
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  return new UserError({
    id: full ? 'disk/full' : code === 'EROFS' ? 'disk/read-only' : 'disk/not-writable',
    title: full
      ? `No room ${t.writing ? `for ${t.writing} ` : 'left '}in ${t.what}: ${code === 'EDQUOT' ? 'the disk quota is used up' : 'its file system is full'}`
      : `Cannot write ${t.writing ? `${t.writing} ` : ''}to ${t.what}: ${code === 'EROFS' ? 'its file system is read-only' : 'the folder is not writable'}`,
    seen: { what: 'folder', value: t.folder, ...(where ? { where } : {}) },
    rule:
      code === 'EDQUOT'
        ? `What a build writes must fit within the disk quota of the user it runs as${needs ? `: this needs ${needs}` : ''}.`
        : code === 'ENOSPC'
          ? `What a build writes must fit on the file system it goes to${room ? `: ${room}` : ''}.`
          : code === 'EROFS'
            ? 'A build writes into this folder: its file system must be mounted read-write.'
            : 'A build writes into this folder: the user it runs as must be able to create files in it.',
    details: [message],
    fix: full
      ? `${t.needed ? `Make room for about ${formatBytes(t.needed.bytes)}` : 'Make room'} on ${on} (free some, or ${code === 'EDQUOT' ? 'raise the quota' : 'make it larger'})${orElse}.`
      : code === 'EROFS'
        ? `Mount ${on} read-write${orElse}.`
        : `Give the user the build runs as write access to ${t.folder}${orElse}.`,
  });
}
