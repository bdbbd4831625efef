/**
 * rbp's own folders on this machine, under the XDG cache folder ($XDG_CACHE_HOME, else ~/.cache):
 *   rbp/downloads/   the shared download cache the buildpacks use (RBP_DOWNLOAD_CACHE, lib/deps/download-cache.ts)
 *   rbp/deploy/      the OUT of `rbp deploy APP` without --out, one per APP path
 *   rbp/outs/        one record per OUT rbp built anywhere, so `rbp prune` finds them
 */
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { raw, value } from '../config/read.ts';
import { DOWNLOAD_CACHE_VARIABLE } from '../deps/download-cache.ts';

export function rbpCacheHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'rbp');
}

/** RBP_DOWNLOAD_CACHE for the buildpacks rbp runs: the operator's, else rbp's own folder; `off` as is. */
export function downloadCacheSetting(env: NodeJS.ProcessEnv = process.env): string {
  return raw(env, DOWNLOAD_CACHE_VARIABLE)?.trim() === 'off' ? 'off' : (value(env, DOWNLOAD_CACHE_VARIABLE) ?? path.join(rbpCacheHome(env), 'downloads'));
}

/** `rbp deploy APP`'s OUT when no --out is given: one per APP path. */
export function defaultDeployOut(app: string, env: NodeJS.ProcessEnv = process.env): string {
  const abs = path.resolve(app);
  const hash = crypto.createHash('sha256').update(abs).digest('hex').slice(0, 8);
  return path.join(rbpCacheHome(env), 'deploy', `${path.basename(abs)}-${hash}`);
}
