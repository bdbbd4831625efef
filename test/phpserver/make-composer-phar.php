<?php
// Packs Debian's Composer (the system one the tests use) as a composer.phar, for the fixture that
// checks a project's own composer.phar is the Composer the build runs. The phar holds Debian's entry
// script with its autoloader path made absolute; the Composer code it runs is the real one.
// Usage: php -d phar.readonly=0 make-composer-phar.php <system composer script> <out composer.phar>
[$self, $system, $out] = $argv;
$entry = file_get_contents($system);
$entry = preg_replace('/^#!.*\n/', '', $entry);
$autoload = realpath(dirname($system) . '/../share/php/Composer/autoload.php');
if ($autoload === false) {
    fwrite(STDERR, "no Composer autoloader beside {$system}\n");
    exit(1);
}
$entry = str_replace("__DIR__ . '/../share/php/Composer/autoload.php'", var_export($autoload, true), $entry);
@unlink($out);
$phar = new Phar($out, 0, 'composer.phar');
$phar->addFromString('bin/composer', $entry);
$phar->setStub("#!/usr/bin/env php\n<?php\nPhar::mapPhar('composer.phar');\nrequire 'phar://composer.phar/bin/composer';\n__HALT_COMPILER();\n");
echo "wrote {$out}\n";
