/** Renders the UserError a function throws, for snapshots. */
import { isUserError, renderUserError } from '../../../lib/errors.ts';

export function rendered(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isUserError(e)) return renderUserError(e.data);
    throw e;
  }
  throw new Error('expected a user error');
}
