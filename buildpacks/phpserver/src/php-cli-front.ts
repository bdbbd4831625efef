/**
 * The PHP source `bin/php` runs on the server's php-cli sub-command when the server has no PHP CLI beside
 * it (php-command.ts): PHP's CLI options over the embed SAPI. Kept as text so the bundle carries it.
 */
export const PHP_CLI_FRONT = String.raw`<?php
// php for an application server that has no PHP CLI beside it (an upstream release binary): PHP's
// CLI options over the server's own php-cli sub-command, which runs a script and nothing else.
// Written into the php layer by rbp/phpserver (php-command.ts); bin/php runs
// "<server> php-cli <this file> <arguments>". -v, -m, -i, -r, -d, -f, "-", a script on stdin and
// exit codes behave as PHP's CLI; PHP_BINARY (the environment variable Composer's @php reads) names
// bin/php. Options that only a CLI binary can honour (-n, -c, -S, -a ...) are refused, by name.
$args = array_slice($_SERVER['argv'], 1);
$mode = 'run';
$code = null;
$file = null;
$ini = [];
while ($args) {
    $a = $args[0];
    if ($a === '--') {
        array_shift($args);
        break;
    }
    if ($a === '' || $a[0] !== '-' || $a === '-') {
        $file = array_shift($args);
        break;
    }
    array_shift($args);
    if ($a === '-v' || $a === '--version') {
        $mode = 'version';
    } elseif ($a === '-m' || $a === '--modules') {
        $mode = 'modules';
    } elseif ($a === '-i' || $a === '--info') {
        $mode = 'info';
    } elseif ($a === '-r' || $a === '--run') {
        $code = array_shift($args);
        break;
    } elseif ($a === '-f' || $a === '--file') {
        $file = array_shift($args);
        break;
    } elseif ($a === '-d' || $a === '--define') {
        $ini[] = array_shift($args) ?? '';
    } elseif (str_starts_with($a, '-d')) {
        $ini[] = substr($a, 2);
    } else {
        fwrite(fopen('php://stderr', 'w'), "php: option $a needs a PHP CLI, and this application server has none (only its php-cli sub-command); the operator can provide one (RBP_TOOL_PHP)\n");
        exit(1);
    }
}
foreach ($ini as $setting) {
    [$key, $value] = array_pad(explode('=', $setting, 2), 2, '1');
    if (ini_set(trim($key), trim($value)) === false && ini_get(trim($key)) !== trim($value)) {
        fwrite(fopen('php://stderr', 'w'), "php: -d $setting cannot be set at run time on this application server\n");
    }
}
switch ($mode) {
    case 'version':
        printf("PHP %s (cli) (%s)\nCopyright (c) The PHP Group\nZend Engine v%s, Copyright (c) Zend Technologies\n", PHP_VERSION, PHP_ZTS ? 'ZTS' : 'NTS', zend_version());
        if (extension_loaded('Zend OPcache')) {
            printf("    with Zend OPcache v%s, Copyright (c), by Zend Technologies\n", phpversion('Zend OPcache'));
        }
        exit(0);
    case 'modules':
        $modules = get_loaded_extensions();
        natcasesort($modules);
        echo "[PHP Modules]\n", implode("\n", $modules), "\n\n[Zend Modules]\n", implode("\n", get_loaded_extensions(true)), "\n\n";
        exit(0);
    case 'info':
        // The embed SAPI prints phpinfo() as HTML; the CLI prints "name => local => master" lines.
        ob_start();
        phpinfo();
        $info = ob_get_clean();
        if (stripos($info, '<html') !== false) {
            $info = preg_replace(['#<head>.*?</head>#s', '#<h[12][^>]*>(.*?)</h[12]>#s', '#</t[dh]>\s*<t[dh][^>]*>#', '#</tr>#'], ['', "\n$1\n", ' => ', "\n"], $info);
            $info = html_entity_decode(strip_tags($info), ENT_QUOTES);
            $info = preg_replace("/\n[ \t]*\n+/", "\n\n", $info);
        }
        echo trim($info), "\n";
        exit(0);
}
unset($mode, $ini, $a, $setting, $key, $value, $modules);
if ($code !== null) {
    $_SERVER['argv'] = $argv = ['Standard input code', ...$args];
    $_SERVER['argc'] = $argc = count($argv);
    unset($args, $file);
    eval($code);
    return;
}
if ($file === null || $file === '-') {
    $_SERVER['argv'] = $argv = ['Standard input code', ...$args];
    $_SERVER['argc'] = $argc = count($argv);
    unset($args, $file, $code);
    eval('?>' . file_get_contents('php://stdin'));
    return;
}
if (!is_file($file)) {
    fwrite(fopen('php://stderr', 'w'), "Could not open input file: $file\n");
    exit(1);
}
$_SERVER['argv'] = $argv = [$file, ...$args];
$_SERVER['argc'] = $argc = count($argv);
$_SERVER['SCRIPT_FILENAME'] = $_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = $file;
unset($args, $code);
require $file;
`;
