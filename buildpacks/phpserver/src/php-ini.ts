/**
 * PHP's configuration, as PHP hosts set it up: php.ini-production's settings as the base, the
 * project's `php.ini` on top (contract: "php.ini at project root: loaded automatically"), the same
 * files for the server and for `php`, so both read the same values.
 *
 * No way the server comes ships php.ini-production (upstream's release is one executable;
 * scripts/tools/frankenphp.sh's `make install` leaves it in PHP's source tree), and Debian's copy is
 * PHP 8.2's, edited for Debian (no session garbage collection). So the buildpack carries as data the
 * directives the file sets to another value than PHP's built-in default; its other lines restate them.
 *
 * PHPRC names the layer's `etc/`, whose `php.ini` holds these settings (no other php.ini is read);
 * PHP_INI_SCAN_DIR keeps the compiled-in scan directory (its leading empty entry: opcache's ini of the
 * PHP build, Debian's extension files) and adds `etc/app/`, a link to the project's php.ini, read last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LayerEnv } from '../../../lib/cnb/env.ts';

/** Where the settings come from. */
export const PRODUCTION_SOURCE = 'php.ini-production of PHP 8.4.11';

/** php.ini-production's directives whose value is not PHP's built-in default, as the file writes them. */
export const PRODUCTION_SETTINGS: readonly (readonly [string, string])[] = [
  ['short_open_tag', 'Off'],
  ['output_buffering', '4096'],
  ['zend.exception_ignore_args', 'On'],
  ['zend.exception_string_param_max_len', '0'],
  ['max_input_time', '60'],
  ['error_reporting', 'E_ALL & ~E_DEPRECATED'],
  ['display_errors', 'Off'],
  ['display_startup_errors', 'Off'],
  ['log_errors', 'On'],
  ['variables_order', '"GPCS"'],
  ['request_order', '"GP"'],
  ['register_argc_argv', 'Off'],
  ['enable_dl', 'Off'],
  ['session.gc_divisor', '1000'],
  ['zend.assertions', '-1'],
];

/** The text of the base php.ini. */
export function productionIni(): string {
  return [
    `; PHP's production settings (rbp/phpserver): the directives ${PRODUCTION_SOURCE} sets to another`,
    "; value than PHP's built-in default. The project's php.ini is read after this file and overrides it.",
    '[PHP]',
    ...PRODUCTION_SETTINGS.map(([k, v]) => `${k} = ${v}`),
    '',
  ].join('\n');
}

/**
 * Writes `etc/php.ini` and `etc/app/` into the php layer `layerDir` and declares PHPRC and
 * PHP_INI_SCAN_DIR in `env` (the run environment's own PHPRC is kept, its PHP_INI_SCAN_DIR read after
 * ours). Returns the project's php.ini, when it has one.
 */
export function writePhpIni(layerDir: string, appDir: string, env: LayerEnv): string | undefined {
  const etc = path.join(layerDir, 'etc');
  fs.mkdirSync(etc, { recursive: true });
  fs.writeFileSync(path.join(etc, 'php.ini'), productionIni());
  env.default('PHPRC', etc);
  const own = path.join(appDir, 'php.ini');
  if (!fs.statSync(own, { throwIfNoEntry: false })?.isFile()) return undefined;
  const scan = path.join(etc, 'app');
  fs.mkdirSync(scan);
  fs.symlinkSync(own, path.join(scan, 'php.ini'));
  env.prepend('PHP_INI_SCAN_DIR', `:${scan}`, ':');
  return own;
}
