/** Instance sizes (contract, Limits 1): `phpserver` cannot be deployed on a pico instance. */
import { UserError } from '../../../lib/errors.ts';

export function checkInstance(size: string | undefined): void {
  if (size?.trim().toLowerCase() !== 'pico') return;
  throw new UserError({
    id: 'phpserver/instance/pico',
    title: 'The phpserver runtime cannot run on a pico instance',
    seen: { what: 'instance size', value: size.trim(), where: 'RBP_INSTANCE_SIZE (rbp build --instance)' },
    rule: 'phpserver cannot be deployed on a pico instance; the default instance size is XS',
    fix: 'build for XS or a larger instance (rbp build --instance XS), or serve static files with the static runtime, which runs on pico',
  });
}
