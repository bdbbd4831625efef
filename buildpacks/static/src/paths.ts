/**
 * Paths the user gives relative to the application root (CC_WEBROOT, CC_STATIC_AUTOBUILD_OUTDIR,
 * CC_STATIC_CADDYFILE, CC_CACHE_FILE, CC_OVERRIDE_BUILDCACHE entries), resolved by lib/config's one
 * resolver (symlinks followed; a leading `/` means the root). A path that leaves the root is the
 * variable's own error: the root is all the built image holds.
 */
import { resolveSettingPath, type AppPathSetting } from '../../../lib/config/read.ts';

export interface RootPath {
  /** Relative to the root, `/`-separated, where the path really leads; '' for the root itself. */
  rel: string;
  abs: string;
}

/** A resolved setting as the static runtime names it: by its real place in the root. */
export function rootPath(p: AppPathSetting): RootPath {
  return { rel: p.real, abs: p.abs };
}

/** One path `variable` names (an entry of CC_OVERRIDE_BUILDCACHE, say). */
export function resolveInRoot(appDir: string, value: string, variable: string): RootPath {
  return rootPath(resolveSettingPath(appDir, variable, value, 'env'));
}

/** `public` → `/public`, '' → `/`: how paths are shown in logs, as the contract writes them. */
export function show(rel: string): string {
  return `/${rel}`;
}
