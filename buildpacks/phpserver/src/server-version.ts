/**
 * Which application server a build installs (contract, Versioning): 1.9.1 (PHP 8.4.12, Caddy 2.10.2)
 * by default, also when CC_PHP_VERSION names that default line (8.4); CC_PHP_VERSION=8.5 selects
 * 1.12.3 (PHP 8.5, Caddy 2.11.3). Nothing else is accepted (lib/config declares the values).
 */
import { value } from '../../../lib/config/read.ts';

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

/** The PHP line a server version carries: `8.4` for 8.4.12, `8.5` for 8.5. */
export function phpLine(php: string): string {
  return php.split('.').slice(0, 2).join('.');
}

/**
 * The operator variable naming a server of that line (build and launch): RBP_TOOL_FRANKENPHP for the
 * default line, RBP_TOOL_FRANKENPHP_8_5 for CC_PHP_VERSION=8.5, so one operator can provide both and
 * an app never gets the other line's PHP.
 */
export function serverVariable(v: ServerVersion): string {
  return v.selector === '8.5' ? 'RBP_TOOL_FRANKENPHP_8_5' : 'RBP_TOOL_FRANKENPHP';
}

/** CC_PHP_VERSION through lib/config (unset, 8.4 or 8.5; another value is config/CC_PHP_VERSION/invalid). */
export function selectServer(env: Record<string, string | undefined>): ServerVersion {
  return value(env, 'CC_PHP_VERSION') === '8.5' ? SERVER_VERSIONS['8.5'] : SERVER_VERSIONS.default;
}
