/** Instance sizes (contract, Limits 1): `phpserver` cannot be deployed on a pico instance. */
import { UserError } from '../../../lib/errors.ts';
import type { Refusal } from '../../../lib/launch/plan.ts';

/** The refused instance, as `--instance` names it. */
export const REFUSED_INSTANCE = 'pico';

export function picoError(size: string, where: string): UserError {
  return new UserError({
    id: 'phpserver/instance/pico',
    title: 'The phpserver runtime cannot run on a pico instance',
    seen: { what: 'instance size', value: size, where },
    rule: 'phpserver cannot be deployed on a pico instance; the default instance size is XS',
    fix: 'build and run on XS or a larger instance (rbp build --instance XS, rbp run --instance XS), or serve static files with the static runtime, which runs on pico',
  });
}

/** At build: RBP_INSTANCE_SIZE is the instance the app is built for. */
export function checkInstance(size: string | undefined): void {
  if (size?.trim().toLowerCase() !== REFUSED_INSTANCE) return;
  throw picoError(size.trim(), 'RBP_INSTANCE_SIZE (rbp build --instance)');
}

/** At launch (rbp run, rbp deploy): the instance the app is started on. */
export const PICO_REFUSAL: Refusal = {
  variable: 'RBP_INSTANCE_SIZE',
  value: REFUSED_INSTANCE,
  error: (seen) => picoError(seen, 'RBP_INSTANCE_SIZE (rbp run or rbp deploy --instance)'),
};
