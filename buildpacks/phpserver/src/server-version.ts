/**
 * Which application server a build installs (contract, Versioning): 1.9.1 (PHP 8.4.12, Caddy 2.10.2)
 * by default, also when CC_PHP_VERSION names that default line (8.4); CC_PHP_VERSION=8.5 selects
 * 1.12.3 (PHP 8.5, Caddy 2.11.3). Nothing else is accepted.
 */
import { UserError } from '../../../lib/errors.ts';

export interface ServerVersion {
  /** What CC_PHP_VERSION selected: `default` or `8.5`. */
  selector: 'default' | '8.5';
  server: string;
  php: string;
  caddy: string;
}

export const SERVER_VERSIONS: Record<ServerVersion['selector'], ServerVersion> = {
  default: { selector: 'default', server: '1.9.1', php: '8.4.12', caddy: '2.10.2' },
  '8.5': { selector: '8.5', server: '1.12.3', php: '8.5', caddy: '2.11.3' },
};

/** The PHP line of the default server: `8.4` for 8.4.12. */
export const DEFAULT_LINE = SERVER_VERSIONS.default.php.split('.').slice(0, 2).join('.');

export function selectServer(value: string | undefined): ServerVersion {
  const v = value?.trim() ?? '';
  if (v === '' || v === DEFAULT_LINE) return SERVER_VERSIONS.default;
  if (v === '8.5') return SERVER_VERSIONS['8.5'];
  throw new UserError({
    id: 'phpserver/php-version/unsupported',
    title: `CC_PHP_VERSION=${v} is not a PHP version this runtime offers`,
    seen: { what: 'CC_PHP_VERSION', value: v, where: 'the application environment' },
    rule: `CC_PHP_VERSION is unset or ${DEFAULT_LINE} (PHP ${SERVER_VERSIONS.default.php} on the application server ${SERVER_VERSIONS.default.server}), or 8.5 (PHP 8.5 on ${SERVER_VERSIONS['8.5'].server})`,
    fix: `unset CC_PHP_VERSION (or set it to ${DEFAULT_LINE}) for PHP ${SERVER_VERSIONS.default.php}, or set it to 8.5`,
  });
}
