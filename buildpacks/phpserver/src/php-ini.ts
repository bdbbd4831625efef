/**
 * PHP's configuration, as PHP hosts set it up: php.ini-production's settings as the base, the
 * project's `php.ini` on top (contract: "php.ini at project root: loaded automatically"), the same
 * files for the server and for `php`, so both read the same values.
 *
 * None of the ways the server comes ships php.ini-production (upstream's release is one static
 * executable; scripts/tools/frankenphp.sh installs PHP with `make install`, which leaves the file in
 * the source tree; an operator's server is whatever it is), and Debian's copy
 * (/usr/lib/php/8.2/php.ini-production) is PHP 8.2's, edited for Debian (no session garbage
 * collection: a cron job of Debian's does it). So the buildpack carries the settings as data: the
 * directives php.ini-production sets to another value than PHP's built-in default, each as the file
 * writes it. The others of the file restate PHP's defaults.
 *
 * The files, as PHP reads them: PHPRC names the php layer's `etc/`, whose `php.ini` holds these
 * settings (so no other php.ini is read: not the cwd's, nor one of a distribution's PHP); then the
 * scan directories (PHP_INI_SCAN_DIR): the compiled-in one first (the leading empty entry: the PHP
 * build's own `zend_extension=opcache`, Debian's extension files), then `etc/app/`, which holds the
 * project's php.ini (a link to it), so the app has the last word on every directive.
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

export interface PhpIni {
  /** The files PHP reads, in order (the compiled-in scan directory's aside). */
  files: string[];
  /** The project's php.ini, when it has one. */
  appIni: string | undefined;
}

/**
 * Writes `etc/php.ini` and `etc/app/` into the php layer `layerDir` and declares PHPRC and
 * PHP_INI_SCAN_DIR in `env` (a PHPRC or PHP_INI_SCAN_DIR the run environment sets is kept: PHPRC
 * then names another base, PHP_INI_SCAN_DIR's directories come after ours).
 */
export function writePhpIni(layerDir: string, appDir: string, env: LayerEnv): PhpIni {
  const etc = path.join(layerDir, 'etc');
  fs.mkdirSync(etc, { recursive: true });
  const base = path.join(etc, 'php.ini');
  fs.writeFileSync(base, productionIni());
  env.default('PHPRC', etc);
  const own = path.join(appDir, 'php.ini');
  if (!fs.statSync(own, { throwIfNoEntry: false })?.isFile()) return { files: [base], appIni: undefined };
  const scan = path.join(etc, 'app');
  fs.mkdirSync(scan);
  fs.symlinkSync(own, path.join(scan, 'php.ini'));
  env.prepend('PHP_INI_SCAN_DIR', `:${scan}`, ':');
  return { files: [base, own], appIni: own };
}
