/** Catching the UserError a piece of code throws, for assertions and snapshots of its rendering. */
import { isUserError, renderUserError, type UserError } from '../../lib/errors.ts';

/** The UserError `fn` throws; anything else thrown, or nothing, fails the test. */
export function thrownUserError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    if (isUserError(e)) return e as UserError;
    throw e;
  }
  throw new Error('expected a UserError');
}

/** The UserError `p` rejects with. */
export async function rejectedUserError(p: Promise<unknown>): Promise<UserError> {
  try {
    await p;
  } catch (e) {
    if (isUserError(e)) return e as UserError;
    throw e;
  }
  throw new Error('expected a UserError');
}

/** The rendered block of the UserError `fn` throws. */
export function renderedUserError(fn: () => unknown): string {
  return renderUserError(thrownUserError(fn).data);
}
