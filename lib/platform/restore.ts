/**
 * The restore phase (cnb-spec.md §4, the lifecycle's restorer): for each buildpack of the group,
 * `cache = true` layers come back from the cache with their files (moved in: one rename each), and
 * launch-only layers of the previous build with their metadata; `[types]` is never restored, and
 * layer SBOMs come back from the cache, then from the previous build's launch SBOM. A cache entry that
 * is not what the last build recorded (layer-cache.ts), or whose TOML does not parse, is dropped with
 * a warning; a launch layer the cache lost is linked from the previous build when its metadata there
 * is the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { readLayerToml, sameMetadata } from '../cnb/layers.ts';
import { writeToml } from '../cnb/toml.ts';
import type { Logger } from '../log.ts';
import { bpKey } from './order.ts';
import { identity, isDir, linkTree, moveTree } from './fsops.ts';
import { copySboms, isRecorded, readCacheRecord } from './layer-cache.ts';

const NOT_LAYERS = new Set(['launch.toml', 'build.toml', 'store.toml']);

/** Layer names in a buildpack's layers dir, from their `<layer>.toml`, alphabetically. */
export function layerNames(dir: string): string[] {
  if (!isDir(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.toml') && !NOT_LAYERS.has(f))
    .map((f) => f.slice(0, -'.toml'.length))
    .sort();
}

/** A layer toml that may be damaged: undefined (and why) instead of an exception. */
export function readLayerSafely(file: string): { t?: ReturnType<typeof readLayerToml>; problem?: string } {
  try {
    return { t: readLayerToml(file) };
  } catch (e) {
    return { problem: `its ${path.basename(file)} cannot be read (${((e as Error).message.split('\n')[0] ?? '').replace(/^.*?: /, '')})` };
  }
}

/** A layer restore put in place, as export compares it: the folder it placed and the metadata it restored. */
export interface RestoredLayer {
  folder: string | undefined;
  metadata: Record<string, unknown>;
}

/** `<escaped id>/<layer>` → what restore placed. */
export type Restored = Map<string, RestoredLayer>;

/** The layers of the previous build's launch SBOM: `<layers>/sbom/launch/<esc>/<layer>/sbom.<ext>`, as `<layer>.sbom.<ext>`. */
function restoreLaunchSboms(prevLayers: string, esc: string, dir: string): void {
  const from = path.join(prevLayers, 'sbom', 'launch', esc);
  for (const layer of isDir(from) ? fs.readdirSync(from) : []) {
    if (!isDir(path.join(from, layer))) continue;
    for (const f of fs.readdirSync(path.join(from, layer)))
      if (/^sbom\..+json$/.test(f)) fs.copyFileSync(path.join(from, layer, f), path.join(dir, `${layer}.${f}`));
  }
}

export function restore(o: {
  group: BuildpackRef[];
  layersRoot: string;
  cacheDir: string;
  previous: string | undefined;
  clearCache: boolean;
  log: Logger;
}): Restored {
  const { log } = o;
  const restored: Restored = new Map();
  if (o.clearCache) log.info('cache cleared (--clear-cache): nothing restored');
  const record = o.clearCache ? new Map<string, string>() : readCacheRecord(o.cacheDir);
  const prevLayers = o.previous ? path.join(o.previous, 'layers') : undefined;
  for (const bp of o.group) {
    const esc = escapeId(bp.descriptor.buildpack.id);
    const dir = path.join(o.layersRoot, esc);
    fs.mkdirSync(dir, { recursive: true });
    const said: string[] = [];
    const cached = path.join(o.cacheDir, esc);
    const prevDir = prevLayers ? path.join(prevLayers, esc) : undefined;
    for (const name of o.clearCache ? [] : layerNames(cached)) {
      const key = `${esc}/${name}`;
      const { t, problem } = readLayerSafely(path.join(cached, `${name}.toml`));
      if (!t?.types.cache) {
        if (problem) log.warn(`cache: ${key} is damaged and is dropped (${problem}): the buildpack builds it again`);
        continue;
      }
      const dst = path.join(dir, name);
      if (isRecorded(o.cacheDir, record, key, t.metadata)) {
        moveTree(path.join(cached, name), dst);
        said.push(name);
      } else if (
        t.types.launch &&
        prevDir &&
        isDir(path.join(prevDir, name)) &&
        sameMetadata(readLayerSafely(path.join(prevDir, `${name}.toml`)).t?.metadata, t.metadata)
      ) {
        // The cache lost it (a failed build took it), the previous build has it as it was.
        linkTree(path.join(prevDir, name), dst);
        said.push(`${name} (from the previous build)`);
      } else {
        if (fs.existsSync(path.join(cached, name)))
          log.warn(`cache: ${key} is not as the last build left it (a failed build took it, or it was changed) and is dropped: the buildpack builds it again`);
        continue;
      }
      // [types] is never restored: a buildpack must say again what the layer is.
      writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
      copySboms(cached, dir, name);
      restored.set(key, { folder: identity(dst), metadata: t.metadata });
    }
    // --clear-cache is the lifecycle's -skip-layers: no layer metadata from the previous build either.
    for (const name of prevDir && !o.clearCache ? layerNames(prevDir) : []) {
      const { t } = readLayerSafely(path.join(prevDir!, `${name}.toml`));
      // Metadata-only restore is for launch=true, cache=false layers; a build=true one must be
      // rebuilt (its contents are needed during the build), so nothing of it comes back.
      if (!t?.types.launch || t.types.cache || t.types.build || fs.existsSync(path.join(dir, `${name}.toml`))) continue;
      writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
      restored.set(`${esc}/${name}`, { folder: undefined, metadata: t.metadata });
      said.push(`${name} (metadata)`);
    }
    // store.toml comes back even with --clear-cache, as the lifecycle restores it before it looks at -skip-layers.
    if (prevDir && fs.existsSync(path.join(prevDir, 'store.toml'))) fs.copyFileSync(path.join(prevDir, 'store.toml'), path.join(dir, 'store.toml'));
    // The previous build's launch SBOM has the last word on a launch layer's SBOM (lifecycle
    // layer/sbom_restorer.go: only into a buildpack folder the restore wrote something into).
    if (prevLayers && !o.clearCache && fs.readdirSync(dir).length > 0) restoreLaunchSboms(prevLayers, esc, dir);
    log.info(`${bpKey(bp)}: ${said.length ? `restored ${said.join(', ')}` : 'nothing to restore'}`);
  }
  return restored;
}
