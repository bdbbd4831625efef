/**
 * The restore phase (cnb-spec.md §4, the lifecycle's restorer): for each buildpack of the group,
 * `cache = true` layers come back from the cache with their contents, and launch-only layers of
 * the previous OUT with their metadata; `[types]` is never restored. A damaged cache entry (TOML
 * that does not parse, a file where a folder should be, a folder that differs from what export
 * recorded) is dropped with a warning, and the buildpack builds the layer again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { readLayerToml } from '../cnb/layers.ts';
import { writeToml } from '../cnb/toml.ts';
import type { Logger } from '../log.ts';
import {
  checkListed,
  checkListedFolders,
  checkTree,
  checkUntil,
  foldersDigest,
  IN_OUT,
  listedFilesDamage,
  movedStamps,
  parseUntil,
  readCacheRecord,
  STAMP_SETTLE_MS,
  takeStamps,
  treeDamage,
  type Stamps,
  type TreeScan,
} from '../cache-check.ts';
import { bpKey } from './detect.ts';
import { identity, isDir, rmrf, sleepSync } from './fsops.ts';
import { CACHE_MARKER, type OutTransaction } from './out-transaction.ts';

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
function readCachedToml(file: string): { t?: ReturnType<typeof readLayerToml>; problem?: string } {
  try {
    return { t: readLayerToml(file) };
  } catch (e) {
    return { problem: `its ${path.basename(file)} cannot be read (${((e as Error).message.split('\n')[0] ?? '').replace(/^.*?: /, '')})` };
  }
}

/** A launch+cache layer restore checked and placed in OUT (linked, or its spare moved), as it checked it. */
export interface KeptLayer {
  /** The digest of its files, equal to the cache's record. */
  digest: string;
  /** Its folders' stamps just after it was linked: unchanged at export, the digest still holds. */
  stamps: Stamps;
  /** The text of restore's check of it, for its listing (cache-check.ts writeListing). */
  text?: string;
  /** Checked by its listing, which still holds as written: carried on to the new cache. */
  listed?: boolean;
  /** The cached folder it was linked from (an explicit --cache): export can move it on whole. */
  source?: string;
}

/** A cache-only layer restore checked and moved into the build: its walk, and its folders' stamps once moved. */
export interface MovedLayer {
  scan: TreeScan;
  stamps: Stamps;
}

/** A spare restore placed once its folders were checked by its listing; its files are checked by checkDeferred. */
export interface DeferredCheck {
  /** `<escaped id>/<layer>` */
  key: string;
  /** Where the spare is now (the layer's folder). */
  dir: string;
  /** Its listing's text. */
  text: string;
}

export interface Restored {
  /** `<escaped id>/<layer>` → identity of the folder restored from the cache. */
  ids: Map<string, string | undefined>;
  kept: Map<string, KeptLayer>;
  moved: Map<string, MovedLayer>;
  /** With deferFiles: the spares whose files are still to be checked. */
  deferred: DeferredCheck[];
}

/**
 * The files of the spares restore placed on their folders' check (deferFiles): each as its listing
 * has it. Returns each damaged layer with what differs; build.ts calls the build off for any.
 */
export function checkDeferred(deferred: DeferredCheck[]): { key: string; damage: string }[] {
  const damaged: { key: string; damage: string }[] = [];
  for (const d of deferred) {
    const damage = listedFilesDamage(d.dir, d.text);
    if (damage) damaged.push({ key: d.key, damage });
  }
  return damaged;
}

/** Where the cache keeps the SBOM files of cache = true layers: `<cache>/.rbp-sbom/<escaped id>/<layer>/sbom.<ext>`. */
export const CACHE_SBOM_DIR = '.rbp-sbom';

/**
 * Copies `<from>/<layer>/sbom.<ext>` to `<bpDir>/<layer>.sbom.<ext>` for each source in turn (a
 * later source's file replaces an earlier one's: only its file is copied); returns the layers that
 * got one.
 */
function restoreLayerSboms(bpDir: string, sources: (string | false | undefined)[]): string[] {
  const from = new Map<string, { layer: string; file: string }>();
  for (const source of sources) {
    if (!source || !isDir(source)) continue;
    for (const layer of fs.readdirSync(source).sort()) {
      if (!isDir(path.join(source, layer))) continue;
      for (const f of fs.readdirSync(path.join(source, layer)).sort()) {
        if (!/^sbom\..+json$/.test(f) || !fs.statSync(path.join(source, layer, f)).isFile()) continue;
        from.set(`${layer}.${f}`, { layer, file: path.join(source, layer, f) });
      }
    }
  }
  const got = new Set<string>();
  for (const [name, { layer, file }] of from) {
    fs.copyFileSync(file, path.join(bpDir, name));
    got.add(layer);
  }
  return [...got].sort();
}

export function restore(o: {
  group: BuildpackRef[];
  layersRoot: string;
  tx: OutTransaction;
  clearCache: boolean;
  /**
   * A spare with a listing is placed once its folders are checked (checkListedFolders); its files
   * are left to checkDeferred, which build.ts runs while the buildpacks start, and the build is
   * called off and made again if one differs. Only for a launch+cache layer's spare: no buildpack
   * rewrites a reused one's files in place (export.ts), while a cache-only layer is the build's to
   * change, in place too, so it is checked whole first.
   */
  deferFiles?: boolean;
  log: Logger;
}): Restored {
  const { tx, log } = o;
  const deferred: DeferredCheck[] = [];
  const ids = new Map<string, string | undefined>();
  const kept = new Map<string, KeptLayer>();
  const movedIn = new Map<string, MovedLayer>();
  let settleUntil = 0;
  const keep = (key: string, layerDir: string, scan: TreeScan, moved: boolean, source?: string) => {
    // A folder moved in whole keeps the stamps its check walk saw; a tree of links is stamped now
    // (its folders were just made: the full settle time).
    const { stamps, settleMs } = moved && scan.stamps ? movedStamps(layerDir, scan) : { stamps: takeStamps(layerDir, scan.dirs), settleMs: STAMP_SETTLE_MS };
    // Its listing may be carried on as it is when restore checked the layer by it and the move left its stamps.
    const listed = scan.listed === true && stamps.get('') === scan.stamps?.get('');
    kept.set(key, {
      digest: scan.digest,
      stamps,
      ...(scan.text !== undefined ? { text: scan.text } : {}),
      ...(listed ? { listed } : {}),
      ...(source ? { source } : {}),
    });
    settleUntil = Math.max(settleUntil, Date.now() + settleMs);
  };
  const cacheSrc = o.clearCache || !isDir(tx.cacheDir) ? undefined : tx.cacheDir;
  if (o.clearCache) log.info('cache cleared (--clear-cache): nothing restored');
  const prevRoot = tx.previous;
  const { trees, folders } = cacheSrc
    ? readCacheRecord(path.join(cacheSrc, CACHE_MARKER))
    : { trees: new Map<string, string>(), folders: new Map<string, string>() };
  for (const bp of o.group) {
    const esc = escapeId(bp.descriptor.buildpack.id);
    const dir = path.join(o.layersRoot, esc);
    fs.mkdirSync(dir, { recursive: true });
    const restoredHere: string[] = [];
    const fromCache = cacheSrc ? path.join(cacheSrc, esc) : undefined;
    for (const name of fromCache ? layerNames(fromCache) : []) {
      const cached = path.join(fromCache!, name);
      const drop = (why: string) => {
        log.warn(`cache: ${esc}/${name} is damaged and is dropped (${why}): the buildpack builds it again`);
        rmrf(cached);
        rmrf(`${cached}.toml`);
      };
      const { t, problem } = readCachedToml(`${cached}.toml`);
      if (problem) {
        drop(problem);
        continue;
      }
      if (!t?.types.cache) continue;
      const recorded = trees.get(`${esc}/${name}`);
      if (recorded?.startsWith(IN_OUT)) {
        // Its only copy is the previous OUT's layer, checked before it is trusted: the spare names
        // of its files when the last build kept them (moved in whole), else links made anew.
        const want = recorded.slice(IN_OUT.length);
        const dst = path.join(dir, name);
        const spare = tx.spareOf(`${esc}/${name}`);
        const early = o.deferFiles && isDir(spare) ? checkListedFolders(cacheSrc, `${esc}/${name}`, spare, want) : undefined;
        let scan = early ?? (isDir(spare) ? (checkListed(cacheSrc, `${esc}/${name}`, spare, want) ?? checkTree(spare, want, undefined, true).scan) : undefined);
        const moved = Boolean(scan);
        if (scan) {
          tx.takeSpare(spare, dst);
          // Its files are checked while the build starts (checkDeferred).
          if (early?.text !== undefined) deferred.push({ key: `${esc}/${name}`, dir: dst, text: early.text });
        } else {
          const src = prevRoot ? path.join(prevRoot, 'layers', esc, name) : undefined;
          if (!src || !fs.lstatSync(src, { throwIfNoEntry: false })) continue;
          const linked = tx.linkLayer(src, dst, want);
          if (linked.damage || !linked.scan) {
            log.warn(`cache: ${esc}/${name} in the previous OUT is damaged and is not reused (${linked.damage}): the buildpack builds it again`);
            continue;
          }
          scan = linked.scan;
        }
        writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
        ids.set(`${esc}/${name}`, identity(dst));
        keep(`${esc}/${name}`, dst, scan, moved);
        restoredHere.push(name);
        continue;
      }
      const dst = path.join(dir, name);
      if (t.types.launch && isDir(cached)) {
        // A launch layer's cached folder shares its files with the previous OUT: checked and linked
        // in one walk; or the spare the last build kept, checked, moved in whole.
        const spare = tx.spareOf(`${esc}/${name}`);
        const spared = recorded && isDir(spare) ? checkTree(spare, recorded).scan : undefined;
        let scan = spared;
        if (spared) tx.takeSpare(spare, dst);
        else {
          const linked = tx.linkLayer(cached, dst, recorded);
          if (linked.damage || !linked.scan) {
            drop(linked.damage ?? 'it cannot be read');
            continue;
          }
          scan = linked.scan;
        }
        if (!scan) continue;
        writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
        ids.set(`${esc}/${name}`, identity(dst));
        // Export moves the cached folder on whole only when it was checked too: by its folders'
        // stamps when export recorded them (its files are the spare's, just walked: readCacheRecord),
        // else by a walk of its own.
        const stampsRecorded = folders.get(`${esc}/${name}`);
        const cachedIntact =
          !spared || (stampsRecorded !== undefined ? foldersDigest(cached, spared.dirs) === stampsRecorded : !checkTree(cached, recorded).damage);
        keep(`${esc}/${name}`, dst, scan, Boolean(spared), cachedIntact ? cached : undefined);
        restoredHere.push(name);
        continue;
      }
      // Checked by its listing (no folder read) when it has one, else walked; its text is kept for export.
      // An `until:` record (export moved it on unchecked): what the build changed is taken on its
      // files' and folders' modification times (cache-check.ts UNTIL).
      let scan: TreeScan | undefined;
      if (fs.existsSync(cached)) {
        const until = parseUntil(recorded);
        const want = until?.digest ?? recorded;
        const listed = want ? checkListed(cacheSrc, `${esc}/${name}`, cached, want) : undefined;
        const r = listed
          ? { scan: listed }
          : until
            ? checkUntil(cached, until.time)
            : want
              ? checkTree(cached, want, undefined, true)
              : { damage: treeDamage(cached, undefined) };
        if (r.damage) {
          drop(r.damage);
          continue;
        }
        scan = r.scan;
      }
      // [types] is never restored: a buildpack must say again what the layer is.
      writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
      if (isDir(cached)) {
        // A cache-only folder is this build's to change, in place too (a package manager appends to
        // its index files): moved (one rename, whatever its size); export moves it back as the build
        // left it, recorded against this check with the time the build's changes end (UNTIL).
        tx.takeFromCache(cached, dst);
        ids.set(`${esc}/${name}`, identity(dst));
        if (scan?.text !== undefined) {
          const { stamps, settleMs } = movedStamps(dst, scan);
          movedIn.set(`${esc}/${name}`, { scan, stamps });
          settleUntil = Math.max(settleUntil, Date.now() + settleMs);
        }
        restoredHere.push(name);
      }
    }
    const prevDir = prevRoot ? path.join(prevRoot, 'layers', esc) : undefined;
    // --clear-cache is the lifecycle's -skip-layers: no layer metadata from the previous build either.
    for (const name of prevDir && !o.clearCache ? layerNames(prevDir) : []) {
      const { t } = readCachedToml(path.join(prevDir!, `${name}.toml`));
      // Metadata-only restore is for launch=true, cache=false layers; a build=true one must be
      // rebuilt (its contents are needed during the build), so nothing of it comes back.
      if (!t?.types.launch || t.types.cache || t.types.build || fs.existsSync(path.join(dir, `${name}.toml`))) continue;
      writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
      restoredHere.push(`${name} (metadata)`);
    }
    // store.toml comes back even with --clear-cache, as the lifecycle restores it before it looks at -skip-layers.
    const store = prevDir && fs.existsSync(path.join(prevDir, 'store.toml'));
    if (store) fs.copyFileSync(path.join(prevDir, 'store.toml'), path.join(dir, 'store.toml'));
    // Layer SBOMs: the cache's (cache = true layers), then the previous build's launch SBOM, each
    // into a buildpack folder the restore wrote something into (lifecycle layer/sbom_restorer.go:
    // the folder exists only then).
    if (!o.clearCache && fs.readdirSync(dir).length > 0) {
      const sboms = restoreLayerSboms(dir, [
        cacheSrc && path.join(cacheSrc, CACHE_SBOM_DIR, esc),
        prevRoot && path.join(prevRoot, 'layers', 'sbom', 'launch', esc),
      ]);
      if (sboms.length) restoredHere.push(`SBOM of ${sboms.join(', ')}`);
    }
    log.info(`${bpKey(bp)}: ${restoredHere.length ? `restored ${restoredHere.join(', ')}` : 'nothing to restore'}`);
  }
  // No buildpack runs before a change to a linked or moved layer would move its folders' stamps.
  if (kept.size || movedIn.size) sleepSync(settleUntil - Date.now());
  return { ids, kept, moved: movedIn, deferred };
}
