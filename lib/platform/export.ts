/**
 * The export phase (cnb-spec.md §6, the lifecycle's exporter), into OUT instead of an image: launch
 * layers stay (a launch-only layer the buildpack did not write again is the previous OUT's),
 * cache=true layers go to the new cache with a record of their files, other layers go; then
 * metadata.toml, and rbp.toml last, since rbp.toml marks OUT complete.
 */
import { aggregateSboms } from '../cnb/sbom-aggregate.ts';
import fs from 'node:fs';
import path from 'node:path';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { readLayerToml } from '../cnb/layers.ts';
import { writeToml } from '../cnb/toml.ts';
import type { Logger } from '../log.ts';
import type { Built } from './build-phase.ts';
import {
  carryListing,
  foldersDigest,
  IN_OUT,
  movedStamps,
  sameStamps,
  scanTree,
  STAMP_SETTLE_MS,
  takeStamps,
  untilRecord,
  writeCacheRecord,
  writeListing,
} from '../cache-check.ts';
import { identity, isDir, moveTree, rmrf } from './fsops.ts';
import { checkpoint } from './checkpoint.ts';
import { writeLaunchMetadata, writeRbpInfo, type LaunchMetadata } from './metadata.ts';
import { CACHE_MARKER, type OutTransaction } from './out-transaction.ts';
import { CACHE_SBOM_DIR, layerNames, type KeptLayer, type MovedLayer } from './restore.ts';

/** Written and removed in the new cache by export, for the file system's time (UNTIL). */
const UNTIL_STAMP = '.rbp-until';

/** created: built in this build; restored: kept from the cache; reused: kept from the previous build's launch layer. */
export type LayerState = 'created' | 'reused' | 'restored';

/** A layer the build exported (launch) or cached, with how it came to be. */
export interface ExportedLayer {
  buildpack: string;
  name: string;
  state: LayerState;
  launch: boolean;
  cache: boolean;
}

export interface ExportOptions {
  /** The app's variables of this build: their names (never values) go into rbp.toml. */
  userEnv: Record<string, string>;
  group: BuildpackRef[];
  layersRoot: string;
  built: Built;
  restoredIds: Map<string, string | undefined>;
  /** Launch+cache layers restore placed, with the digest it checked and their folders' stamps. */
  kept?: Map<string, KeptLayer>;
  /** Cache-only layers restore moved in, with its walk of each and their folders' stamps. */
  moved?: Map<string, MovedLayer>;
  tx: OutTransaction;
  appDir: string;
  task?: string;
  instance: string;
  /** Phase timings so far; export's own is added up to the moment rbp.toml is written. */
  phases: Record<string, number>;
  exportStart: number;
  log: Logger;
}

export function exportPhase(o: ExportOptions): { layers: ExportedLayer[]; metadata: LaunchMetadata; settleUntil: number } {
  const { tx, built } = o;
  const layers: ExportedLayer[] = [];
  const processes = new Map(built.processes);
  let defaultType = built.defaultType;
  if (o.task) {
    processes.set('task', { type: 'task', command: ['/bin/sh', '-c', o.task], args: [], direct: true, 'buildpack-id': 'rbp/platform' });
    defaultType = 'task';
  }
  const newCache = tx.startNewCache();
  // Before non-launch layers and build SBOMs leave OUT: the build's SBOM, as the lifecycle gathers it.
  aggregateSboms(
    o.layersRoot,
    o.group.map((g) => g.descriptor.buildpack.id),
    path.join(newCache, CACHE_SBOM_DIR),
  );
  const trees = new Map<string, string>();
  const folders = new Map<string, string>();
  // Cache-only layers moved on as the build left them (their record is made below).
  const asBuilt: { key: string; digest: string }[] = [];
  // When a change to a folder whose listing was just written would show in its stamps (cache-check.ts).
  let settleUntil = 0;
  for (const bp of o.group) {
    const esc = escapeId(bp.descriptor.buildpack.id);
    const dir = path.join(o.layersRoot, esc);
    for (const name of layerNames(dir)) {
      let t;
      try {
        t = readLayerToml(path.join(dir, `${name}.toml`))!;
      } catch (e) {
        throw new PhaseFailure(EXIT.exportFailed, (e as Error).message);
      }
      const layerDir = path.join(dir, name);
      const key = `${esc}/${name}`;
      // Kept from the cache when the restored folder is still the same folder; a buildpack that
      // rebuilds a layer removes and recreates it.
      let state: LayerState = o.restoredIds.has(key) && o.restoredIds.get(key) === identity(layerDir) ? 'restored' : 'created';
      if (t.types.launch && !isDir(layerDir)) {
        if (t.types.cache) throw new PhaseFailure(EXIT.exportFailed, `layer ${key} has cache = true but has no contents`);
        const prevLayer = tx.previous ? path.join(tx.previous, 'layers', esc, name) : undefined;
        if (!prevLayer || !isDir(prevLayer)) throw new PhaseFailure(EXIT.exportFailed, `cannot reuse layer ${key}: the previous build has no such layer`);
        tx.reuseFromPrevious(prevLayer, layerDir);
        state = 'reused';
      }
      if (t.types.cache) {
        if (isDir(layerDir)) {
          const dst = path.join(newCache, esc, name);
          fs.mkdirSync(path.dirname(dst), { recursive: true });
          writeToml(path.join(newCache, esc, `${name}.toml`), { types: t.types, metadata: t.metadata });
          // A launch layer restore placed and nobody touched since (same folder, same folder stamps)
          // still has the digest restore checked: no second walk of its files. (Its files are the
          // previous OUT's too, so no buildpack may rewrite them in place.)
          const kept = state === 'restored' && t.types.launch ? o.kept?.get(key) : undefined;
          const same = kept && sameStamps(layerDir, kept.stamps) ? kept : undefined;
          if (t.types.launch && !tx.sharedCache) {
            // Unchanged: the previous OUT's folder becomes the spare. Made or changed: one walk both
            // records its files and links the spare the next restore moves in.
            // Each of the two folders that take turns as the spare has a listing (cache-check.ts).
            if (same) {
              tx.keepAsSpare(key);
              trees.set(key, `${IN_OUT}${same.digest}`);
              // This OUT's folder, as restore checked it, and the previous OUT's, the next spare
              // (its listing written by the build before).
              if (same.listed) carryListing(tx.cacheDir, newCache, key, layerDir);
              else if (same.text !== undefined) writeListing(newCache, key, layerDir, { digest: same.digest, text: same.text }, same.stamps);
              if (tx.previous) carryListing(tx.cacheDir, newCache, key, path.join(tx.previous, 'layers', esc, name));
            } else {
              const spare = tx.newSpare(key);
              const scan = scanTree(layerDir, spare, true);
              trees.set(key, `${IN_OUT}${scan.digest}`);
              // Listings of both folders, stamped now (a lstat per folder): the spare the next
              // build checks, and this OUT's folder, the spare of the build after it. Both were
              // just made: rbp ends no sooner than a clock tick after (settleUntil).
              writeListing(newCache, key, spare, scan, takeStamps(spare, scan.dirs));
              writeListing(newCache, key, layerDir, scan, takeStamps(layerDir, scan.dirs));
              settleUntil = Math.max(settleUntil, Date.now() + STAMP_SETTLE_MS);
            }
          } else if (t.types.launch) {
            // An explicit --cache keeps its own names for the files: the folder this build linked
            // from moves on whole when the layer is unchanged, else a new tree of links (one walk).
            // Either way the folders' stamps are recorded, for the next restore (readCacheRecord).
            if (same?.source && isDir(same.source)) {
              tx.carryCached(same.source, dst);
              trees.set(key, same.digest);
              folders.set(key, foldersDigest(dst, same.stamps.keys()));
              tx.keepAsSpare(key);
            } else {
              const scan = scanTree(layerDir, dst);
              trees.set(key, scan.digest);
              folders.set(key, foldersDigest(dst, scan.dirs));
            }
          } else {
            // A cache-only layer restore checked and moved in: moved on as the build left it, not
            // walked; its record says that what differs from restore's check was changed no later
            // than the end of this export (UNTIL, written below), and its listing is restore's
            // (carried when restore used one as it was). The next restore finds it by that listing
            // when the build left it alone, else walks it and takes what changed before that time.
            // A layer the build made anew is walked: its digest and listing are this walk's (rbp
            // ends no sooner than a clock tick after the folders' last change).
            const moved = state === 'restored' ? o.moved?.get(key) : undefined;
            moveTree(layerDir, dst);
            if (moved) {
              // The listing holds restore's stamps, the root's too: any name the build added or
              // removed, at the top as below, moves one, and sends the next restore to its walk.
              if (moved.scan.listed) carryListing(tx.cacheDir, newCache, key, dst);
              else writeListing(newCache, key, dst, moved.scan, moved.stamps);
              asBuilt.push({ key, digest: moved.scan.digest });
            } else {
              const scan = scanTree(dst, undefined, true);
              trees.set(key, scan.digest);
              const { stamps, settleMs } = movedStamps(dst, scan);
              writeListing(newCache, key, dst, scan, stamps);
              settleUntil = Math.max(settleUntil, Date.now() + settleMs);
            }
          }
        } else o.log.warn(`layer ${key} has cache = true but no contents: not cached`);
      }
      if (!t.types.launch) {
        // Not part of the app: its folder, toml and SBOM (a build SBOM for the lifecycle) go.
        rmrf(layerDir);
        for (const f of fs.readdirSync(dir)) if (f === `${name}.toml` || f.startsWith(`${name}.sbom.`)) rmrf(path.join(dir, f));
      }
      if (t.types.launch || t.types.cache) layers.push({ buildpack: bp.descriptor.buildpack.id, name, state, launch: t.types.launch, cache: t.types.cache });
    }
    for (const f of fs.readdirSync(dir)) {
      if (f.endsWith('.ignore') || f === 'launch.toml' || f === 'build.toml' || f.startsWith('build.sbom.')) rmrf(path.join(dir, f));
    }
  }
  if (asBuilt.length) {
    // The file system's own time now (a file written and read back), after the build and every
    // move of export: the bound of the build's changes; a later one is damage. rbp ends no sooner
    // than a clock tick after it, so that none made after it can share its time.
    const now = path.join(newCache, UNTIL_STAMP);
    fs.writeFileSync(now, '');
    const time = fs.lstatSync(now).mtimeMs;
    fs.rmSync(now);
    for (const l of asBuilt) trees.set(l.key, untilRecord(time, l.digest));
    settleUntil = Math.max(settleUntil, Date.now() + STAMP_SETTLE_MS);
  }
  writeCacheRecord(path.join(newCache, CACHE_MARKER), { trees, folders });
  const metadata: LaunchMetadata = {
    ...(defaultType ? { 'buildpack-default-process-type': defaultType } : {}),
    // api: checked present and supported before the build (verifyBuildpackApi).
    buildpacks: o.group.map((g) => ({ id: g.descriptor.buildpack.id, version: g.descriptor.buildpack.version, api: g.descriptor.api! })),
    processes: [...processes.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)), // byte order, as the lifecycle
    labels: [...built.labels.values()],
  };
  checkpoint('exporting');
  writeLaunchMetadata(tx.root, metadata);
  checkpoint('exported-metadata');
  writeRbpInfo(tx.root, {
    app: o.appDir,
    instance: o.instance,
    ...(o.task ? { task: o.task } : {}),
    'built-at': new Date().toISOString(),
    'env-names': Object.keys(o.userEnv).sort(),
    layers: layers.map((l) => ({ buildpack: l.buildpack, name: l.name, state: l.state })),
    // Export is still running: its time is what it took up to here.
    timings: { ...o.phases, export: performance.now() - o.exportStart },
  });
  checkpoint('exported');
  return { layers, metadata, settleUntil };
}
