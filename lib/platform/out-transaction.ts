/**
 * OUT as a transaction. One object owns every move of OUT, of its generations and of the cache
 * during a build, records each one, and on failure undoes exactly those, nothing more: OUT is a
 * complete build at every instant, the previous one or the new one, whether the build succeeds,
 * fails, is interrupted or killed (SIGKILL, a power cut), and whatever runs at once.
 *
 * On disk:
 *   OUT/.rbp-out         written first into a new generation: this folder is rbp's to replace
 *   OUT/rbp.toml         written last by export: the build is complete
 *   OUT/.rbp-reuse.json  then, by a deploy's build: what it was made from (build-reuse.ts)
 *   OUT.rbp-next         the generation a build fills; its buildpacks see it at OUT's own path
 *                        (out-namespace.ts); switched in with one exchange of names (out-generations.ts)
 *   OUT.rbp-old/         earlier generations an app started by rbp run or deploy still runs from
 *   OUT.rbp-lock         the pid of the build that owns OUT (a second build is refused)
 *   CACHE/.rbp-cache     this folder is an rbp cache
 *   CACHE.rbp-new        the cache export is writing (`.rbp-for` in it: the generation it goes with)
 *   OUT.rbp-spare        for each launch+cache layer of OUT, a second name for each of its files:
 *                        the previous generation's folder when the last build left the layer alone
 *                        (kept instead of removed), else links export made (OUT.rbp-spare.rbp-new first)
 *   OUT.rbp-previous     where no private mount namespace can be had (in-place builds): the
 *                        previous OUT while a build fills OUT itself; a build killed then leaves it,
 *                        and `recover` (the next build, `rbp run`) puts the last complete OUT back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { checkTree } from '../cache-check.ts';
import { checkpoint } from './checkpoint.ts';
import { identity, isDir, linkTree, moveTree, rmrf } from './fsops.ts';
import { generationInUse } from './in-use.ts';
import { rbpInfoPath } from './metadata.ts';
import { nextOf, removeUnlessInUse, setAside, sweepGenerations, switchOut } from './out-generations.ts';
import { probeOutNamespace, type OutNamespace } from './out-namespace.ts';
import { pidAlive } from '../pid.ts';

export const OUT_MARKER = '.rbp-out';
export const CACHE_MARKER = '.rbp-cache';

export const previousOf = (out: string) => `${out}.rbp-previous`;
export const spareOf = (out: string) => `${out}.rbp-spare`;
export const lockOf = (out: string) => `${out}.rbp-lock`;
/** In a new cache: the generation of OUT it goes with (its folder's identity), written before OUT switches. */
const FOR_GENERATION = '.rbp-for';

/** Whether `inner` is `outer` or below it (both absolute, resolved). */
function within(inner: string, outer: string): boolean {
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

/** OUT's lock file: the builder's pid, then the process group of the buildpack running, if any. */
function readLock(out: string): { pid: number; group?: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockOf(out), 'utf8');
  } catch {
    return undefined;
  }
  const [pid, group] = text.split('\n').map((l) => Number(l.trim()));
  return { pid: pid ?? NaN, ...(group ? { group } : {}) };
}

/** The pid in OUT's lock file when that process still runs. */
export function lockHolder(out: string): number | undefined {
  const pid = readLock(out)?.pid;
  return pid !== undefined && pidAlive(pid) && pid !== process.pid ? pid : undefined;
}

/**
 * A builder killed with SIGKILL could not stop its buildpack: that process group may still run and
 * write into the generation it was building. Its members are found in /proc by group id and working
 * folder (inside OUT as the buildpack saw it, or the generation's own folder, so a reused group id of
 * an unrelated program is left alone), and killed.
 */
function stopOrphans(out: string): void {
  const group = readLock(out)?.group;
  if (!group) return;
  let members: number[];
  try {
    members = fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          // pgrp is the 3rd field after the command, which is in parentheses and may hold spaces.
          const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
          const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
          return pgrp === group && [out, realish(out), nextOf(out)].some((dir) => cwd === dir || cwd.startsWith(`${dir}/`));
        } catch {
          return false;
        }
      });
  } catch {
    return; // no /proc
  }
  if (members.length === 0) return;
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

function outError(id: string, title: string, value: string, rule: string, fix: string, details?: string[]): UserError {
  return new UserError({ id, title, seen: { what: '--out', value }, rule, fix, ...(details ? { details } : {}) });
}

/**
 * After a crash (SIGKILL, power loss), when no build runs: the buildpack the dead build started is
 * stopped, and what OUT must be comes back. A build that fills the next generation leaves OUT
 * complete whatever happens, but for one case: a switch made in two renames (where renameat2 is
 * missing) killed between them, with no OUT and the new generation complete: it is carried through.
 * An in-place build (no namespace) leaves OUT half built beside OUT.rbp-previous: the complete one
 * wins, a new OUT with rbp.toml, else the previous one. Returns what it did.
 */
export function recover(outDir: string): string | undefined {
  const out = path.resolve(outDir);
  const prev = previousOf(out);
  if (lockHolder(out) !== undefined) return undefined;
  stopOrphans(out);
  const next = nextOf(out);
  if (!fs.existsSync(out) && fs.existsSync(path.join(next, OUT_MARKER)) && fs.existsSync(rbpInfoPath(next))) {
    fs.renameSync(next, out);
    return `an interrupted build had not finished switching ${out} to its new build: it is in place now`;
  }
  if (!fs.existsSync(prev)) return undefined;
  if (fs.existsSync(rbpInfoPath(out))) {
    rmrf(prev);
    return `removed ${prev}: ${out} holds a complete build`;
  }
  // Only a folder rbp made (the marker is its first file), or an empty one, is thrown away.
  if (fs.existsSync(out)) {
    if (!fs.existsSync(path.join(out, OUT_MARKER)) && !(isDir(out) && fs.readdirSync(out).length === 0)) return undefined;
    rmrf(out);
  }
  fs.renameSync(prev, out);
  return `an interrupted build left ${out} incomplete: the previous build is back`;
}

export interface TransactionPaths {
  appDir: string;
  outDir: string;
  /** The cache folder; `explicit` when the user chose it (--cache). */
  cacheDir: string;
  explicitCache: boolean;
}

/** Why an existing folder is not one rbp may replace, or undefined when it may. */
function notOurs(dir: string, marker: string, looksOurs: (entries: string[]) => boolean): string | undefined {
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is a file, not a folder';
  const entries = fs.readdirSync(dir);
  if (entries.length === 0 || entries.includes(marker) || looksOurs(entries)) return undefined;
  return `is not empty and was not made by rbp (it holds ${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', …' : ''})`;
}

/** An OUT of an older rbp (before the marker): rbp.toml or the lifecycle's layers/config. */
function looksLikeOut(dir: string): (entries: string[]) => boolean {
  return (entries) =>
    entries.includes('rbp.toml') ||
    (entries.every((e) => ['workspace', 'layers', 'rbp.toml'].includes(e)) && fs.existsSync(path.join(dir, 'layers', 'config', 'metadata.toml')));
}

/** A cache of an older rbp: folders of `<layer>.toml` files and layer folders only. */
function looksLikeCache(dir: string): (entries: string[]) => boolean {
  return (entries) =>
    entries.every((e) => {
      const p = path.join(dir, e);
      if (!isDir(p)) return false;
      return fs.readdirSync(p).every((f) => f.endsWith('.toml') || isDir(path.join(p, f)));
    });
}

/** The longest name rbp gives a folder beside OUT (OUT.rbp-spare.rbp-new, OUT.rbp-cache.rbp-new). */
const LONGEST_SUFFIX = '.rbp-spare.rbp-new';
/** Linux's longest file name, in bytes. */
const NAME_MAX = 255;

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

export class OutTransaction {
  readonly app: string;
  /** OUT: the path the user named, where the build is shown to its buildpacks and, once complete, to everyone. */
  readonly out: string;
  readonly prev: string;
  /** `OUT.rbp-next`: the generation this build fills (unless it builds in place). */
  readonly next: string;
  readonly cacheDir: string;
  readonly newCache: string;
  /**
   * `OUT.rbp-spare`: a launch+cache layer's folder of the previous OUT, kept when the build left the
   * layer alone. A restore that finds it intact moves it into the new OUT (one rename) while the
   * previous OUT keeps its own folder for a failed build; otherwise each rebuild would make a tree of
   * links and remove one, a folder and a link per entry (rmdir is the slowest of them on ext4).
   */
  readonly spare: string;
  /** `<escaped id>/<layer>` whose previous-OUT folder becomes the next spare at commit. */
  private readonly toSpare: string[] = [];
  /**
   * `OUT.rbp-spare.rbp-new`: spares export linked for launch+cache layers this build made or
   * changed, moved into OUT.rbp-spare at commit.
   */
  private readonly newSpares: string;
  /**
   * Whether the cache was chosen with --cache and may serve other OUTs: it then keeps its own names
   * for launch+cache layers' files (hard links to OUT's). The cache beside OUT keeps none: those
   * layers' only copy is OUT, so no later change to the cache can reach the built app.
   */
  readonly sharedCache: boolean;
  /**
   * How this build's buildpacks see the new generation at OUT's path, once `begin` found a way;
   * undefined when the build happens in place (at OUT itself, the previous OUT set aside).
   */
  namespace: OutNamespace | undefined;
  /** Where this build writes: the next generation's folder, or OUT itself when it builds in place. */
  root: string;
  /** The previous build, whose layers this build may reuse (read only while it is OUT). */
  previous: string | undefined;
  /** Whether OUT existed (not empty) when this build began. */
  hadPrevious = false;
  /** Why this build happens in place, when it does (one line for the log). */
  inPlace: string | undefined;
  /** The namespace probe begin started, until `settle` took its answer. */
  private probe: Promise<{ ns?: OutNamespace; why: string }> | undefined;
  /** In place: whether OUT existed and now waits at `prev`. */
  private movedAside = false;
  /** Whether the folder at `root` is this build's (made by `begin`), to remove if it fails. */
  private ownsRoot = false;
  /** Whether `begin` made OUT, empty, for the namespace's mount (the first build of OUT). */
  private madeMountPoint = false;
  private locked = false;
  /** Spares moved into this OUT: moved back on failure. */
  private readonly sparesTaken: { from: string; to: string; id: string | undefined }[] = [];
  /** In place: folders moved from the previous OUT into this one, moved back on failure. */
  private readonly fromPrevious: [from: string, to: string][] = [];
  /** Cached folders moved into this build: gone from the cache on failure (the build may have changed them). */
  private readonly takenFromCache: string[] = [];
  /** Cached folders moved on into the new cache: moved back on failure. */
  private readonly carried: [from: string, to: string][] = [];
  /** Set once OUT holds the new build: nothing is undone from then on. */
  private done = false;

  /** Checks the paths (nothing is touched when they are refused) and takes OUT's lock. */
  constructor(p: TransactionPaths) {
    this.app = path.resolve(p.appDir);
    this.out = path.resolve(p.outDir);
    this.prev = previousOf(this.out);
    this.next = nextOf(this.out);
    this.root = this.out;
    this.cacheDir = path.resolve(p.cacheDir);
    this.newCache = `${this.cacheDir}.rbp-new`;
    this.spare = spareOf(this.out);
    this.newSpares = `${this.spare}.rbp-new`;
    this.sharedCache = p.explicitCache;
    this.check(p);
    this.lock();
  }

  private check(p: TransactionPaths): void {
    const out = realish(this.out);
    const app = realish(this.app);
    const cache = realish(this.cacheDir);
    const fixOut = 'Give --out a folder of its own outside the application, for example --out ../app-out (a new or empty folder, or an earlier rbp build).';
    if (path.dirname(out) === out)
      throw outError('platform/out/root', 'OUT is the root folder', p.outDir, 'OUT is replaced by every build; it cannot be /.', fixOut);
    if (within(out, app)) {
      throw outError(
        'platform/out/inside-app',
        out === app ? 'OUT is the application folder' : 'OUT is inside the application folder',
        p.outDir,
        'The build copies APP into OUT/workspace and replaces OUT; OUT cannot be APP or inside it.',
        fixOut,
      );
    }
    if (within(app, out))
      throw outError(
        'platform/out/contains-app',
        'OUT contains the application folder',
        p.outDir,
        'OUT is replaced by every build; the application folder cannot be inside it.',
        fixOut,
      );
    const tooLong = [`${path.basename(this.out)}${LONGEST_SUFFIX}`, `${path.basename(this.cacheDir)}.rbp-new`].find((n) => Buffer.byteLength(n) > NAME_MAX);
    if (tooLong) {
      throw outError(
        'platform/out/name-too-long',
        'The name of OUT is too long for the folders rbp keeps beside it',
        p.outDir,
        `rbp keeps folders beside OUT and the cache, named after them (OUT.rbp-next, OUT.rbp-spare.rbp-new, CACHE.rbp-new); a name is at most ${NAME_MAX} bytes, and ${tooLong.slice(0, 24)}… would be ${Buffer.byteLength(tooLong)}.`,
        'Give --out (and --cache) a shorter name.',
      );
    }
    const why = notOurs(this.out, OUT_MARKER, looksLikeOut(this.out));
    if (why)
      throw outError(
        'platform/out/not-rbp',
        'OUT is a folder rbp did not make',
        p.outDir,
        `rbp build replaces OUT entirely, so it must be new, empty or an earlier rbp build; ${p.outDir} ${why}.`,
        fixOut,
      );

    const what = p.explicitCache ? '--cache' : 'the cache beside OUT';
    const cacheErr = (id: string, title: string, rule: string) =>
      new UserError({
        id,
        title,
        seen: { what, value: this.cacheDir },
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
    const cwhy = notOurs(this.cacheDir, CACHE_MARKER, looksLikeCache(this.cacheDir));
    if (cwhy)
      throw cacheErr(
        'platform/cache/not-rbp',
        'The cache folder is not an rbp cache',
        `The cache is replaced by every build, so it must be new, empty or an earlier rbp cache; it ${cwhy}.`,
      );
    if (fs.existsSync(this.out) && isMountPoint(this.out)) {
      throw outError(
        'platform/out/cannot-move',
        'OUT is a mount point',
        p.outDir,
        'rbp switches OUT to each new build by renaming folders beside it, and a mount point cannot be renamed.',
        'Mount the volume one folder up and give --out a folder inside it, for example --out /mnt/volume/app-out.',
      );
    }
  }

  /** One build per OUT: the lock file holds the builder's pid; a dead builder's lock is taken over. */
  private lock(): void {
    const file = lockOf(this.out);
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
    } catch {
      // reported by the write below
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
        this.locked = true;
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') {
          throw new UserError({
            id: 'platform/out/unusable',
            title: 'OUT cannot be used',
            seen: { what: '--out', value: this.out },
            rule: `rbp writes ${path.basename(file)} beside OUT (one build at a time per OUT); that failed (${code ?? (e as Error).message}).`,
            fix: 'Use an OUT with a shorter name, in a folder you may write.',
          });
        }
      }
      const holder = lockHolder(this.out);
      if (holder !== undefined) {
        throw new UserError({
          id: 'platform/out/locked',
          title: 'Another build into OUT is running',
          seen: { what: '--out', value: this.out, where: `process ${holder}` },
          rule: 'One build at a time writes into an OUT folder.',
          fix: `Wait for process ${holder} to finish, or build into another --out.`,
        });
      }
      // Stale: its builder is gone (and so is its buildpack, once stopOrphans ran). Removing it is
      // safe: `wx` decides who takes it next.
      stopOrphans(this.out);
      fs.rmSync(file, { force: true });
    }
    throw new Error(`could not take the lock ${file}`);
  }

  /** Records the process group of the buildpack now running, for the next rbp if this one is killed. */
  recordGroup(pgid: number | undefined): void {
    if (!this.locked) return;
    try {
      fs.writeFileSync(lockOf(this.out), `${process.pid}\n${pgid ?? ''}\n`);
    } catch {
      // the lock stays valid without it
    }
  }

  /**
   * Recovers from an earlier crash and sweeps what it left, then makes the new generation beside
   * OUT (`root`), and starts the probe of whether its buildpacks can be shown it at OUT's path
   * (out-namespace.ts), whose answer `settle` waits for. Returns warnings for the log.
   */
  begin(): string[] {
    const notes: string[] = [];
    const recovered = recover(this.out);
    if (recovered) notes.push(recovered);
    if (fs.existsSync(this.prev)) {
      throw new UserError({
        id: 'platform/out/previous-left',
        title: 'An earlier build left OUT.rbp-previous beside an OUT rbp cannot judge',
        seen: { what: '--out', value: this.out, where: this.prev },
        rule: 'rbp keeps the previous OUT aside while it builds; after a crash it takes it back when OUT is incomplete.',
        fix: `Keep the one you want: remove ${this.out} or ${this.prev}, then build again.`,
      });
    }
    this.finishCache();
    sweepGenerations(this.out);
    rmrf(this.newCache);
    // Spares a killed build was linking.
    rmrf(this.newSpares);
    this.hadPrevious = isDir(this.out) && fs.readdirSync(this.out).length > 0;
    fs.mkdirSync(this.next);
    this.ownsRoot = true;
    this.root = this.next;
    fs.writeFileSync(path.join(this.next, OUT_MARKER), 'This folder is an rbp build output: rbp build replaces it.\n');
    if (!fs.existsSync(this.out)) {
      fs.mkdirSync(this.out);
      this.madeMountPoint = true;
    }
    checkpoint('begun');
    this.probe = probeOutNamespace(this.next, this.out);
    return notes;
  }

  /**
   * The probe's answer. With a namespace, the build goes on in the new generation (what was written
   * into `root` since begin stays); without one, that generation goes and the build happens at OUT
   * itself, the previous OUT set aside (`inPlace` says why): returns false, and the caller writes
   * again what it had written into `root`.
   */
  async settle(): Promise<boolean> {
    const probing = this.probe;
    if (!probing) throw new Error('OutTransaction.settle: once, after begin');
    this.probe = undefined;
    const probe = await probing;
    if (probe.ns) {
      this.namespace = probe.ns;
      if (this.hadPrevious) this.previous = this.out;
      return true;
    }
    this.undoBegin();
    this.inPlace = `OUT is not switched atomically here (no private mount namespace: ${probe.why}): the build happens in ${this.out} itself, which readers see half built until it ends; a failed or interrupted build is undone, a killed one by the next rbp command`;
    this.beginInPlace();
    return false;
  }

  /** Removes what begin made for a new generation. */
  private undoBegin(): void {
    if (this.ownsRoot) rmrf(this.root);
    this.ownsRoot = false;
    if (this.madeMountPoint) fs.rmdirSync(this.out);
    this.madeMountPoint = false;
    this.root = this.out;
  }

  /** The build in OUT itself: the previous OUT waits in OUT.rbp-previous. */
  private beginInPlace(): void {
    if (fs.existsSync(this.out)) {
      try {
        fs.renameSync(this.out, this.prev);
      } catch (e) {
        // Nothing was moved: OUT stays as it is.
        throw new UserError({
          id: 'platform/out/cannot-move',
          title: 'The previous OUT cannot be set aside',
          seen: { what: '--out', value: this.out },
          rule: `rbp renames OUT to ${path.basename(this.prev)} while it builds, so that a failed build can put it back; the rename failed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`,
          fix: 'Use an OUT whose name is shorter and that is not a mount point, in a folder you may write.',
        });
      }
      this.movedAside = true;
      this.previous = this.prev;
    }
    fs.mkdirSync(this.out);
    this.ownsRoot = true;
    fs.writeFileSync(path.join(this.out, OUT_MARKER), 'This folder is an rbp build output: rbp build replaces it.\n');
  }

  /**
   * A build killed after it switched OUT but before its new cache took the old one's place: the
   * new cache names the generation it goes with (`.rbp-for`), and when that is OUT's now, it is put
   * in place; else it is an unfinished cache, removed after this.
   */
  private finishCache(): void {
    let forGen: string | undefined;
    try {
      forGen = fs.readFileSync(path.join(this.newCache, FOR_GENERATION), 'utf8').trim();
    } catch {
      return;
    }
    if (!forGen || forGen !== identity(this.out)) return;
    rmrf(this.cacheDir);
    fs.renameSync(this.newCache, this.cacheDir);
    rmrf(path.join(this.cacheDir, FOR_GENERATION));
  }

  /** Whether this build fills a new generation beside OUT (OUT complete at every instant). */
  get atomic(): boolean {
    return this.namespace !== undefined;
  }

  /** A cache-only layer: moved in; the cache no longer has it if this build fails. */
  takeFromCache(cached: string, dst: string): void {
    moveTree(cached, dst);
    this.takenFromCache.push(cached);
  }

  /**
   * A launch+cache layer: linked from the cache (see fsops), or from the previous OUT when its only
   * copy is there. The source stays whole for a rollback; nothing to undo but the new OUT.
   */
  linkLayer(src: string, dst: string, want: string | undefined): ReturnType<typeof checkTree> {
    return checkTree(src, want, dst);
  }

  /**
   * An explicit --cache's folder of a launch+cache layer that this build linked into OUT and left
   * alone: it moves on into the new cache whole (one rename), and back if this build fails.
   */
  carryCached(cached: string, dst: string): void {
    moveTree(cached, dst);
    this.carried.push([cached, dst]);
  }

  /**
   * A launch layer kept from the previous OUT. The previous OUT is OUT itself, complete until the
   * switch, when this build fills a new generation: a tree of links to it. In place, the previous
   * OUT is set aside: moved in, moved back if this build fails.
   */
  reuseFromPrevious(prevLayer: string, dst: string): void {
    if (this.atomic) {
      linkTree(prevLayer, dst);
      return;
    }
    moveTree(prevLayer, dst);
    this.fromPrevious.push([prevLayer, dst]);
  }

  /** The spare of a layer (`OUT.rbp-spare/<escaped id>/<layer>`), whether or not it exists. */
  spareOf(key: string): string {
    return path.join(this.spare, key);
  }

  /**
   * A spare checked intact moves into the new OUT. A failed build moves it back when it is still
   * that folder (a buildpack that rebuilt the layer removed it); the next restore checks it against
   * the record again before using it.
   */
  takeSpare(spare: string, dst: string): void {
    moveTree(spare, dst);
    this.sparesTaken.push({ from: spare, to: dst, id: identity(dst) });
  }

  /** This layer was restored and left alone: its previous-OUT folder becomes the next build's spare. */
  keepAsSpare(key: string): void {
    this.toSpare.push(key);
  }

  /**
   * Where export links a second name for each file of a launch+cache layer this build made or
   * changed, so that the next build finds a spare and moves it in whole: the links are made once,
   * here, instead of by the next restore (the first warm rebuild after a cold one is then as quick
   * as the others). Becomes the layer's spare at commit.
   */
  newSpare(key: string): string {
    const dst = path.join(this.newSpares, key);
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    return dst;
  }

  /** Starts the cache this build exports: `CACHE.rbp-new`, swapped in by `commit`. */
  startNewCache(): string {
    fs.mkdirSync(this.newCache, { recursive: true });
    fs.writeFileSync(path.join(this.newCache, CACHE_MARKER), '# This folder is an rbp layer cache: rbp build replaces it.\n');
    return this.newCache;
  }

  /**
   * The new generation is complete (export has written rbp.toml, last): OUT switches to it, the new
   * cache replaces the old one, spares are kept and the previous generation goes (or waits in
   * OUT.rbp-old/ while an app runs from it). From the switch on the build stands: what follows is
   * tidying, whose failures are returned as lines for the log. A build killed in the middle leaves
   * what the next one sweeps or finishes (the cache: `finishCache`).
   */
  commit(): string[] {
    const notes: string[] = [];
    if (fs.existsSync(this.newCache)) fs.writeFileSync(path.join(this.newCache, FOR_GENERATION), `${identity(this.root) ?? ''}\n`);
    checkpoint('switching');
    let previous = this.movedAside ? this.prev : undefined;
    if (this.atomic) {
      const switched = switchOut(this.out, this.next);
      if (switched.note) notes.push(switched.note);
      previous = switched.previous;
      this.ownsRoot = false;
      this.madeMountPoint = false;
      this.root = this.out;
    }
    this.done = true;
    this.movedAside = false;
    checkpoint('switched');
    const attempt = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        notes.push(`could not ${what}: ${(e as Error).message}`);
      }
    };
    attempt('put the new cache in place', () => {
      if (!fs.existsSync(this.newCache)) return;
      rmrf(this.cacheDir);
      fs.renameSync(this.newCache, this.cacheDir);
      rmrf(path.join(this.cacheDir, FOR_GENERATION));
    });
    checkpoint('cache-committed');
    // The spares not taken are stale; the previous generation's folders of layers left alone are
    // the new ones, unless an app still runs from it.
    attempt('keep the spares', () => {
      const stale = `${this.spare}.rbp-old`;
      rmrf(stale);
      if (fs.existsSync(this.spare)) fs.renameSync(this.spare, stale);
      if (previous && !(this.atomic && generationInUse(this.out, previous))) {
        for (const key of this.toSpare) {
          const src = path.join(previous, 'layers', key);
          if (isDir(src)) moveTree(src, this.spareOf(key));
        }
      }
      for (const esc of isDir(this.newSpares) ? fs.readdirSync(this.newSpares) : []) {
        for (const name of fs.readdirSync(path.join(this.newSpares, esc))) moveTree(path.join(this.newSpares, esc, name), this.spareOf(`${esc}/${name}`));
      }
      rmrf(this.newSpares);
      rmrf(stale);
    });
    checkpoint('spared');
    if (previous) {
      attempt(`remove the previous build ${previous}`, () => {
        if (!this.atomic) {
          rmrf(previous);
          return;
        }
        const aside = setAside(this.out, previous);
        checkpoint('retiring');
        if (!removeUnlessInUse(this.out, aside))
          notes.push(`the previous build of ${this.out} is kept in ${aside} while an app started from it runs (rbp prune removes it once it has ended)`);
      });
    }
    checkpoint('committed');
    return notes;
  }

  /** Undoes exactly what this build did, in reverse. Never throws: each step is tried. */
  rollback(): string[] {
    const problems: string[] = [];
    const attempt = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        problems.push(`${what}: ${(e as Error).message}`);
      }
    };
    if (this.done) return problems;
    for (const [from, to] of this.fromPrevious.reverse()) if (isDir(to)) attempt(`moving ${to} back`, () => moveTree(to, from));
    this.fromPrevious.length = 0;
    for (const { from, to, id } of this.sparesTaken.reverse()) if (id && identity(to) === id) attempt(`moving ${to} back`, () => moveTree(to, from));
    this.sparesTaken.length = 0;
    if (this.ownsRoot) attempt(`removing the incomplete ${this.root}`, () => rmrf(this.root));
    this.ownsRoot = false;
    if (this.madeMountPoint) attempt(`removing the empty ${this.out}`, () => fs.rmdirSync(this.out));
    this.madeMountPoint = false;
    if (this.movedAside) attempt(`putting ${this.prev} back`, () => fs.renameSync(this.prev, this.out));
    this.movedAside = false;
    for (const [from, to] of this.carried.reverse()) if (fs.existsSync(to)) attempt(`moving ${to} back`, () => moveTree(to, from));
    this.carried.length = 0;
    attempt(`removing ${this.newCache}`, () => rmrf(this.newCache));
    attempt(`removing ${this.newSpares}`, () => rmrf(this.newSpares));
    for (const taken of this.takenFromCache) {
      attempt(`dropping ${taken} from the cache`, () => {
        rmrf(taken);
        rmrf(`${taken}.toml`);
      });
    }
    this.takenFromCache.length = 0;
    this.done = true;
    return problems;
  }

  /** Gives OUT's lock up (after commit or rollback). */
  release(): void {
    if (!this.locked) return;
    try {
      if (readLock(this.out)?.pid === process.pid) fs.rmSync(lockOf(this.out), { force: true });
    } catch {
      // already gone
    }
    this.locked = false;
  }
}
