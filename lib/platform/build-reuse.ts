/**
 * A deploy of an app that nothing changed reuses the last build as it is, as kpack builds again only
 * for a new source, buildpack or stack: `rbp deploy` runs no detect, restore, build or export when
 * - the app's files (what the build copies: project.toml's include/exclude applied) have the same
 *   names, types, modes, sizes and modification times,
 * - the app's variables are the same (compared by a salted digest: their values are secrets),
 * - the order's buildpack folders have the same files (names, modes, sizes, modification times),
 * - rbp's own program, the build environment it hands buildpacks (the host's include-list, the
 *   operator's RBP_* settings), the bindings and the options (task, instance, cache) are the same,
 * - and OUT is as that build left it: every folder of its layers and every file and folder of its
 *   workspace has the inode and modification time recorded (an app that wrote into its workspace
 *   while it ran gets a fresh one, as from an image).
 * The record is OUT/.rbp-reuse.json, written by a deploy's build (`rbp build` neither writes nor
 * reads it); its check is a stat per recorded path, no walk of a layer's files. `rbp deploy
 * --rebuild` builds anyway.
 *
 * Timestamps come from a clock that ticks every few milliseconds: a change in the same tick as the
 * stamp taken would not show. So an app file changed less than STAMP_SETTLE_MS before the walk is
 * not trusted (the record then never matches), and the build waits until OUT's newest stamp is that
 * old before the app it deploys can write into OUT.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppFilter } from './app-copy.ts';
import type { Order } from './order.ts';

export const REUSE_RECORD = '.rbp-reuse.json';
/** The kernel stamps modifications with a clock that ticks every few milliseconds: a change this recent may not show yet. */
const STAMP_SETTLE_MS = 25;
const RECORD_VERSION = 1;

/** What a build depends on, each part a digest; `why` names it when it differs. */
export interface BuildInputs {
  app: string;
  variables: string;
  buildpacks: string;
  platform: string;
}

const PART_CHANGED: Record<keyof BuildInputs, string> = {
  app: "the app's files",
  variables: "the app's variables",
  buildpacks: 'the buildpacks',
  platform: 'rbp, its build environment, the bindings or the build options',
};

export interface InputSources {
  appDir: string;
  /** Folders inside the app that are rbp's own (OUT, the cache), as copyApp skips them. */
  skip: string[];
  appFilter?: AppFilter;
  userEnv: Record<string, string>;
  order: Order;
  /** The environment the buildpacks get from the host and the operator, minus what only changes how logs look. */
  buildEnv: Record<string, string>;
  bindings: string[];
  options: Record<string, string | boolean | undefined>;
}

interface ReuseRecord {
  version: number;
  builtAt: string;
  salt: string;
  inputs: BuildInputs;
  /** The group that built it, id@version. */
  group: string[];
  /** OUT's paths (relative) whose stamps are checked, and the digest of those stamps. */
  paths: string[];
  stamps: string;
}

/** lstat, or undefined when the path is gone (or a file now stands where one of its folders was). */
function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

/** `ino:mtime:size:mode` of a file, '' when it is gone. */
const stamp = (st: fs.Stats | undefined) => (st ? `${st.ino}:${st.mtimeMs}:${st.size}:${st.mode}` : '');

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * Every path under `dir` with its type, mode, size and modification time, in name order; and the
 * newest modification time seen. `keep` and `skip` as copyApp applies them. Undefined when the folder
 * cannot be walked (missing, unreadable): the build that follows says what is wrong with it.
 */
function walkStamps(dir: string, skip: string[] = [], keep?: AppFilter): { lines: string[]; newest: number } | undefined {
  const lines: string[] = [];
  let newest = 0;
  const walk = (d: string, rel: string) => {
    const names = fs.readdirSync(d).sort();
    for (const name of names) {
      const p = `${d}/${name}`;
      if (skip.includes(p)) continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(p);
      if (keep && !keep(r, st.isDirectory())) continue;
      if (st.mtimeMs > newest) newest = st.mtimeMs;
      const kind = st.isSymbolicLink() ? `l\0${fs.readlinkSync(p)}` : st.isDirectory() ? 'd' : `f\0${st.size}`;
      lines.push(`${r}\0${kind}\0${st.mode}\0${st.mtimeMs}\n`);
      if (st.isDirectory()) walk(p, r);
    }
  };
  try {
    // readdir follows a link to a folder (a binding given as one): its files are what counts.
    walk(dir, '');
  } catch {
    return undefined;
  }
  return { lines, newest };
}

function buildpackDirs(order: Order, into = new Set<string>()): Set<string> {
  for (const group of order)
    for (const entry of group) {
      into.add(entry.ref.dir);
      if (entry.order) buildpackDirs(entry.order, into);
    }
  return into;
}

/** rbp's own program: its version, the Node.js it runs on, and the file it was loaded from. */
function rbpProgram(): string {
  const self = import.meta.filename;
  return `${process.execPath}\0${process.version}\0${self}\0${stamp(lstat(self))}`;
}

/**
 * The inputs of a build, taken before it runs; the app's digest matches nothing when one of its
 * files changed too recently to be trusted (see above).
 */
function takeInputs(s: InputSources, salt: string): BuildInputs {
  const skip = s.skip.map((p) => path.resolve(p));
  const app = walkStamps(path.resolve(s.appDir), skip, s.appFilter);
  const bps = [...buildpackDirs(s.order)].map((d) => `${d}\n${walkStamps(d)?.lines.join('') ?? unmatched()}`);
  const bindings = s.bindings.map((b) => `${path.resolve(b)}\n${walkStamps(path.resolve(b))?.lines.join('') ?? unmatched()}`);
  const sorted = (o: Record<string, unknown>) => JSON.stringify(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    app: !app || app.newest > Date.now() - STAMP_SETTLE_MS ? unmatched() : sha256(app.lines.join('')),
    variables: sha256(`${salt}\0${sorted(s.userEnv)}`),
    buildpacks: sha256(bps.join('\0')),
    platform: sha256([rbpProgram(), sorted(s.buildEnv), bindings.join('\0'), sorted(s.options)].join('\0')),
  };
}

/** A digest no record holds: the inputs are not known, so nothing is reused. */
const unmatched = () => `unknown:${crypto.randomUUID()}`;

/**
 * The paths of a built OUT whose stamps prove it unchanged: every folder of its layers (a file
 * added, removed or renamed changes its folder's time) and every path of its workspace (a file
 * rewritten in place changes its own). OUT's own entries are not among them: rbp writes there.
 */
function outPaths(root: string): string[] {
  const paths: string[] = [];
  const walk = (rel: string, filesToo: boolean) => {
    paths.push(rel);
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r, filesToo);
      else if (filesToo) paths.push(r);
    }
  };
  if (fs.existsSync(path.join(root, 'layers'))) walk('layers', false);
  if (fs.existsSync(path.join(root, 'workspace'))) walk('workspace', true);
  return paths;
}

function stampsDigest(root: string, paths: string[]): { digest: string; newest: number } {
  let newest = 0;
  let text = '';
  for (const p of paths) {
    const st = lstat(`${root}/${p}`);
    if (st && st.mtimeMs > newest) newest = st.mtimeMs;
    text += `${p}\0${stamp(st)}\n`;
  }
  return { digest: sha256(text), newest };
}

/**
 * Records, in the build's new generation `root`, what it was built from and how it stands. Returns
 * when the record can be trusted to catch a change (Date.now() ms): the caller waits until then
 * before anything may write into OUT.
 */
export function writeReuseRecord(root: string, taken: TakenInputs, group: string[]): number {
  const paths = outPaths(root);
  const { digest, newest } = stampsDigest(root, paths);
  const record: ReuseRecord = {
    version: RECORD_VERSION,
    builtAt: new Date().toISOString(),
    salt: taken.salt,
    inputs: taken.inputs,
    group,
    paths,
    stamps: digest,
  };
  fs.writeFileSync(path.join(root, REUSE_RECORD), JSON.stringify(record));
  // A time ahead of the clock (a copied file keeps its source's) is left behind by any change: no wait for it.
  return Math.min(newest, Date.now()) + STAMP_SETTLE_MS;
}

/** The inputs taken before a build, with the salt their variables' digest used. */
export interface TakenInputs {
  inputs: BuildInputs;
  salt: string;
}

/**
 * The build OUT holds stands for this one (`builtAt`, `group`); or it does not, and why (none when
 * OUT holds no record: a first build, or one `rbp build` made), with the inputs taken for the build
 * that follows.
 */
export type Reuse = ({ reuse: true; builtAt: string; group: string[] } | { reuse: false; why?: string }) & { taken: TakenInputs };

function readRecord(out: string): ReuseRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(out, REUSE_RECORD), 'utf8')) as Partial<ReuseRecord>;
    if (
      r.version !== RECORD_VERSION ||
      typeof r.salt !== 'string' ||
      typeof r.builtAt !== 'string' ||
      !Array.isArray(r.paths) ||
      !Array.isArray(r.group) ||
      !r.inputs
    )
      return undefined;
    return r as ReuseRecord;
  } catch {
    return undefined;
  }
}

/** Whether the build in OUT can stand for a build from `sources` (see Reuse); without `compare`, only the inputs taken. */
export function reusableBuild(out: string, sources: InputSources, compare = true): Reuse {
  const record = readRecord(out);
  // A record's salt is kept for the next one: it only keeps the digest of the variables from being looked up.
  const salt = record?.salt ?? crypto.randomBytes(16).toString('hex');
  const taken = { inputs: takeInputs(sources, salt), salt };
  // --rebuild: only the inputs, for the record the build writes.
  if (!record || !compare) return { reuse: false, taken };
  // An in-place build was stopped half-way: OUT is not the build recorded (the next build puts it back).
  if (fs.existsSync(`${out}.rbp-previous`)) return { reuse: false, why: 'an earlier build was interrupted', taken };
  const changed = (Object.keys(PART_CHANGED) as (keyof BuildInputs)[]).filter((k) => taken.inputs[k] !== record.inputs[k]);
  if (changed.length) return { reuse: false, why: `${changed.map((k) => PART_CHANGED[k]).join(', ')} changed since the last build`, taken };
  if (stampsDigest(out, record.paths).digest !== record.stamps)
    return { reuse: false, why: 'OUT changed after its build (the app wrote into its workspace, or a file of OUT was edited)', taken };
  return { reuse: true, builtAt: record.builtAt, group: record.group, taken };
}
