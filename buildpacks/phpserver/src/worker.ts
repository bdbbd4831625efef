/**
 * Worker mode (contract, CC_PHPSERVER_WORKER and Limits 3): a script kept in memory to handle
 * requests. The path is relative to the project root (`/public/worker.php`); lib/config's one
 * resolver checks that it is a file of the project (symlinks followed), and it must lie inside the
 * webroot, symlinks resolved. Every refusal is config/CC_PHPSERVER_WORKER/invalid.
 */
import path from 'node:path';
import { resolveSettingPath } from '../../../lib/config/read.ts';
import { UserError } from '../../../lib/errors.ts';
import type { Webroot } from './webroot.ts';

/** The worker script relative to the app root (`public/worker.php`), or undefined when unset. */
export function resolveWorker(appDir: string, webroot: Webroot, value: string | undefined): string | undefined {
  const raw = value?.trim() ?? '';
  if (raw === '') return undefined;
  const webrootShown = webroot.rel === '.' ? '/' : `/${webroot.rel}`;
  const fix = `move the script under ${webrootShown} and point CC_PHPSERVER_WORKER at it, e.g. ${path.posix.join(webrootShown, 'worker.php')}`;
  const found = resolveSettingPath(appDir, 'CC_PHPSERVER_WORKER', raw, 'env', {
    kind: 'file',
    mustExist: true,
    fix: `add ${raw.replace(/^\/+/, '')} to the project, or correct CC_PHPSERVER_WORKER`,
  });
  // Both sides where symlinks lead (webroot.rel is already): a link inside the webroot may still lead out of it.
  if (webroot.rel !== '.' && !found.real.startsWith(`${webroot.rel}/`)) {
    throw new UserError({
      id: 'config/CC_PHPSERVER_WORKER/invalid',
      title: 'The worker script is not inside the webroot',
      seen: { what: 'CC_PHPSERVER_WORKER', value: raw, where: 'the application environment' },
      rule: `the worker script must be inside the webroot (${webrootShown}, CC_WEBROOT)`,
      fix,
      details: [found.real === found.rel ? `${found.rel} is outside ${webrootShown}` : `${found.rel} is a link to /${found.real}, outside ${webrootShown}`],
    });
  }
  return found.rel;
}
