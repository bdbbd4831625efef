/**
 * Paths the user gives relative to the application root (CC_WEBROOT, CC_STATIC_AUTOBUILD_OUTDIR,
 * CC_STATIC_CADDYFILE, CC_OVERRIDE_BUILDCACHE entries). A leading `/` means the root, as in the
 * contract's `CC_WEBROOT` default `/`. A path that leaves the root is an error: the root is all the
 * built image holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appPathError, resolveAppPath } from '../../../lib/app-path.ts';
import { UserError } from '../../../lib/errors.ts';

export interface RootPath {
  /** Relative to the root, `/`-separated; '' for the root itself. */
  rel: string;
  abs: string;
}

export function resolveInRoot(appDir: string, value: string, variable: string): RootPath {
  // One resolver for paths inside the app (lib/app-path.ts): symlinks followed, dangling ones too.
  const r = resolveAppPath(appDir, value, 'any', false);
  if (r.problem === 'outside') {
    throw new UserError({
      id: 'static/path/outside-root',
      title: `${variable} points outside the application root`,
      seen: { what: variable, value, where: 'the application environment' },
      rule: `${variable} is a path relative to the application root (a leading / means the root); it cannot leave it`,
      fix: `set ${variable} to a folder or file inside the project, for example /public`,
    });
  }
  if (r.problem) throw appPathError({ id: 'static/path', what: variable, value, problem: r.problem, kind: 'any', fix: `set ${variable} to a folder or file inside the project, for example /public` });
  const found = r.path!;
  // What is served is where the link leads: name it by its real place in the root.
  const rel = found.type ? path.relative(fs.realpathSync(appDir), fs.realpathSync(found.abs)) : found.rel;
  return { rel: rel.split(path.sep).join('/'), abs: found.abs };
}

/** `public` → `/public`, '' → `/`: how paths are shown in logs, as the contract writes them. */
export function show(rel: string): string {
  return `/${rel}`;
}
