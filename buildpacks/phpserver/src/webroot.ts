/**
 * The webroot (contract, `phpserver` variables: CC_WEBROOT, default `/`): the served directory,
 * relative to the project root, which needs an `index.php` or an `index.html`.
 */
import path from 'node:path';
import { readAppPath } from '../../../lib/config/read.ts';
import { statIfAny } from '../../../lib/fsx.ts';

export interface Webroot {
  /** Relative to the app root, `.` for the root itself; what the launch metadata records. */
  rel: string;
  abs: string;
  /** CC_WEBROOT as set, for messages. */
  setting: string | undefined;
}

/**
 * CC_WEBROOT through lib/config's one resolver: `/`, `/public`, `public/`, `./public` → `.`,
 * `public`; a symlinked webroot is named by where it leads; a path that leaves the root, also
 * through a symlink, is config/CC_WEBROOT/invalid.
 */
export function resolveWebroot(appDir: string, env: Record<string, string | undefined>): Webroot {
  const w = readAppPath(env, 'CC_WEBROOT', appDir, { fix: 'Set CC_WEBROOT to a directory inside the project, such as /public.' })!;
  const rel = w.real || '.';
  return { rel, abs: path.join(appDir, rel), setting: w.source === 'env' ? w.value : undefined };
}

/** What detect says when the webroot has no index: which file is missing, and where. */
export function missingIndexReason(webroot: Webroot, exists = statIfAny(webroot.abs)?.isDirectory()): string {
  const where = webroot.rel === '.' ? 'the project root' : `${webroot.rel}/`;
  const setting = webroot.setting === undefined ? 'CC_WEBROOT unset, so the webroot is the project root' : `CC_WEBROOT=${webroot.setting}`;
  const why = exists ? `: neither is in ${where}` : `, and the webroot ${where} does not exist`;
  return `phpserver needs index.php or index.html in the webroot${why} (${setting}, ${webroot.abs})`;
}
