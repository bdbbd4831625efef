/**
 * The `static` runtime's variables (contract, "`static` variables and files"), read once. Empty
 * values count as unset. Path variables are resolved here, so a path outside the root fails before
 * anything runs.
 */
import { raw, read, readAppPath, spec, value } from '../../../lib/config/read.ts';
import { UserError } from '../../../lib/errors.ts';
import { resolveInRoot, rootPath, type RootPath } from './paths.ts';

export const DEFAULT_OUTDIR = spec('CC_STATIC_AUTOBUILD_OUTDIR').default!;
/** `Caddyfile`: the default of CC_STATIC_CADDYFILE (`./Caddyfile`), at the root. */
export const DEFAULT_CADDYFILE = spec('CC_STATIC_CADDYFILE').default!.replace(/^\.\//, '');

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

/**
 * Every variable is read through lib/config (whitespace-only is unset; an invalid value is the
 * variable's own error), and every path through its one resolver.
 */
export function readConfig(env: Record<string, string | undefined>, appDir: string): StaticConfig {
  const webroot = readAppPath(env, 'CC_WEBROOT', appDir)!;
  // Only a Caddyfile named here is resolved now: ./Caddyfile, the default, is looked at when the
  // server is chosen (caddyfile.ts), and only if it is there.
  const caddyfile = read(env, 'CC_STATIC_CADDYFILE');
  const server = value(env, 'CC_STATIC_SERVER');
  const outDir = readAppPath(env, 'CC_STATIC_AUTOBUILD_OUTDIR', appDir)!;
  if (outDir.real === '') {
    throw new UserError({
      id: 'config/CC_STATIC_AUTOBUILD_OUTDIR/invalid',
      title: 'CC_STATIC_AUTOBUILD_OUTDIR is the application root',
      seen: { what: 'CC_STATIC_AUTOBUILD_OUTDIR', value: outDir.value, where: 'the application environment' },
      rule: 'the auto-build output folder is emptied before each build, so it must be a folder of its own',
      fix: `use a subfolder, for example ${DEFAULT_OUTDIR}`,
    });
  }
  return {
    webroot: webroot.source === 'env' ? rootPath(webroot) : undefined,
    buildCommand: value(env, 'CC_BUILD_COMMAND'),
    outDir: rootPath(outDir),
    overrideBuildcache: raw(env, 'CC_OVERRIDE_BUILDCACHE'),
    forceCaddy: server === 'caddy',
    caddyfile: caddyfile?.source === 'env' ? resolveInRoot(appDir, caddyfile.value, 'CC_STATIC_CADDYFILE') : undefined,
    // Checked when Hugo runs (hugo-version.ts): which versions are accepted depends on the date.
    hugoVersion: raw(env, 'CC_HUGO_VERSION'),
  };
}
