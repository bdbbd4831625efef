/**
 * The build cache content (contract, `static` rule 4): what the built application keeps.
 * - auto-build active, or CC_WEBROOT set: the configuration files the runtime reads and the served
 *   folder only;
 * - otherwise: the whole application root;
 * - CC_OVERRIDE_BUILDCACHE (colon-separated paths relative to the root) replaces either.
 * The exported application holds exactly that content: everything else is removed at the end of
 * the build (node_modules of a generator is already in its own cache layer by then).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';
import { resolveInRoot } from './paths.ts';

/** Configuration files the runtime reads at launch, kept with the served folder. */
export const RUNTIME_CONFIG_FILES = ['sws.toml', '.rbp'] as const;

export type CacheRule = 'whole-root' | 'config-and-webroot' | 'override';

export interface CacheContent {
  rule: CacheRule;
  /** Paths relative to the root, '/'-separated; [''] is the whole root. */
  paths: string[];
  why: string;
}

export interface CacheInputs {
  appDir: string;
  autoBuild: boolean;
  webrootSet: boolean;
  /** The served folder, relative. */
  webroot: string;
  /** CC_OVERRIDE_BUILDCACHE, raw. */
  override: string | undefined;
  /** Extra configuration files in use (the Caddyfile, CC_CACHE_FILE), relative. */
  configFiles: string[];
}

export function cacheContent(i: CacheInputs): CacheContent {
  if (i.override !== undefined) {
    const paths = i.override
      .split(':')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => resolveInRoot(i.appDir, p, 'CC_OVERRIDE_BUILDCACHE').rel);
    if (paths.length === 0) {
      throw new UserError({
        id: 'static/buildcache/empty',
        title: 'CC_OVERRIDE_BUILDCACHE lists no path',
        seen: { what: 'CC_OVERRIDE_BUILDCACHE', value: i.override, where: 'the application environment' },
        rule: 'CC_OVERRIDE_BUILDCACHE is a colon-separated list of files and folders relative to the application root',
        fix: 'list what the deployment needs, for example /public:/Caddyfile, or remove the variable',
      });
    }
    return { rule: 'override', paths: unique(paths), why: 'CC_OVERRIDE_BUILDCACHE is set' };
  }
  if (i.autoBuild || i.webrootSet) {
    const config = [...RUNTIME_CONFIG_FILES, ...i.configFiles].filter((f) => fs.existsSync(path.join(i.appDir, f)));
    return {
      rule: 'config-and-webroot',
      paths: unique([...config, i.webroot]),
      why: i.autoBuild ? 'auto-build is active' : 'CC_WEBROOT is set',
    };
  }
  return { rule: 'whole-root', paths: [''], why: 'no auto-build and no CC_WEBROOT' };
}

function unique(paths: string[]): string[] {
  // A path inside another kept path adds nothing; the root keeps everything.
  if (paths.includes('')) return [''];
  const sorted = [...new Set(paths)].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(`${q}/`)));
}

/** Whether `rel` is kept by `paths` (inside one of them). */
export function isKept(rel: string, paths: string[]): boolean {
  return paths.some((p) => p === '' || rel === p || rel.startsWith(`${p}/`));
}

/** Removes everything under `appDir` that `paths` does not keep; returns the removed paths, relative. */
export function pruneTo(appDir: string, paths: string[]): string[] {
  if (paths.includes('')) return [];
  const removed: string[] = [];
  const walk = (relDir: string) => {
    for (const name of fs.readdirSync(path.join(appDir, relDir)).sort()) {
      const rel = relDir ? `${relDir}/${name}` : name;
      if (isKept(rel, paths)) continue;
      const abs = path.join(appDir, rel);
      const isDir = fs.lstatSync(abs).isDirectory();
      // A folder above a kept path is walked into; anything else goes.
      if (isDir && paths.some((p) => p.startsWith(`${rel}/`))) walk(rel);
      else {
        fs.rmSync(abs, { recursive: true, force: true });
        removed.push(rel);
      }
    }
  };
  walk('');
  return removed;
}

/** The kept paths that do not exist (a typo in CC_OVERRIDE_BUILDCACHE), for a warning. */
export function missingPaths(appDir: string, paths: string[]): string[] {
  return paths.filter((p) => p !== '' && !fs.existsSync(path.join(appDir, p)));
}
