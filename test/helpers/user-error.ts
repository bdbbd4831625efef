/** Catching the UserError a piece of code throws, for assertions and snapshots of its rendering. */
import { Writable } from 'node:stream';
import { Logger } from '../../lib/log.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isUserError, renderUserError, type UserError } from '../../lib/errors.ts';

/** The UserError `fn` throws; anything else thrown, or nothing, fails the test. */
export function thrownUserError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    if (isUserError(e)) return e;
    throw e;
  }
  throw new Error('expected a UserError');
}

/** The UserError `p` rejects with. */
export async function rejectedUserError(p: Promise<unknown>): Promise<UserError> {
  try {
    await p;
  } catch (e) {
    if (isUserError(e)) return e;
    throw e;
  }
  throw new Error('expected a UserError');
}

/** The rendered block of the UserError `fn` throws. */
export function renderedUserError(fn: () => unknown): string {
  return renderUserError(thrownUserError(fn).data);
}

/**
 * The rendered block of a user error, stable across runs for a snapshot: temporary folders, this
 * checkout, the home folder, loopback ports and the digests of generated files are replaced by placeholders.
 */
export function stableRendering(e: UserError | { data: UserError['data'] }, extra: Record<string, string> = {}): string {
  let text = renderUserError(e.data);
  for (const [from, to] of Object.entries(extra)) text = text.replaceAll(from, to);
  const root = path.resolve(import.meta.dirname, '../..');
  // A folder is replaced only where a path starts (not inside another word: /root in platform/cache/root).
  const at = (dir: string, to: string) => (t: string) =>
    t.replace(new RegExp(`(^|[\\s"'(=[])${dir.replace(/[.*+?^$()|[\]\\]/g, '\\$&')}(?=/|[\\s"'):,]|$)`, 'gm'), `$1${to}`);
  for (const f of [at(root, '<repo>'), at(fs.realpathSync(os.tmpdir()), '<tmp>'), at(os.tmpdir(), '<tmp>'), at(os.homedir(), '<home>')]) text = f(text);
  return (
    text
      .replace(/<tmp>\/[\w.-]+?-[A-Za-z0-9]{6}(?=[/"\s)]|$)/g, '<tmp>/<dir>')
      .replace(/\b(127\.0\.0\.1|localhost|\[::1\]):\d+/g, '$1:<port>')
      // A digest of a file a test made (its archive dates vary); a digest of one repeated digit is a test's own.
      .replace(/\b(sha256|sha512):(?!([0-9a-f])\2+\b)[0-9a-f]{64,128}\b/g, '$1:<digest>')
  );
}

/** A logger that writes nowhere: for errors whose rendering, not their log, is under test. */
export function quietLogger(): Logger {
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  return new Logger({ out: sink(), err: sink() });
}
