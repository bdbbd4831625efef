/**
 * Which request-flow middlewares are active (contract, "Request flow" rule 2): each by the presence
 * of its variable or file, and `custom` by CC_REQUEST_FLOW naming it with CC_REQUEST_FLOW_CUSTOM set.
 * Nothing here throws: the chain planner (chain.ts) turns bad combinations into user errors.
 */
// Whitespace only counts as unset, as everywhere (lib/config): `CC_REDIRECTOR_PROJECT_KEY=" "` activates nothing.
import { isSet, raw } from '../../config/read.ts';
import fs from 'node:fs';
import path from 'node:path';
import { resolveAppPath, type AppPathProblem } from '../../app-path.ts';

/** The cache configuration, in the app's configuration folder for this project. */
export const CACHE_VCL = '.rbp/cache.vcl';

export type MiddlewareKind = 'accessproxy' | 'redirector' | 'cache' | 'custom';
/** The items CC_REQUEST_FLOW may name (the access proxy cannot be named: it is always first). */
export const NAMEABLE = ['redirector', 'cache', 'custom'] as const;
export type Nameable = (typeof NAMEABLE)[number];
export const BLOCK = 'block';

/** Each secret reaches only the middleware that needs it: not the app, not the other middlewares. */
export const MIDDLEWARE_SECRETS: Record<string, MiddlewareKind> = {
  ACCESSPROXY_CHALLENGE_SECRET: 'accessproxy',
  CC_REDIRECTOR_PROJECT_KEY: 'redirector',
};

export interface CacheVcl {
  /** Absolute path. */
  path: string;
  /** How it was chosen: the variable CC_CACHE_FILE or the file .rbp/cache.vcl. */
  source: 'CC_CACHE_FILE' | typeof CACHE_VCL;
  /** As the user wrote it, for messages. */
  shown: string;
  /** Why the file cannot be used (outside the app once symlinks are followed, missing, a folder): chain.ts refuses it. */
  problem?: AppPathProblem;
}

/**
 * The cache configuration: CC_CACHE_FILE (relative to the app) wins over .rbp/cache.vcl. Both are
 * resolved inside the app, symlinks followed; a file that cannot be used carries its `problem`.
 */
export function cacheVcl(env: NodeJS.ProcessEnv, appDir: string): CacheVcl | undefined {
  const file = raw(env, 'CC_CACHE_FILE');
  const source = file ? 'CC_CACHE_FILE' : CACHE_VCL;
  const shown = file ?? CACHE_VCL;
  // .rbp/cache.vcl activates the cache by being there (a dangling symlink too: it is then refused).
  if (source === CACHE_VCL && !fs.lstatSync(path.join(appDir, CACHE_VCL), { throwIfNoEntry: false })) return undefined;
  const r = resolveAppPath(appDir, shown, 'file');
  return { path: r.path?.abs ?? path.join(path.resolve(appDir), shown), source, shown, ...(r.problem ? { problem: r.problem } : {}) };
}

/** CC_REQUEST_FLOW split on commas, trimmed, empty items dropped. */
export function flowItems(env: NodeJS.ProcessEnv): string[] {
  return (raw(env, 'CC_REQUEST_FLOW') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function isBlocked(env: NodeJS.ProcessEnv): boolean {
  return flowItems(env).includes(BLOCK);
}

/** The middlewares whose activation is present, in no particular order. */
export function activeMiddlewares(env: NodeJS.ProcessEnv, appDir: string): Set<MiddlewareKind> {
  const active = new Set<MiddlewareKind>();
  for (const [variable, kind] of Object.entries(MIDDLEWARE_SECRETS)) if (isSet(env, variable)) active.add(kind);
  if (cacheVcl(env, appDir)) active.add('cache');
  if (flowItems(env).includes('custom') && isSet(env, 'CC_REQUEST_FLOW_CUSTOM')) active.add('custom');
  return active;
}

/** Whether the app sits behind anything: a middleware, or the block answering on the public port. */
export function isActive(env: NodeJS.ProcessEnv, appDir: string = process.cwd()): boolean {
  return isBlocked(env) || activeMiddlewares(env, appDir).size > 0;
}
