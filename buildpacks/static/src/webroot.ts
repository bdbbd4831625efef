/**
 * The served folder (contract, `static` rules 2–3 and CC_WEBROOT): CC_WEBROOT when set, else the
 * auto-build folder when a generator ran, else the root. It must hold an index.html or index.htm.
 */
import fs from 'node:fs';
import { findIndex, INDEX_FILES as INDEX_FILES_OF } from '../../../lib/app-path.ts';
import { UserError } from '../../../lib/errors.ts';
import type { StaticConfig } from './config.ts';
import { show, type RootPath } from './paths.ts';
import { statIfAny } from '../../../lib/fsx.ts';

/** The static runtime's index names (lib/app-path.ts keeps every runtime's). */
export const INDEX_FILES = INDEX_FILES_OF.static;

export function chooseWebroot(cfg: StaticConfig, appDir: string, autoBuilt: boolean): RootPath & { why: string } {
  if (cfg.webroot) return { ...cfg.webroot, why: autoBuilt ? 'CC_WEBROOT is set (it wins over the auto-build folder)' : 'CC_WEBROOT is set' };
  if (autoBuilt) return { ...cfg.outDir, why: 'the auto-build output folder' };
  return { rel: '', abs: appDir, why: 'the default, the project root' };
}

export function requireIndex(webroot: RootPath & { why: string }, after: string): string {
  const index = findIndex(webroot.abs, INDEX_FILES);
  if (index) return index;
  const exists = statIfAny(webroot.abs)?.isDirectory();
  throw new UserError({
    id: 'static/webroot/no-index',
    title: `The served folder ${show(webroot.rel)} has no index.html or index.htm`,
    seen: { what: 'webroot', value: show(webroot.rel), where: webroot.why },
    rule: `the served folder must hold an index.html or index.htm ${after}`,
    details: [
      exists ? `${show(webroot.rel)} holds: ${fs.readdirSync(webroot.abs).slice(0, 12).join(', ') || 'nothing'}` : `${show(webroot.rel)} does not exist`,
    ],
    fix: 'add an index.html, set CC_WEBROOT to the folder that holds it, or fix the build so that it writes one',
  });
}
