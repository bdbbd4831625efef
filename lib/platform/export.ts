/**
 * The export phase (cnb-spec.md §6, the lifecycle's exporter), into OUT instead of an image: launch
 * layers stay (a launch-only layer the buildpack did not write again is the previous build's), layers
 * that are not launch layers go, `cache = true` layers go into the cache (layer-cache.ts); then
 * metadata.toml, and rbp.toml last, since rbp.toml marks OUT complete.
 *
 * The cache keeps its own folder of each cached layer, as the lifecycle's cache keeps its own copy: a
 * cache-only layer is moved there; a launch layer, which OUT keeps, gets a tree of hard links, made
 * when the layer is new or changed. A launch layer the build restored from the cache and left as it
 * was (the same folder, the same metadata) needs none: once OUT stands, the previous build's folder of
 * it, whose files are the same, becomes the cache's (`adopt`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { aggregateSboms } from '../cnb/sbom-aggregate.ts';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { readLayerToml, sameMetadata } from '../cnb/layers.ts';
import { writeToml } from '../cnb/toml.ts';
import type { Logger } from '../log.ts';
import { writeFailureCode } from '../disk.ts';
import type { Built } from './build-phase.ts';
import { checkpoint } from './checkpoint.ts';
import { identity, isDir, rmrf } from './fsops.ts';
import { copySboms, putInCache, recordOf, writeCacheRecord, type CacheRecord } from './layer-cache.ts';
import { writeLaunchMetadata, writeRbpInfo, type LaunchMetadata } from './metadata.ts';
import type { OutTransaction } from './out-transaction.ts';
import { layerNames, readLayerSafely, type Restored } from './restore.ts';

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
  built: Built;
  restored: Restored;
  tx: OutTransaction;
  appDir: string;
  task?: string;
  instance: string;
  /** Phase timings so far; export's own is added up to the moment rbp.toml is written. */
  phases: Record<string, number>;
  exportStart: number;
  log: Logger;
}

export interface Exported {
  layers: ExportedLayer[];
  metadata: LaunchMetadata;
  /** The cache's record so far, and the launch layers whose cache folder is the previous build's: for `commitCache`. */
  record: CacheRecord;
  adopt: string[];
}

/** One layer of the build: what state it is in, and what the cache gets of it. */
function exportLayer(o: ExportOptions, x: Exported, esc: string, name: string, bp: BuildpackRef): void {
  const { tx } = o;
  const dir = path.join(tx.out, 'layers', esc);
  const key = `${esc}/${name}`;
  const t = readLayerToml(path.join(dir, `${name}.toml`));
  if (!t) return;
  const layerDir = path.join(dir, name);
  const restored = o.restored.get(key);
  // Kept from the cache when it is still the folder restore placed; a buildpack that rebuilds a layer removes and recreates it.
  let state: LayerState = restored?.folder !== undefined && restored.folder === identity(layerDir) ? 'restored' : 'created';
  if (t.types.launch && !isDir(layerDir)) {
    if (t.types.cache) throw new PhaseFailure(EXIT.exportFailed, `layer ${key} has cache = true but has no contents`);
    const prevLayer = tx.previous ? path.join(tx.previous, 'layers', esc, name) : undefined;
    if (!prevLayer || !isDir(prevLayer)) throw new PhaseFailure(EXIT.exportFailed, `cannot reuse layer ${key}: the previous build has no such layer`);
    tx.reuseFromPrevious(prevLayer, layerDir);
    state = 'reused';
  }
  if (t.types.cache && !isDir(layerDir)) o.log.warn(`layer ${key} has cache = true but no contents: not cached`);
  else if (t.types.cache) {
    const cacheBp = path.join(tx.cacheDir, esc);
    fs.mkdirSync(cacheBp, { recursive: true });
    writeToml(path.join(cacheBp, `${name}.toml`), { types: t.types, metadata: t.metadata });
    copySboms(dir, cacheBp, name);
    const prev = tx.previous ? path.join(tx.previous, 'layers', esc) : undefined;
    const unchanged =
      t.types.launch &&
      state === 'restored' &&
      sameMetadata(restored!.metadata, t.metadata) &&
      prev !== undefined &&
      isDir(path.join(prev, name)) &&
      sameMetadata(readLayerSafely(path.join(prev, `${name}.toml`)).t?.metadata, t.metadata);
    if (unchanged) x.adopt.push(key);
    else putInCache(tx.cacheDir, key, layerDir, t.types.launch ? 'link' : 'move');
    x.record.set(key, recordOf(t.metadata));
  }
  if (!t.types.launch) {
    // Not part of the app: its folder, toml and SBOM (a build SBOM for the lifecycle) go.
    rmrf(layerDir);
    for (const f of fs.readdirSync(dir)) if (f === `${name}.toml` || f.startsWith(`${name}.sbom.`)) rmrf(path.join(dir, f));
  }
  if (t.types.launch || t.types.cache) x.layers.push({ buildpack: bp.descriptor.buildpack.id, name, state, launch: t.types.launch, cache: t.types.cache });
}

export function exportPhase(o: ExportOptions): Exported {
  const { tx, built } = o;
  const layersRoot = path.join(tx.out, 'layers');
  const processes = new Map(built.processes);
  let defaultType = built.defaultType;
  if (o.task) {
    processes.set('task', { type: 'task', command: ['/bin/sh', '-c', o.task], args: [], direct: true, 'buildpack-id': 'rbp/platform' });
    defaultType = 'task';
  }
  // Before non-launch layers and build SBOMs leave OUT: the build's SBOM, as the lifecycle gathers it.
  const ids = o.group.map((g) => g.descriptor.buildpack.id);
  aggregateSboms(layersRoot, ids);
  const x: Exported = { layers: [], metadata: { buildpacks: [], processes: [] }, record: new Map(), adopt: [] };
  for (const bp of o.group) {
    const esc = escapeId(bp.descriptor.buildpack.id);
    const dir = path.join(layersRoot, esc);
    for (const name of layerNames(dir)) {
      try {
        exportLayer(o, x, esc, name, bp);
      } catch (e) {
        // A write that found no room or no rights goes up as it is: build.ts names the folder.
        if (e instanceof PhaseFailure || writeFailureCode(e)) throw e;
        throw new PhaseFailure(EXIT.exportFailed, (e as Error).message);
      }
    }
    for (const f of fs.readdirSync(dir)) {
      if (f.endsWith('.ignore') || f === 'launch.toml' || f === 'build.toml' || f.startsWith('build.sbom.')) rmrf(path.join(dir, f));
    }
  }
  x.metadata = {
    ...(defaultType ? { 'buildpack-default-process-type': defaultType } : {}),
    // api: checked present and supported before the build (verifyBuildpackApi).
    buildpacks: o.group.map((g) => ({ id: g.descriptor.buildpack.id, version: g.descriptor.buildpack.version, api: g.descriptor.api! })),
    processes: [...processes.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)), // byte order, as the lifecycle
    labels: [...built.labels.values()],
  };
  checkpoint('exporting');
  writeLaunchMetadata(tx.out, x.metadata);
  writeRbpInfo(tx.out, {
    app: o.appDir,
    instance: o.instance,
    ...(o.task ? { task: o.task } : {}),
    'built-at': new Date().toISOString(),
    'env-names': Object.keys(o.userEnv).sort(),
    layers: x.layers.map((l) => ({ buildpack: l.buildpack, name: l.name, state: l.state })),
    // Export is still running: its time is what it took up to here.
    timings: { ...o.phases, export: performance.now() - o.exportStart },
  });
  checkpoint('exported');
  return x;
}

/**
 * Once OUT stands: the previous build's folders of the launch layers left as they were become the
 * cache's, and the cache's record is written. Returns lines for the log when something could not be done.
 */
export function commitCache(cacheDir: string, previous: string | undefined, x: Exported): string[] {
  const notes: string[] = [];
  for (const key of x.adopt) {
    const from = previous ? path.join(previous, 'layers', key) : undefined;
    try {
      if (!from || !isDir(from)) throw new Error('the previous build has no such layer');
      putInCache(cacheDir, key, from, 'move');
    } catch (e) {
      x.record.delete(key);
      notes.push(`cache: ${key} is not kept (${(e as Error).message}): the next build makes it again`);
    }
  }
  try {
    writeCacheRecord(cacheDir, x.record);
  } catch (e) {
    notes.push(`could not write the cache's record in ${cacheDir}: ${(e as Error).message}`);
  }
  return notes;
}
