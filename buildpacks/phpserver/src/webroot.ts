/**
 * The webroot (contract, `phpserver` variables: CC_WEBROOT, default `/`): the served directory,
 * relative to the project root, which needs an `index.php` or an `index.html`.
 */
import path from 'node:path';
import { appPathError, resolveAppPath } from '../../../lib/app-path.ts';
import { UserError } from '../../../lib/errors.ts';
import { statIfAny } from '../../../lib/fsx.ts';

export const INDEX_FILES = ['index.php', 'index.html'] as const;

export interface Webroot {
  /** Relative to the app root, `.` for the root itself; what the launch metadata records. */
  rel: string;
  abs: string;
  /** CC_WEBROOT as set, for messages. */
  setting: string | undefined;
}

/**
 * `/`, `/public`, `public/`, `./public` → `.`, `public`; a path that leaves the root, also through a
 * symlink, is an error (lib/app-path.ts, the one resolver for paths inside the app).
 */
export function resolveWebroot(appDir: string, value: string | undefined): Webroot {
  const raw = value?.trim() ?? '';
  const r = resolveAppPath(appDir, raw, 'any', false);
  if (r.problem === 'outside') {
    throw new UserError({
      id: 'phpserver/webroot/outside',
      title: 'CC_WEBROOT points outside the project',
      seen: { what: 'CC_WEBROOT', value: raw, where: 'the application environment' },
      rule: 'CC_WEBROOT is a directory relative to the project root, default /',
      fix: 'set CC_WEBROOT to a directory inside the project, such as /public',
    });
  }
  if (r.problem) throw appPathError({ id: 'phpserver/webroot', what: 'CC_WEBROOT', value: raw, problem: r.problem, kind: 'dir', fix: 'set CC_WEBROOT to a directory inside the project, such as /public' });
  const rel = r.path!.rel || '.';
  return { rel, abs: path.join(appDir, rel), setting: value };
}

/** The first index file in the webroot, or undefined. */
export function findIndex(webroot: Webroot): string | undefined {
  return INDEX_FILES.find((f) => statIfAny(path.join(webroot.abs, f))?.isFile());
}

/** What detect says when the webroot has no index: which file is missing, and where. */
export function missingIndexReason(webroot: Webroot): string {
  const where = webroot.rel === '.' ? 'the project root' : `${webroot.rel}/`;
  const setting = webroot.setting === undefined ? 'CC_WEBROOT unset, so the webroot is the project root' : `CC_WEBROOT=${webroot.setting}`;
  if (!statIfAny(webroot.abs)?.isDirectory()) {
    return `phpserver needs index.php or index.html in the webroot, and the webroot ${where} does not exist (${setting}, ${webroot.abs})`;
  }
  return `phpserver needs index.php or index.html in the webroot: neither is in ${where} (${setting}, ${webroot.abs})`;
}
