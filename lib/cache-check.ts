/**
 * What the cache remembers of a cached layer's folder, so that restore can tell a damaged copy (a
 * truncated binary, a file where a folder was, a removed file) from the one export stored: every
 * path with its type, mode, size and link target, hashed. Sizes and not contents: the walk is a
 * stat per file, cheap enough for every build, and catches what damages a tree in practice
 * (truncation, removal, replacement).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { linkFile } from './fsx.ts';

/**
 * The digest of a launch+cache layer whose only copy is the OUT that exported it (the cache beside
 * OUT keeps its metadata, not a second name for its files): `out:<digest>`.
 */
export const IN_OUT = 'out:';

/**
 * The record of a cache-only layer that export moved on without a walk (`until:<time>:<digest>`):
 * `digest` is what restore checked before the build, and anything that differs from it now was
 * changed by the build if it was changed no later than `time`, the file system's own time when
 * export ended (a package manager appending to its index, adding to its store). A change after that
 * is damage. Every write to a file moves its modification time, and every name added or removed
 * its folder's: a walk that finds none after `time` finds the layer as the build left it. Not the
 * change time (ctime): a hard link made or removed elsewhere moves it (pnpm and bun link their
 * store's files into node_modules, which later builds remove).
 */
export const UNTIL = 'until:';

export function untilRecord(time: number, digest: string): string {
  return `${UNTIL}${time}:${digest}`;
}

/** The time and digest of an `until:` record, or undefined for any other. */
export function parseUntil(recorded: string | undefined): { time: number; digest: string } | undefined {
  const m = recorded?.startsWith(UNTIL) ? /^until:(\d+(?:\.\d+)?):([0-9a-f]{64})$/.exec(recorded) : null;
  return m ? { time: Number(m[1]), digest: m[2]! } : undefined;
}

/** What one walk of a layer folder found: its digest and its folders (relative, '' = the root). */
export interface TreeScan {
  digest: string;
  dirs: string[];
  /** The walked folders' stamps, from the walk's own lstat (no second stat); none when it linked a copy. */
  stamps?: Stamps;
  /** With stamps: the newest modification time among the walked folders (ms). */
  newest?: number;
  /**
   * Asked for (keepText): the walk's lines joined, in its order, the text its digest hashes, for
   * listings. One string, not a string per path: a warm rebuild keeps ~15,000 of
   * them across its checks, which the young generation's collections would copy again and again.
   */
  text?: string;
  /** From checkListed: the scan is its listing's as written (text and stamps), which may be carried on. */
  listed?: boolean;
  /** From a walk without linkTo: the latest modification time (ms) of the folder and of anything in it. */
  latest?: number;
}

/**
 * One walk of `dir` in name order: the digest of every path with its type, mode, size and link
 * target. With `linkTo`, the walk also recreates the tree there (folders made anew, every file
 * hard-linked, links copied), so a restore checks and places a layer in a single pass: one lstat and
 * one link per file, no second walk.
 * This is the check a warm rebuild pays for each reused layer (a stat per file), so it does no more
 * than that: the lines are hashed once at the end and paths are joined by hand (path.join and a
 * hash update per file cost as much as the stat).
 */
export function scanTree(dir: string, linkTo?: string, keepText = false): TreeScan {
  const lines: string[] = [];
  const dirs: string[] = [''];
  const stamps: Stamps | undefined = linkTo === undefined ? new Map() : undefined;
  let newest = 0;
  let latest = 0;
  const walk = (d: string, rel: string, to: string | undefined) => {
    const names = fs.readdirSync(d);
    names.sort();
    for (const name of names) {
      const p = `${d}/${name}`;
      const r = rel ? `${rel}/${name}` : name;
      const t = to === undefined ? undefined : `${to}/${name}`;
      const st = fs.lstatSync(p);
      if (st.mtimeMs > latest) latest = st.mtimeMs;
      if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(p);
        lines.push(`l\0${r}\0${target}\n`);
        if (t) fs.symlinkSync(target, t);
      } else if (st.isDirectory()) {
        lines.push(`d\0${r}\0${st.mode & 0o7777}\n`);
        dirs.push(r);
        if (stamps) {
          stamps.set(r, stampOfStats(st));
          if (st.mtimeMs > newest) newest = st.mtimeMs;
        }
        if (t) fs.mkdirSync(t, { mode: 0o700 });
        walk(p, r, t);
        if (t) fs.chmodSync(t, st.mode & 0o7777);
      } else {
        lines.push(`${st.isFile() ? 'f' : 'o'}\0${r}\0${st.mode & 0o7777}\0${st.size}\n`);
        if (t) linkFile(p, t);
      }
    }
  };
  const root = fs.lstatSync(dir);
  latest = root.mtimeMs;
  stamps?.set('', stampOfStats(root));
  if (root.mtimeMs > newest) newest = root.mtimeMs;
  if (linkTo !== undefined) fs.mkdirSync(linkTo, { mode: 0o700 });
  walk(dir, '', linkTo);
  if (linkTo !== undefined) fs.chmodSync(linkTo, root.mode & 0o7777);
  const text = lines.join('');
  return {
    digest: sha256(text),
    dirs,
    ...(stamps ? { stamps, newest, latest } : {}),
    ...(keepText ? { text } : {}),
  };
}

export function treeDigest(dir: string): string {
  return scanTree(dir).digest;
}

/**
 * A listing's text is scanTree's lines joined: `<kind>\0<path>\0<fields>\n` per path, where kind is
 * d (fields: mode), f or o (mode\0size) or l (the link's target). A name may hold a newline but
 * never a NUL: a record's path ends at its second NUL, and the record at the newline after its
 * digits, or for a link at the newline before the next record's `<kind>\0` (or the text's end).
 * A cursor over the records, in order: `next()` moves to the next one (false at the end, or where
 * the text is not records: `broken`). Nothing is made per record, and no callback: each check's
 * loop is its own, which V8 optimizes once (a warm rebuild goes through ~15,000 records).
 */
class Records {
  kind = '';
  /** Where the record starts. */
  at = 0;
  /** Where its path ends (the NUL before its fields). */
  pathEnd = 0;
  /** Where it ends (the next record's start). */
  end = 0;
  broken = false;

  constructor(readonly text: string) {}

  next(): boolean {
    const { text } = this;
    const at = this.end;
    if (at >= text.length) return false;
    const pathEnd = text.indexOf('\0', at + 2);
    if (text[at + 1] !== '\0' || pathEnd < 0) {
      this.broken = true;
      return false;
    }
    const kind = text[at]!;
    let end: number;
    if (kind !== 'l') {
      const nl = text.indexOf('\n', pathEnd + 1);
      end = nl < 0 ? text.length : nl + 1;
    } else {
      const nextNul = text.indexOf('\0', pathEnd + 1);
      end = nextNul < 0 ? text.length : nextNul - 1;
    }
    this.kind = kind;
    this.at = at;
    this.pathEnd = pathEnd;
    this.end = end;
    return true;
  }

  /** The record's path. */
  path(): string {
    return this.text.slice(this.at + 2, this.pathEnd);
  }
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** The decimal number at `i` of `text` (up to a NUL or a newline), read without a new string. */
function numberAt(text: string, i: number): number {
  let n = 0;
  for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) n = n * 10 + (c - 48);
  return n;
}

/**
 * A layer folder's walk kept in the cache for the next check of that folder (`<cache>/.rbp-listings/
 * <escaped id>/<layer>/<inode of the folder>.listing`): its text and its folders' stamps, taken when
 * the walk or the check was made (rbp then ends no sooner than STAMP_SETTLE_MS after the newest of
 * them, so that any later change shows). The next restore checks the folder by it (checkListed: a
 * lstat per folder and per file, no folder read: a third less than a walk) when it names the digest
 * the cache's marker records; else, or without a listing, it walks.
 * Keyed by the folder's inode: a launch layer's spare is one of two folders that take turns.
 *
 * The file is text, read as one string (no parse into a string per path, see TreeScan.text):
 * `rbp-listing 2`, the digest, the number of folders, each folder's stamp (the root's, then each
 * `d` record's in the text's order), one per line, then the text itself. A listing of another
 * form (an older rbp's JSON) is no listing: the folder is walked.
 */
export const LISTINGS_DIR = '.rbp-listings';

const LISTING_HEAD = 'rbp-listing 2';

interface ListingFile {
  digest: string;
  text: string;
  /** The folders' stamps in the text's order, the root's first. */
  stamps: string[];
}

const listingOf = (cache: string, key: string, ino: number) => path.join(cache, LISTINGS_DIR, key, `${ino}.listing`);

/** Where `cache` keeps the listing of the folder at `dir` (layer `key`). */
export const listingFile = (cache: string, key: string, dir: string) => listingOf(cache, key, fs.lstatSync(dir).ino);

/**
 * The folders' stamps in the order of `text`'s records: the root's, then each folder record's. A
 * folder without a stamp gets none (''), which no folder has: its check fails, and it is walked.
 */
export function orderedStamps(text: string, stamps: Stamps): string[] {
  const ordered = [stamps.get('') ?? ''];
  for (const r = new Records(text); r.next();) if (r.kind === 'd') ordered.push(stamps.get(r.path()) ?? '');
  return ordered;
}

/** Keeps `scan` (with its text) of the folder at `dir`, whose folders have the stamps `stamps`. */
export function writeListing(cache: string, key: string, dir: string, scan: Pick<TreeScan, 'digest' | 'text'>, stamps: Stamps): void {
  if (scan.text === undefined) return;
  const file = listingFile(cache, key, dir);
  const ordered = orderedStamps(scan.text, stamps);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${LISTING_HEAD}\n${scan.digest}\n${ordered.length}\n${ordered.join('\n')}\n${scan.text}`);
}

/** Carries the listing of the folder at `dir` from cache `from` to cache `to` (a hard link), if there is one. */
export function carryListing(from: string, to: string, key: string, dir: string): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return;
  const src = listingOf(from, key, st.ino);
  if (!fs.existsSync(src)) return;
  const dst = listingOf(to, key, st.ino);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  try {
    fs.linkSync(src, dst);
  } catch {
    fs.copyFileSync(src, dst);
  }
}

/** The listing of the folder at `dir` in `cache` when it says `want`; undefined when there is none, or another. */
function readListing(cache: string | undefined, key: string, dir: string, want: string): ListingFile | undefined {
  if (!cache) return undefined;
  let content: string;
  try {
    content = fs.readFileSync(listingFile(cache, key, dir), 'utf8');
  } catch {
    return undefined;
  }
  const head = content.indexOf('\n');
  const digestEnd = content.indexOf('\n', head + 1);
  const countEnd = content.indexOf('\n', digestEnd + 1);
  if (content.slice(0, head) !== LISTING_HEAD || content.slice(head + 1, digestEnd) !== want || countEnd < 0) return undefined;
  const count = Number(content.slice(digestEnd + 1, countEnd));
  if (!Number.isSafeInteger(count) || count < 1) return undefined;
  const stamps: string[] = [];
  let at = countEnd + 1;
  for (let k = 0; k < count; k++) {
    const nl = content.indexOf('\n', at);
    if (nl < 0) return undefined;
    stamps.push(content.slice(at, nl));
    at = nl + 1;
  }
  return { digest: want, text: content.slice(at), stamps };
}

/**
 * The check of `dir` against `want` through its listing in `cache`: its folders as
 * checkListedFolders checks them, then every file it lists as listedFilesDamage does, a file gone
 * or of another kind being damage too (nothing has built in it yet). Gives the folder's scan as its
 * listing has it when both hold, else undefined (no listing, or the folder changed: walk it).
 */
export function checkListed(cache: string | undefined, key: string, dir: string, want: string): TreeScan | undefined {
  const scan = checkListedFolders(cache, key, dir, want);
  return scan && listedFilesDamage(dir, scan.text!, true) === undefined ? scan : undefined;
}

/**
 * The first half of checkListed, alone for a folder whose files may be checked while the build runs
 * (restore.ts, build.ts): reads the listing and proves the folder holds the names it lists: the
 * listing says `want`, its text hashes to it, and every folder has the stamp and mode it lists (a
 * lstat per folder, a seventh of the whole check here). Returns the folder's scan as its listing has
 * it, whose files listedFilesDamage checks later; undefined when that cannot be proved (walk it).
 */
export function checkListedFolders(cache: string | undefined, key: string, dir: string, want: string): TreeScan | undefined {
  const listing = readListing(cache, key, dir, want);
  if (!listing || sha256(listing.text) !== want) return undefined;
  const { text } = listing;
  const root = listing.stamps[0]!;
  try {
    if (stampOf(dir) !== root) return undefined;
    const stamps: Stamps = new Map([['', root]]);
    const dirs = [''];
    let newest = mtimeOfStamp(root);
    let k = 1;
    const r = new Records(text);
    while (r.next()) {
      if (r.kind !== 'd') continue;
      const rel = r.path();
      const st = fs.lstatSync(`${dir}/${rel}`, { throwIfNoEntry: false });
      const stamp = listing.stamps[k++];
      if (!st?.isDirectory() || stampOfStats(st) !== stamp || numberAt(text, r.pathEnd + 1) !== (st.mode & 0o7777)) return undefined;
      stamps.set(rel, stamp);
      dirs.push(rel);
      if (st.mtimeMs > newest) newest = st.mtimeMs;
    }
    if (r.broken) return undefined;
    if (k !== listing.stamps.length) return undefined;
    return { digest: want, dirs, stamps, newest, text, listed: true };
  } catch {
    // A folder that cannot be read: the walk says which.
    return undefined;
  }
}

/**
 * The second half: every file `text` lists (checkListedFolders' scan), in the folder now at `dir`
 * (moved since, or not), has the type, mode and size listed. A name that is gone, or is a folder or
 * a link now, was changed after its folder's stamp was checked (else the stamp would have shown it):
 * by the build, which made that part of the layer anew; unless `strict` (checkListed: nothing has
 * built in it), where it is damage too. Returns what differs, or undefined.
 * One loop for both uses: V8 optimizes it once for a rebuild's ~13,000 files.
 */
export function listedFilesDamage(dir: string, text: string, strict = false): string | undefined {
  for (const r = new Records(text); r.next();) {
    const { kind, pathEnd } = r;
    if (kind === 'd' || kind === 'l') continue;
    const rel = r.path();
    let st;
    try {
      st = fs.lstatSync(`${dir}/${rel}`, { throwIfNoEntry: false });
    } catch (e) {
      return `it cannot be read (${rel}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    }
    if (!st || st.isDirectory() || st.isSymbolicLink()) {
      if (strict)
        return `its files differ from what the build that cached it stored (${rel}: ${!st ? 'gone' : st.isDirectory() ? 'a folder now' : 'a link now'})`;
      continue;
    }
    const mode = numberAt(text, pathEnd + 1);
    const size = numberAt(text, text.indexOf('\0', pathEnd + 1) + 1);
    if (kind === (st.isFile() ? 'f' : 'o') && mode === (st.mode & 0o7777) && size === st.size) continue;
    const now =
      size !== st.size
        ? `${st.size} bytes, ${size} stored`
        : mode !== (st.mode & 0o7777)
          ? `mode ${(st.mode & 0o7777).toString(8)}, ${mode.toString(8)} stored`
          : 'not a regular file';
    return `its files differ from what the build that cached it stored (${rel}: ${now})`;
  }
  return undefined;
}

/**
 * Folder stamps: inode and modification time of each folder of a layer. Adding, removing or renaming
 * anything in a folder changes its modification time, so equal stamps prove that the layer holds the
 * same names as when they were taken: a layer restored and left alone keeps the digest restore
 * checked, without a second walk of its files. (A file rewritten in place keeps its folder's stamp:
 * the record is then stale, and the next restore finds the layer damaged and has it built again;
 * a buildpack must not rewrite a reused layer's files in place anyway, see fsops.ts.)
 */
export type Stamps = Map<string, string>;

/** A folder's stamp; mtimeMs keeps the nanoseconds to a fraction of a microsecond, far below a clock tick. */
function stampOfStats(st: fs.Stats): string {
  return `${st.ino}:${st.mtimeMs}`;
}

/** The modification time a stamp holds (ms). */
const mtimeOfStamp = (stamp: string) => Number(stamp.slice(stamp.indexOf(':') + 1));

export function stampOf(p: string): string | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isDirectory() ? stampOfStats(st) : undefined;
  } catch {
    // gone, or a file now stands where one of its parent folders was (ENOTDIR)
    return undefined;
  }
}

export function takeStamps(root: string, dirs: string[]): Stamps {
  return new Map(dirs.map((d) => [d, stampOf(d ? path.join(root, d) : root) ?? '']));
}

/**
 * The stamps of a walked folder once it has moved to `root` (a rename): its subfolders keep theirs;
 * its own is taken again, since a file system may stamp a moved folder. And how long to wait before
 * a change can be trusted to show (see STAMP_SETTLE_MS): nothing when every folder was last changed
 * more than a settle time before the move. The rename stamped the folder's change time with the file
 * system's own clock (an NFS server's, say), so the ages are measured on that clock, not on ours.
 */
export function movedStamps(root: string, scan: TreeScan): { stamps: Stamps; settleMs: number } {
  const st = fs.lstatSync(root);
  const stamps = new Map([...(scan.stamps ?? []), ['', stampOfStats(st)]]);
  const newest = Math.max(scan.newest ?? Infinity, st.mtimeMs);
  const age = st.ctimeMs - newest;
  return { stamps, settleMs: age > STAMP_SETTLE_MS ? 0 : STAMP_SETTLE_MS - Math.max(age, 0) };
}

export function sameStamps(root: string, stamps: Stamps): boolean {
  for (const [d, s] of stamps) if (!s || stampOf(d ? path.join(root, d) : root) !== s) return false;
  return true;
}

/**
 * The kernel stamps modifications with a clock that ticks every few milliseconds: a change made in
 * the same tick as a folder's last one would keep its stamp. Waiting until this long after the
 * newest stamped change, before any buildpack runs, makes every later change show. A folder last
 * changed longer ago than that (a layer left alone since the previous build) needs no wait.
 */
export const STAMP_SETTLE_MS = 25;

/**
 * What a cache's marker file records of its layer folders, `<escaped id>/<layer>` → value:
 * - `trees`: the digest of each folder's files (scanTree), checked before a layer is trusted;
 * - `folders`: for a launch+cache folder of an explicit --cache, the digest of its folders' stamps
 *   (foldersDigest) as export left it. Its files are the same files (hard links) as the spare a
 *   restore walks in full, so a spare found intact and folder stamps unchanged prove the cached
 *   copy intact too: a file truncated or rewritten shows in the spare's walk (same inode), and a
 *   name added, removed or replaced changes its folder's stamp. One walk of the files per layer
 *   instead of two.
 * Kept in the marker so that buildpack folders in the cache hold only what the lifecycle puts there.
 * A marker that does not parse counts as no record.
 */
export interface CacheRecord {
  trees: Map<string, string>;
  folders: Map<string, string>;
}

function stringTable(t: unknown): Map<string, string> {
  if (typeof t !== 'object' || t === null) return new Map();
  return new Map(Object.entries(t).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export function readCacheRecord(markerFile: string): CacheRecord {
  try {
    const t = parse(fs.readFileSync(markerFile, 'utf8'));
    return { trees: stringTable(t.trees), folders: stringTable(t.folders) };
  } catch {
    return { trees: new Map(), folders: new Map() };
  }
}

export function writeCacheRecord(markerFile: string, record: CacheRecord): void {
  const t = { trees: Object.fromEntries(record.trees), ...(record.folders.size ? { folders: Object.fromEntries(record.folders) } : {}) };
  fs.writeFileSync(markerFile, `# This folder is an rbp layer cache: rbp build replaces it.\n${stringify(t)}\n`);
}

/**
 * The digest of the stamps (stampOf: inode and modification time) of `dirs` under `root`, in the
 * order given; a folder that is gone or no folder stamps as ''. A lstat per folder, no readdir.
 */
export function foldersDigest(root: string, dirs: Iterable<string>): string {
  const lines: string[] = [];
  for (const d of dirs) lines.push(`${d}\0${stampOf(d ? `${root}/${d}` : root) ?? ''}\n`);
  return sha256(lines.join(''));
}

/**
 * The check of a cache-only folder whose record is `until:` (see UNTIL) and whose listing no longer
 * gives restore's digest (the build changed it): a walk, whose scan stands when nothing below the
 * folder changed after `time`.
 */
export function checkUntil(dir: string, time: number): { damage?: string; scan?: TreeScan } {
  const r = checkTree(dir, undefined, undefined, true);
  if (r.damage || !r.scan) return r;
  return (r.scan.latest ?? Infinity) > time ? { damage: 'something in it changed after the build that cached it ended' } : r;
}

/**
 * Why the cached folder differs from the digest export recorded, or undefined when it is intact
 * (or when nothing was recorded: a cache of an older rbp).
 */
export function treeDamage(layerDir: string, want: string | undefined): string | undefined {
  if (!want) {
    const st = fs.lstatSync(layerDir, { throwIfNoEntry: false });
    return !st ? 'its folder is missing' : st.isDirectory() ? undefined : 'a file stands where its folder should be';
  }
  return checkTree(layerDir, want).damage;
}

/**
 * The check of `treeDamage`, keeping what the walk found; with `linkTo`, the tree is also linked
 * there in the same walk, and removed again when it turns out damaged.
 */
export function checkTree(layerDir: string, want: string | undefined, linkTo?: string, keepText = false): { damage?: string; scan?: TreeScan } {
  let st;
  try {
    st = fs.lstatSync(layerDir);
  } catch {
    return { damage: 'its folder is missing' };
  }
  if (!st.isDirectory()) return { damage: 'a file stands where its folder should be' };
  let scan: TreeScan;
  try {
    scan = scanTree(layerDir, linkTo, keepText);
  } catch (e) {
    if (linkTo) fs.rmSync(linkTo, { recursive: true, force: true });
    return { damage: `it cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  if (want && scan.digest !== want) {
    if (linkTo) fs.rmSync(linkTo, { recursive: true, force: true });
    return { damage: 'its files differ from what the build that cached it stored (a file changed size, appeared or went)' };
  }
  return { scan };
}
