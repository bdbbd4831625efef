/**
 * Paths the user gives relative to the application root (CC_WEBROOT, CC_STATIC_AUTOBUILD_OUTDIR,
 * CC_STATIC_CADDYFILE, CC_OVERRIDE_BUILDCACHE entries). A leading `/` means the root, as in the
 * contract's `CC_WEBROOT` default `/`. A path that leaves the root is an error: the root is all the
 * built image holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';

export interface RootPath {
  /** Relative to the root, `/`-separated; '' for the root itself. */
  rel: string;
  abs: string;
}

export function resolveInRoot(appDir: string, value: string, variable: string): RootPath {
  const abs = path.resolve(appDir, `.${path.sep}${value.replace(/^\/+/, '')}`);
  let rel = path.relative(appDir, abs);
  // A symlink inside the root may still point outside it.
  if (!rel.startsWith('..') && fs.existsSync(abs)) rel = path.relative(fs.realpathSync(appDir), fs.realpathSync(abs));
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new UserError({
      id: 'static/path/outside-root',
      title: `${variable} points outside the application root`,
      seen: { what: variable, value, where: 'the application environment' },
      rule: `${variable} is a path relative to the application root (a leading / means the root); it cannot leave it`,
      fix: `set ${variable} to a folder or file inside the project, for example /public`,
    });
  }
  return { rel: rel.split(path.sep).join('/'), abs };
}

/** `public` → `/public`, '' → `/`: how paths are shown in logs, as the contract writes them. */
export function show(rel: string): string {
  return `/${rel}`;
}
