/**
 * The key-value add-on (contract, "Key-value add-on use" and limit 4): a Redis-protocol store used
 * from PHP through the `redis` extension, with the add-on's host, port and token (the password).
 * Only tcp mode and port 6378 are supported: a linked add-on's KV_HOST that names a unix socket or
 * another scheme, or a KV_PORT other than 6378, is the variable's own error at build (lib/config
 * declares the rules). The app connects itself, e.g.
 * `(new Redis())->connect(getenv('KV_HOST'), (int) getenv('KV_PORT')); $r->auth(getenv('KV_TOKEN'));`.
 */
import { isSet, value } from '../../../lib/config/read.ts';

/** The log line for a linked add-on, or undefined when none is; throws on a value the contract refuses. */
export function keyValueAddon(env: Record<string, string | undefined>): string | undefined {
  const host = value(env, 'KV_HOST');
  const port = value(env, 'KV_PORT');
  if (host === undefined && port === undefined) return undefined;
  const where = `${host?.replace(/^tcp:\/\//, '') ?? '(KV_HOST unset)'}:${port ?? '(KV_PORT unset)'}`;
  return `key-value add-on: ${where} over tcp, ${isSet(env, 'KV_TOKEN') ? 'KV_TOKEN as the redis password' : 'no KV_TOKEN'} (PHP reaches it through the redis extension)`;
}
