/**
 * The layer cache: the lifecycle's cache, kept as folders. For each `cache = true` layer of a build,
 *   CACHE/<escaped id>/<layer>.toml          its types and metadata
 *   CACHE/<escaped id>/<layer>/              its files (for a launch layer: hard links to OUT's)
 *   CACHE/<escaped id>/<layer>.sbom.<ext>    its SBOM files
 * and `CACHE/.rbp-cache`, which marks the folder as rbp's and records, for each layer the last build
 * left there whole, a digest of its metadata. A layer is trusted by that record, as the lifecycle
 * trusts its cache by what its exporter recorded: restore takes a folder only when the record names
 * its layer with the metadata its TOML holds, and the folder is there. Every folder is put in place
 * by one rename and the record is written last, so a layer a killed or failed build took away or was
 * writing is never taken for a whole one; and the cache may be copied (cp -a, a CI system's cache)
 * and still be used. Whether a layer is reused is the buildpack's decision, by its metadata: a
 * buildpack that keeps a layer's metadata keeps its files as they are.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { stableJson, type Metadata } from '../cnb/layers.ts';
import { tomlString } from '../cnb/toml.ts';
import { isDir, linkTree, moveTree, rmrf } from './fsops.ts';
import { CACHE_MARKER } from './out-paths.ts';

const HEADER = '# This folder is an rbp layer cache: rbp build replaces it.\n';

/** `<escaped id>/<layer>` → the digest of its metadata. */
export type CacheRecord = Map<string, string>;

/** The record export wrote; empty for a new cache, an older rbp's or a damaged one. */
export function readCacheRecord(cacheDir: string): CacheRecord {
  try {
    const t = parse(fs.readFileSync(path.join(cacheDir, CACHE_MARKER), 'utf8')) as { layers?: Record<string, unknown> };
    return new Map(Object.entries(t.layers ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return new Map();
  }
}

/** Writes the record through a rename (a reader sees the old one or the new one), last, and drops every layer it does not name. */
export function writeCacheRecord(cacheDir: string, record: CacheRecord): void {
  fs.mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, CACHE_MARKER);
  fs.writeFileSync(`${file}.tmp`, HEADER + tomlString({ layers: Object.fromEntries([...record].sort()) }));
  fs.renameSync(`${file}.tmp`, file);
  for (const esc of fs.readdirSync(cacheDir)) {
    const dir = path.join(cacheDir, esc);
    if (!isDir(dir)) continue;
    for (const f of fs.readdirSync(dir)) {
      const layer = f.replace(/\.(toml|sbom\.[^/]+)$/, '');
      if (!record.has(`${esc}/${layer}`)) rmrf(path.join(dir, f));
    }
    if (fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
  }
}

/** What the record keeps of a layer: its metadata's digest. */
export function recordOf(metadata: Metadata): string {
  return crypto.createHash('sha256').update(stableJson(metadata)).digest('hex').slice(0, 32);
}

/** Whether the cache holds `key` whole, with this metadata, as the last build left it. */
export function isRecorded(cacheDir: string, record: CacheRecord, key: string, metadata: Metadata): boolean {
  return record.get(key) === recordOf(metadata) && isDir(path.join(cacheDir, key));
}

/** Copies a layer's SBOM files (`<layer>.sbom.<ext>`) from one layers folder to another (the cache, or back). */
export function copySboms(fromDir: string, toDir: string, layer: string): void {
  const names = isDir(fromDir) ? fs.readdirSync(fromDir) : [];
  for (const f of names) if (f.startsWith(`${layer}.sbom.`)) fs.copyFileSync(path.join(fromDir, f), path.join(toDir, f));
}

/**
 * Puts `src` into the cache as the folder of `key`, moved (`move`) or as a tree of hard links (a
 * launch layer, whose folder OUT keeps). A tree of links is made aside and renamed into place: a
 * build killed meanwhile leaves no half folder under the name.
 */
export function putInCache(cacheDir: string, key: string, src: string, how: 'move' | 'link'): void {
  const dst = path.join(cacheDir, key);
  rmrf(dst);
  if (how === 'move') moveTree(src, dst);
  else {
    const aside = `${dst}.rbp-new`;
    rmrf(aside);
    fs.mkdirSync(path.dirname(aside), { recursive: true });
    linkTree(src, aside);
    fs.renameSync(aside, dst);
  }
}
