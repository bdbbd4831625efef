/**
 * The shared download cache (RBP_DOWNLOAD_CACHE; rbp points it at $XDG_CACHE_HOME/rbp/downloads):
 * one verified, unpacked copy of each tool version, hard-linked into the layers of every build that
 * needs it, so ten apps on Node.js 24 keep one Node.js on disk and download it once.
 *
 *   <root>/<id>/<version>-<arch>-<key>/tree/       the unpacked tool, its files read-only
 *   <root>/<id>/<version>-<arch>-<key>/entry.json  what it is: id, version, arch, uri, the checksums
 *                                                   it was verified against, its tree's digest
 *   <root>/.incoming/<pid>-<random>/               an entry being filled (same file system)
 *   <root>/.locks/<id>-<version>-<arch>-<key>.lock the build filling that entry (fill-lock.ts)
 *   <root>/.trash/                                  entries on their way out (prune, damage)
 *
 * Correct when builds run at once and when one is killed, whatever the timing:
 * - an entry is filled in `.incoming/`, then renamed into place in one step: it exists only when
 *   complete, and a killed build leaves only `.incoming/` litter (swept when its process is gone);
 * - of two builds that need the same entry, one fills it under its lock while the other waits
 *   (fill-lock.ts); if two fill at once anyway, the second rename fails and its copy is dropped;
 * - a reader checks the entry against its recorded digest (paths, types, modes and sizes) while
 *   it links it (scanTree: one pass), so a damaged entry is dropped and filled again.
 * Only downloads verified against a checksum (pinned, published or mirrored) are shared: the key
 * holds the pinned checksum, and the entry records what it was verified against.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { raw } from '../config/read.ts';
import { formatDuration, type Logger } from '../log.ts';
import { lock, tryLock, type HeldLock } from './fill-lock.ts';
import { scanTree } from '../tree-digest.ts';
import { writeFailure, type WriteTarget } from '../disk.ts';
import { pidAlive } from '../pid.ts';
import { formatChecksum, type Checksum } from './checksum.ts';
import type { DependencySpec } from './catalog.ts';
import { redact } from './url.ts';

export const DOWNLOAD_CACHE_VARIABLE = 'RBP_DOWNLOAD_CACHE';

/** The cache's root from RBP_DOWNLOAD_CACHE; undefined when unset or `off`. */
export function downloadCacheRoot(env: Record<string, string | undefined>): string | undefined {
  const v = raw(env, DOWNLOAD_CACHE_VARIABLE)?.trim();
  if (!v || v === 'off') return undefined;
  return path.resolve(v);
}

export interface EntryRecord {
  id: string;
  version: string;
  arch: string;
  /** The upstream URI, credentials hidden. */
  uri: string;
  /** What the download was verified against (`sha256:…`, and where it came from). */
  verified: string[];
  /** scanTree's digest of tree/. */
  digest: string;
  bytes: number;
  created: string;
}

/**
 * The folder name of a spec's entry: readable, and unique for what decides its contents. A spec
 * with its own checksum (pinned, or the registry's integrity) is keyed on it, wherever the bytes
 * came from; one verified against a checksum found at download time is keyed on where that was
 * (`origin`: `upstream`, or the mirror), so a build never takes a file its own sources would not vouch for.
 */
export function entryName(spec: DependencySpec, arch: string, origin = 'upstream'): { dir: string; name: string } {
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify([spec.id, spec.version, arch, redact(spec.uri), spec.checksum ? formatChecksum(spec.checksum) : redact(origin)]))
    .digest('hex')
    .slice(0, 16);
  const safe = (s: string) => s.replace(/[^\w.+-]/g, '_');
  return { dir: safe(spec.id), name: `${safe(spec.version)}-${safe(arch)}-${key}` };
}

/** Moves a folder out of the way in one step, then removes it: nobody sees it half removed. */
export function discard(root: string, dir: string): void {
  const trash = path.join(root, '.trash', `${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(path.dirname(trash), { recursive: true });
    fs.renameSync(dir, trash);
  } catch {
    return; // gone already (another build dropped it)
  }
  fs.rmSync(trash, { recursive: true, force: true });
}

/**
 * `.incoming/` folders of builds that are gone (killed while filling), and `.trash/` left by a
 * removal that was interrupted. `minAgeMs` spares a folder whose owner may run in another pid
 * namespace (a container sharing the cache), where a live owner looks dead.
 */
export function sweepLitter(root: string, minAgeMs: number): { path: string; bytes: number }[] {
  const found: { path: string; bytes: number }[] = [];
  for (const sub of ['.incoming', '.trash']) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, sub));
    } catch {
      continue;
    }
    for (const n of names) {
      const p = path.join(root, sub, n);
      const pid = Number(n.split('-')[0]);
      const age = Date.now() - (fs.statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      if ((Number.isInteger(pid) && pid > 0 && pidAlive(pid) && pid !== process.pid) || age < minAgeMs) continue;
      found.push({ path: p, bytes: 0 });
    }
  }
  return found;
}

export function readEntry(entryDir: string): EntryRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(entryDir, 'entry.json'), 'utf8')) as EntryRecord;
    return typeof r.digest === 'string' && typeof r.id === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

export interface CachedInstall {
  /** `linked`: an entry was there; `filled`: this build downloaded it into the cache. */
  how: 'linked' | 'filled';
  record: EntryRecord;
}

export interface FillOptions {
  root: string;
  spec: DependencySpec;
  arch: string;
  /** Where a checksum not in the spec comes from: `upstream`, or the mirror's location (entryName). */
  origin?: string;
  /** Where the tool goes: must not exist (it is made as a tree of links). */
  target: string;
  log: Logger;
  /** How an error names `target` when it cannot be written (lib/disk.ts); default its path. */
  targetPlace?: WriteTarget;
  /** Downloads, verifies and unpacks into `dir`; returns the checksums the download matched. `cache` names the cache in an error. */
  fill: (dir: string, cache: WriteTarget) => Promise<Checksum[]>;
}

/**
 * Puts the tool of `spec` at `target` from the shared cache, filling the entry first when it is
 * not there (once, however many builds ask at the same time).
 */
export async function installShared(o: FillOptions): Promise<CachedInstall> {
  const { dir, name } = entryName(o.spec, o.arch, o.origin);
  const entryDir = path.join(o.root, dir, name);
  const what = `${o.spec.id} ${o.spec.version}`;
  const linked = linkEntry(o, entryDir);
  if (linked) return { how: 'linked', record: linked };

  const cache: WriteTarget = {
    folder: o.root,
    what: 'the download cache',
    writing: what,
    elsewhere: `set ${DOWNLOAD_CACHE_VARIABLE} to a folder on a larger file system (or to off: each build downloads its tools itself)`,
  };
  let held: HeldLock | undefined;
  try {
    fs.mkdirSync(path.join(o.root, '.locks'), { recursive: true });
    const lockFile = path.join(o.root, '.locks', `${dir}-${name}.lock`);
    held = tryLock(lockFile);
    if (!held) {
      o.log.info(`another build is downloading ${what} into the download cache: waiting for it`);
      const t0 = performance.now();
      // Waited long enough (a download has its own timeouts): fill it too, safely (see above).
      held = await lock(lockFile, 20 * 60_000);
      o.log.detail(`waited ${formatDuration(performance.now() - t0)}`);
    }
    const now = linkEntry(o, entryDir);
    if (now) return { how: 'linked', record: now };
    const record = await fillEntry(o, entryDir, cache);
    const placed = linkEntry(o, entryDir);
    if (!placed) throw new Error(`the download cache entry ${entryDir} could not be linked after it was filled`);
    return { how: 'filled', record };
  } catch (e) {
    throw writeFailure(e, cache) ?? e;
  } finally {
    held?.release();
  }
}

/**
 * Links the entry's tree at the target when the entry is there and intact; drops a damaged one. A
 * target that has no room for it (another file system, where its files are copied) is the target's
 * failure: the entry stays.
 */
function linkEntry(o: FillOptions, entryDir: string): EntryRecord | undefined {
  const record = readEntry(entryDir);
  if (!record) return undefined;
  fs.rmSync(o.target, { recursive: true, force: true });
  let damage: string | undefined;
  try {
    if (scanTree(path.join(entryDir, 'tree'), o.target).digest !== record.digest) damage = 'its files differ from what was recorded when it was filled';
  } catch (e) {
    fs.rmSync(o.target, { recursive: true, force: true });
    const full = writeFailure(e, {
      ...(o.targetPlace ?? { folder: o.target, what: 'the tool folder' }),
      needed: { bytes: record.bytes, how: `${o.spec.id} ${o.spec.version} unpacked` },
    });
    if (full) throw full;
    damage = `it cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  if (damage) {
    // Removed by a prune meanwhile, or changed on disk: filled again.
    if (fs.existsSync(entryDir)) {
      o.log.warn(`the download cache's ${record.id} ${record.version} is damaged (${damage}): downloading it again`);
      discard(o.root, entryDir);
    }
    fs.rmSync(o.target, { recursive: true, force: true });
    return undefined;
  }
  return record;
}

/** Fills an entry in `.incoming/`, then renames it into place (or drops it if another build won). */
async function fillEntry(o: FillOptions, entryDir: string, cache: WriteTarget): Promise<EntryRecord> {
  for (const l of sweepLitter(o.root, 10 * 60_000)) fs.rmSync(l.path, { recursive: true, force: true });
  const incoming = path.join(o.root, '.incoming', `${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  const tree = path.join(incoming, 'tree');
  try {
    fs.mkdirSync(tree, { recursive: true });
    const verified = await o.fill(tree, cache);
    // Read-only: a tool that rewrote one of its files in place would change every build's copy.
    let bytes = 0;
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) {
          const st = fs.statSync(p);
          bytes += st.size;
          fs.chmodSync(p, st.mode & ~0o222);
        }
      }
    };
    walk(tree);
    const record: EntryRecord = {
      id: o.spec.id,
      version: o.spec.version,
      arch: o.arch,
      uri: redact(o.spec.uri),
      verified: verified.map((c) => `${formatChecksum(c)} (${c.source ?? 'pinned'})`),
      digest: scanTree(tree).digest,
      bytes,
      created: new Date().toISOString(),
    };
    fs.writeFileSync(path.join(incoming, 'entry.json'), `${JSON.stringify(record, null, 2)}\n`);
    fs.mkdirSync(path.dirname(entryDir), { recursive: true });
    try {
      fs.renameSync(incoming, entryDir);
      o.log.detail(`kept in the download cache: ${entryDir}`);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
      // Another build put the same entry there first: its copy serves.
      o.log.detail('another build put it in the download cache first: that copy is used');
    }
    return readEntry(entryDir) ?? record;
  } finally {
    fs.rmSync(incoming, { recursive: true, force: true });
  }
}
