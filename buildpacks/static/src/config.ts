/**
 * The `static` runtime's variables (contract, "`static` variables and files"), read once. Empty
 * values count as unset. Path variables are resolved here, so a path outside the root fails before
 * anything runs.
 */
import { UserError } from '../../../lib/errors.ts';
import { resolveInRoot, type RootPath } from './paths.ts';

export const DEFAULT_OUTDIR = 'cc_static_autobuilt';
export const DEFAULT_CADDYFILE = 'Caddyfile';

export interface StaticConfig {
  /** CC_WEBROOT, when set. */
  webroot: RootPath | undefined;
  buildCommand: string | undefined;
  /** CC_STATIC_AUTOBUILD_OUTDIR or its default. */
  outDir: RootPath;
  overrideBuildcache: string | undefined;
  /** CC_STATIC_SERVER=caddy. */
  forceCaddy: boolean;
  /** CC_STATIC_CADDYFILE, when set. */
  caddyfile: RootPath | undefined;
  hugoVersion: string | undefined;
}

function value(env: Record<string, string | undefined>, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

export function readConfig(env: Record<string, string | undefined>, appDir: string): StaticConfig {
  const webroot = value(env, 'CC_WEBROOT');
  const caddyfile = value(env, 'CC_STATIC_CADDYFILE');
  const server = value(env, 'CC_STATIC_SERVER');
  if (server !== undefined && server !== 'caddy') {
    throw new UserError({
      id: 'static/server/unknown',
      title: 'CC_STATIC_SERVER names a server this runtime does not have',
      seen: { what: 'CC_STATIC_SERVER', value: server, where: 'the application environment' },
      rule: 'CC_STATIC_SERVER is unset (Static Web Server, or Caddy when a valid Caddyfile is present) or `caddy` (caddy file-server)',
      fix: 'set CC_STATIC_SERVER=caddy, or remove it',
    });
  }
  const outDir = resolveInRoot(appDir, value(env, 'CC_STATIC_AUTOBUILD_OUTDIR') ?? DEFAULT_OUTDIR, 'CC_STATIC_AUTOBUILD_OUTDIR');
  if (outDir.rel === '') {
    throw new UserError({
      id: 'static/outdir/root',
      title: 'CC_STATIC_AUTOBUILD_OUTDIR is the application root',
      seen: { what: 'CC_STATIC_AUTOBUILD_OUTDIR', value: env.CC_STATIC_AUTOBUILD_OUTDIR ?? '', where: 'the application environment' },
      rule: 'the auto-build output folder is emptied before each build, so it must be a folder of its own',
      fix: `use a subfolder, for example ${DEFAULT_OUTDIR}`,
    });
  }
  return {
    webroot: webroot === undefined ? undefined : resolveInRoot(appDir, webroot, 'CC_WEBROOT'),
    buildCommand: value(env, 'CC_BUILD_COMMAND'),
    outDir,
    overrideBuildcache: value(env, 'CC_OVERRIDE_BUILDCACHE'),
    forceCaddy: server === 'caddy',
    caddyfile: caddyfile === undefined ? undefined : resolveInRoot(appDir, caddyfile, 'CC_STATIC_CADDYFILE'),
    hugoVersion: value(env, 'CC_HUGO_VERSION'),
  };
}
