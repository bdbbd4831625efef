/**
 * `rbp prune`: what rbp left on this machine that nothing needs any more, with the space each
 * removal frees, removed unless --dry-run:
 * - download cache entries (lib/deps/download-cache.ts) that no layer links any more, and the
 *   litter of builds killed while filling one;
 * - for each OUT rbp built (out-registry.ts) that is gone: its cache beside it, its lock, its run
 *   marks, its record;
 * - for each OUT still there: the previous OUT an interrupted build left beside a complete one; with
 *   --caches, its cache beside it too;
 * - `rbp deploy` OUTs (rbp's own folder) whose application folder is gone.
 * Never an OUT in use: a live `rbp run`/`rbp deploy` (in-use.ts) or a build (its lock).
 *
 * Sizes are what the removal frees: blocks of files whose every hard link is removed too (a
 * download cache entry still linked by a layer frees nothing, and is kept).
 */
import fs from 'node:fs';
import path from 'node:path';
import { discard, downloadCacheRoot, readEntry, sweepLitter } from '../deps/download-cache.ts';
import { formatBytes } from '../log.ts';
import { runDirOf, usersOf } from './in-use.ts';
import { forgetOut, knownOuts, outRecordFile, type OutRecord } from './out-registry.ts';
import { lockHolder } from './out-lock.ts';
import { lockOf, previousOf } from './out-paths.ts';
import { recover } from './out-recover.ts';
import { rbpInfoPath } from './metadata.ts';
import { downloadCacheSetting, rbpCacheHome } from './rbp-dirs.ts';

export type PruneKind = 'download' | 'litter' | 'previous' | 'cache' | 'out' | 'leftover';

export interface PruneItem {
  path: string;
  kind: PruneKind;
  why: string;
  /** Bytes on disk the removal frees (0 when every file has another name elsewhere). */
  bytes: number;
}

export interface PrunePlan {
  remove: PruneItem[];
  kept: { path: string; why: string }[];
  /** OUTs whose previous build comes back first (an interrupted build left OUT incomplete). */
  recover: string[];
  freed: number;
}

export interface PruneOptions {
  env?: NodeJS.ProcessEnv;
  /** Also the layer caches beside OUTs not in use (the next build of each is slower). */
  caches?: boolean;
}

const exists = (p: string) => fs.existsSync(p);

/** OUTs rbp knows: its records, and the deploy folders (also those of an rbp that kept no record). */
function outsOf(env: NodeJS.ProcessEnv): OutRecord[] {
  const byPath = new Map(knownOuts(env).map((r) => [path.resolve(r.out), r]));
  const deployRoot = path.join(rbpCacheHome(env), 'deploy');
  let names: string[] = [];
  try {
    names = fs.readdirSync(deployRoot).filter((n) => !/\.rbp-[\w-]+$/.test(n));
  } catch {
    // no deploy yet
  }
  for (const n of names) {
    const out = path.join(deployRoot, n);
    if (!byPath.has(out)) byPath.set(out, { out, app: '', cache: `${out}.rbp-cache`, cacheBeside: true, built: '' });
  }
  return [...byPath.values()];
}

function planOut(r: OutRecord, o: PruneOptions, env: NodeJS.ProcessEnv, plan: Omit<PrunePlan, 'freed'>): void {
  const out = path.resolve(r.out);
  const users = usersOf(out);
  const builder = lockHolder(out);
  const busy =
    builder !== undefined
      ? `a build runs into it (process ${builder})`
      : users.length
        ? `in use by rbp run or deploy (process ${users.join(', ')})`
        : undefined;
  if (busy) return void plan.kept.push({ path: out, why: busy });
  const add = (p: string, kind: PruneKind, why: string) => {
    if (exists(p)) plan.remove.push({ path: p, kind, why, bytes: 0 });
  };
  const leftovers = () => {
    if (r.cacheBeside) add(r.cache, 'cache', `the layer cache of ${out}`);
    add(lockOf(out), 'leftover', `the lock of a build of ${out} that is gone`);
    add(runDirOf(out), 'leftover', `the run marks of ${out}`);
    add(outRecordFile(out, env), 'leftover', `rbp's record of ${out}`);
  };
  const deployRoot = path.join(rbpCacheHome(env), 'deploy');
  // A build interrupted between setting OUT aside and making the new one: the previous comes back.
  if (!exists(out)) {
    if (exists(previousOf(out))) plan.recover.push(out);
    else leftovers();
    return;
  }
  if (path.dirname(out) === deployRoot && r.app && !exists(r.app)) {
    add(out, 'out', `rbp deploy's build of ${r.app}, which is gone`);
    add(previousOf(out), 'previous', `the previous build of ${out}`);
    leftovers();
    return;
  }
  if (exists(previousOf(out))) {
    if (exists(rbpInfoPath(out))) add(previousOf(out), 'previous', `left by an interrupted build; ${out} is complete`);
    else plan.recover.push(out);
  }
  if (o.caches && r.cacheBeside) add(r.cache, 'cache', `the layer cache of ${out} (--caches; its next build is slower)`);
}

/** Whether any file of the tree has a name outside it (a layer's hard link). */
function linkedElsewhere(dir: string): boolean {
  const linked = (d: string): boolean =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .some((e) => (e.isDirectory() ? linked(path.join(d, e.name)) : e.isFile() && fs.lstatSync(path.join(d, e.name)).nlink > 1));
  try {
    return linked(dir);
  } catch {
    return false;
  }
}

/** The download cache's folder, unless it is off. */
function downloadRoot(env: NodeJS.ProcessEnv): string | undefined {
  const setting = downloadCacheSetting(env);
  return setting === 'off' ? undefined : downloadCacheRoot({ RBP_DOWNLOAD_CACHE: setting });
}

function planDownloads(env: NodeJS.ProcessEnv, plan: Omit<PrunePlan, 'freed'>): void {
  const root = downloadRoot(env);
  if (!root || !exists(root)) return;
  for (const id of fs.readdirSync(root).filter((n) => !n.startsWith('.'))) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, id));
    } catch {
      continue;
    }
    for (const n of names) {
      const dir = path.join(root, id, n);
      const rec = readEntry(dir);
      if (!rec) {
        plan.remove.push({ path: dir, kind: 'download', why: 'not a complete download cache entry', bytes: 0 });
        continue;
      }
      if (linkedElsewhere(path.join(dir, 'tree'))) plan.kept.push({ path: dir, why: `${rec.id} ${rec.version}: used by layers` });
      else plan.remove.push({ path: dir, kind: 'download', why: `${rec.id} ${rec.version}: no layer uses it`, bytes: 0 });
    }
  }
  for (const l of sweepLitter(root, 0))
    plan.remove.push({ path: l.path, kind: 'litter', why: 'left by a build stopped while it filled the download cache', bytes: 0 });
  // Locks of fills whose build is gone (a live holder refreshes its lock every second).
  try {
    for (const n of fs.readdirSync(path.join(root, '.locks'))) {
      const p = path.join(root, '.locks', n);
      if (Date.now() - fs.statSync(p).mtimeMs > 60_000)
        plan.remove.push({ path: p, kind: 'litter', why: 'the lock of a download cache fill whose build is gone', bytes: 0 });
    }
  } catch {
    // no locks
  }
}

/**
 * Blocks each removal frees: a file counts where all its hard links are removed too, with the
 * first item that holds one of them.
 */
function measure(items: PruneItem[]): void {
  const inodes = new Map<string, { seen: number; nlink: number; blocks: number; owner: number }>();
  const dirs = new Array<number>(items.length).fill(0);
  items.forEach((item, i) => {
    const walk = (p: string) => {
      let st: fs.Stats;
      try {
        st = fs.lstatSync(p);
      } catch {
        return;
      }
      if (st.isDirectory()) {
        dirs[i]! += st.blocks * 512;
        let names: string[] = [];
        try {
          names = fs.readdirSync(p);
        } catch {
          // unreadable: its size is unknown
        }
        for (const n of names) walk(path.join(p, n));
        return;
      }
      const key = `${st.dev}:${st.ino}`;
      const seen = inodes.get(key);
      if (seen) seen.seen++;
      else inodes.set(key, { seen: 1, nlink: st.nlink, blocks: st.blocks * 512, owner: i });
    };
    walk(item.path);
  });
  items.forEach((item, i) => (item.bytes = dirs[i]!));
  for (const n of inodes.values()) if (n.seen >= n.nlink) items[n.owner]!.bytes += n.blocks;
}

export function planPrune(o: PruneOptions = {}): PrunePlan {
  const env = o.env ?? process.env;
  const plan: Omit<PrunePlan, 'freed'> = { remove: [], kept: [], recover: [] };
  for (const r of outsOf(env)) planOut(r, o, env, plan);
  planDownloads(env, plan);
  measure(plan.remove);
  return { ...plan, freed: plan.remove.reduce((a, i) => a + i.bytes, 0) };
}

/** Removes what the plan lists (what is gone meanwhile is skipped); returns what failed. */
export function applyPrune(plan: PrunePlan, env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [];
  const root = downloadRoot(env);
  for (const out of plan.recover) recover(out);
  for (const item of plan.remove) {
    try {
      // A download entry leaves in one rename: a build reading it sees it whole or not at all.
      if (item.kind === 'download' && root) discard(root, item.path);
      else fs.rmSync(item.path, { recursive: true, force: true });
      if (item.kind === 'out') forgetOut(item.path, env);
    } catch (e) {
      problems.push(`${item.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  return problems;
}

export const describeItem = (i: PruneItem) => `${i.path} (${formatBytes(i.bytes)}): ${i.why}`;
