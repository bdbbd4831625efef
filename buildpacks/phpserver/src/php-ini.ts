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
 * PHP build, Debian's extension files) and adds `etc/app/`, a copy of the project's php.ini, read last.
 * Both are set by sh from the layer's own path (PHP_INI_SH): at launch by the layer's exec.d program,
 * for `php` by its shim. An env file would have to name the layer by the path it was built at, which
 * an image built elsewhere (rbp's OUT) does not have.
 */
import fs from 'node:fs';
import path from 'node:path';

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
 * Writes `etc/php.ini`, and `etc/app/php.ini` as a copy of the project's, into the php layer
 * `layerDir`. Returns the project's php.ini, when it has one.
 */
export function writePhpIni(layerDir: string, appDir: string): string | undefined {
  const etc = path.join(layerDir, 'etc');
  fs.mkdirSync(etc, { recursive: true });
  fs.writeFileSync(path.join(etc, 'php.ini'), productionIni());
  const own = path.join(appDir, 'php.ini');
  if (!fs.statSync(own, { throwIfNoEntry: false })?.isFile()) return undefined;
  fs.mkdirSync(path.join(etc, 'app'));
  fs.copyFileSync(own, path.join(etc, 'app', 'php.ini'));
  return own;
}

/** sh that finds the layer from the path of the running script, `<layer>/<folder>/<name>`: `$layer`. */
export const LAYER_OF_SCRIPT_SH = [
  'case $0 in */*) self=$0 ;; *) self=$(command -v -- "$0") ;; esac',
  'case $self in /*) ;; *) self=$PWD/$self ;; esac',
  'layer=${self%/*/*}',
].join('\n');

/**
 * sh that sets PHP's configuration from `$layer`: PHPRC unless the environment has its own; the
 * project's php.ini in PHP_INI_SCAN_DIR, before the environment's own directories, once.
 */
export const PHP_INI_SH = [
  '[ -n "${PHPRC+set}" ] || { PHPRC=$layer/etc; export PHPRC; }',
  'if [ -d "$layer/etc/app" ]; then',
  '  case ":${PHP_INI_SCAN_DIR-}:" in',
  '    *":$layer/etc/app:"*) ;;',
  '    *) PHP_INI_SCAN_DIR=":$layer/etc/app${PHP_INI_SCAN_DIR:+:$PHP_INI_SCAN_DIR}"; export PHP_INI_SCAN_DIR ;;',
  '  esac',
  'fi',
].join('\n');

/** The layer's `exec.d/php-ini`: the launcher runs it before every process and sets what it prints on fd 3 (TOML). */
export function phpIniExecD(): string {
  return [
    '#!/bin/sh',
    "# PHP's configuration for every process of the app (rbp/phpserver): PHPRC and PHP_INI_SCAN_DIR.",
    LAYER_OF_SCRIPT_SH,
    PHP_INI_SH,
    'toml() { printf \'%s = "%s"\\n\' "$1" "$(printf \'%s\' "$2" | sed \'s/[\\\\"]/\\\\&/g\')"; }',
    '{',
    '  toml PHPRC "$PHPRC"',
    '  [ -z "${PHP_INI_SCAN_DIR+set}" ] || toml PHP_INI_SCAN_DIR "$PHP_INI_SCAN_DIR"',
    '} >&3',
    '',
  ].join('\n');
}
