/**
 * Layers (cnb-spec.md §4) as typed values. A layer's metadata says why it can be reused; reuse is
 * decided by comparing the metadata the lifecycle restored with the metadata this build wants, never
 * by looking at files on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readTomlIfExists, writeToml } from './toml.ts';
import { LayerEnv } from './env.ts';
import { isDir } from '../fsx.ts';

export interface LayerTypes {
  launch?: boolean;
  build?: boolean;
  cache?: boolean;
}

export type Metadata = Record<string, unknown>;

const RESERVED = new Set(['build', 'launch', 'store']);
const NAME_RE = /^[A-Za-z0-9_-]+$/;

export function checkLayerName(name: string): void {
  if (RESERVED.has(name) || !NAME_RE.test(name)) {
    throw new Error(`invalid layer name ${JSON.stringify(name)}: use [A-Za-z0-9_-], not build, launch or store`);
  }
}

/** What the lifecycle restored for a layer before this build: metadata (never types) and maybe contents. */
export interface RestoredLayer {
  metadata: Metadata | undefined;
  hasContents: boolean;
}

export type LayerState = 'created' | 'reused';

export interface Layer<M extends Metadata = Metadata> {
  name: string;
  path: string;
  types: LayerTypes;
  metadata: M;
  state: LayerState;
  /** Why it was reused or created, for the log: "runtime version changed (20.1.0 → 22.3.0)". */
  reason: string;
  /** Rewrites the layer's env dirs. */
  writeEnv(env: LayerEnv): void;
}

/** JSON with every object's keys in order: the same values give the same text. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Metadata)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Whether two layers' metadata are the same values (key order and object kinds aside). */
export function sameMetadata(a: Metadata | undefined, b: Metadata | undefined): boolean {
  return a !== undefined && b !== undefined && stableJson(a) === stableJson(b);
}

/** The keys whose values differ, as `key changed (old → new)` phrases. */
export function metadataChanges(before: Metadata | undefined, after: Metadata): string[] {
  if (!before) return [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const show = (v: unknown) => (v === undefined ? 'unset' : typeof v === 'string' ? v : stableJson(v));
  return keys.filter((k) => stableJson(before[k]) !== stableJson(after[k])).map((k) => `${k} changed (${show(before[k])} → ${show(after[k])})`);
}

export class Layers {
  constructor(readonly dir: string) {}

  pathOf(name: string): string {
    return path.join(this.dir, name);
  }

  restored(name: string): RestoredLayer {
    checkLayerName(name);
    const t = readTomlIfExists<{ metadata?: Metadata }>(path.join(this.dir, `${name}.toml`));
    return { metadata: t?.metadata, hasContents: fs.existsSync(this.pathOf(name)) };
  }

  /**
   * Reuses the layer when its restored metadata equals `metadata` (and its contents are there, or it
   * is a launch-only layer the exporter can take from the previous build); otherwise empties it.
   * The `.toml` is written with the new types and metadata either way.
   */
  get<M extends Metadata>(name: string, types: LayerTypes, metadata: M): Layer<M> {
    const before = this.restored(name);
    const launchOnly = Boolean(types.launch) && !types.cache && !types.build;
    const same = before.metadata !== undefined && metadataChanges(before.metadata, metadata).length === 0;
    let state: LayerState;
    let reason: string;
    if (same && (before.hasContents || launchOnly)) {
      state = 'reused';
      reason = before.hasContents ? 'metadata unchanged' : 'metadata unchanged; contents kept from the previous build';
    } else {
      state = 'created';
      reason = before.metadata === undefined ? 'no previous layer' : same ? 'previous contents missing' : metadataChanges(before.metadata, metadata).join(', ');
      fs.rmSync(this.pathOf(name), { recursive: true, force: true });
      fs.mkdirSync(this.pathOf(name), { recursive: true });
    }
    this.writeToml(name, types, metadata);
    const layerPath = this.pathOf(name);
    return {
      name,
      path: layerPath,
      types,
      metadata,
      state,
      reason,
      writeEnv: (env: LayerEnv) => {
        fs.mkdirSync(layerPath, { recursive: true });
        env.write(layerPath);
      },
    };
  }

  /** A layer rebuilt every time (no reuse). */
  fresh<M extends Metadata>(name: string, types: LayerTypes, metadata: M): Layer<M> {
    checkLayerName(name);
    fs.rmSync(this.pathOf(name), { recursive: true, force: true });
    fs.rmSync(path.join(this.dir, `${name}.toml`), { force: true });
    return this.get(name, types, metadata);
  }

  writeToml(name: string, types: LayerTypes, metadata: Metadata): void {
    writeToml(path.join(this.dir, `${name}.toml`), {
      types: { launch: Boolean(types.launch), build: Boolean(types.build), cache: Boolean(types.cache) },
      metadata,
    });
  }

  /** Removes a layer and its files: it will not be exported or cached. */
  remove(name: string): void {
    fs.rmSync(this.pathOf(name), { recursive: true, force: true });
    for (const f of fs.readdirSync(this.dir)) if (f === `${name}.toml` || f.startsWith(`${name}.sbom.`)) fs.rmSync(path.join(this.dir, f));
  }
}

/** Parses a `<layer>.toml` as the lifecycle does: flags must be under [types]. */
export function readLayerToml(file: string): { types: Required<LayerTypes>; metadata: Metadata } | undefined {
  const t = readTomlIfExists<{ types?: LayerTypes; metadata?: Metadata } & Record<string, unknown>>(file);
  if (!t) return undefined;
  for (const k of ['launch', 'build', 'cache']) {
    if (k in t) throw new Error(`${file}: "${k}" should be in the [types] table`);
  }
  const types = t.types ?? {};
  return {
    types: { launch: types.launch === true, build: types.build === true, cache: types.cache === true },
    metadata: t.metadata ?? {},
  };
}

/** A buildpack's launch layers in a layers folder, alphabetically: folders whose .toml says launch = true. */
export function launchLayers(dir: string): string[] {
  if (!isDir(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.toml') && f !== 'store.toml')
    .map((f) => f.slice(0, -'.toml'.length))
    .sort()
    .filter((name) => isDir(path.join(dir, name)) && readLayerToml(path.join(dir, `${name}.toml`))?.types.launch)
    .map((name) => path.join(dir, name));
}
