/**
 * Worker mode (contract, CC_PHPSERVER_WORKER and Limits 3): a script kept in memory to handle
 * requests. The path is relative to the project root (`/public/worker.php`), the file must exist and
 * it must lie inside the webroot, symlinks resolved.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';
import type { Webroot } from './webroot.ts';

const seenOf = (value: string) => ({ what: 'CC_PHPSERVER_WORKER', value, where: 'the application environment' });

function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The worker script relative to the app root (`public/worker.php`), or undefined when unset. */
export function resolveWorker(appDir: string, webroot: Webroot, value: string | undefined): string | undefined {
  const raw = value?.trim() ?? '';
  if (raw === '') return undefined;
  const rel = path.posix.normalize(raw.replace(/^\/+/, ''));
  const abs = path.join(appDir, rel);
  const webrootShown = webroot.rel === '.' ? '/' : `/${webroot.rel}`;
  const outside = (detail: string) =>
    new UserError({
      id: 'phpserver/worker/outside-webroot',
      title: 'The worker script is not inside the webroot',
      seen: seenOf(raw),
      rule: `the worker script must be inside the webroot (${webrootShown}, CC_WEBROOT)`,
      fix: `move the script under ${webrootShown} and point CC_PHPSERVER_WORKER at it, e.g. ${path.posix.join(webrootShown, 'worker.php')}`,
      details: [detail],
    });
  if (rel === '..' || rel.startsWith('../') || !inside(webroot.abs, abs)) throw outside(`${rel} is outside ${webrootShown}`);
  const stat = fs.statSync(abs, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    throw new UserError({
      id: 'phpserver/worker/not-found',
      title: 'The worker script does not exist',
      seen: seenOf(raw),
      rule: 'CC_PHPSERVER_WORKER names a PHP file of the project, relative to the project root',
      fix: `add ${rel} to the project, or correct CC_PHPSERVER_WORKER`,
      details: [stat ? `${abs} is not a file` : `${abs} does not exist`],
    });
  }
  // A symlink inside the webroot may still lead out of it.
  const real = fs.realpathSync(abs);
  const realRoot = fs.realpathSync(webroot.abs);
  if (!inside(realRoot, real)) throw outside(`${rel} is a link to ${real}, outside ${webrootShown}`);
  return rel;
}
