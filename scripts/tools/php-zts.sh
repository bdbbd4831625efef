#!/usr/bin/env bash
# The thread-safe (ZTS) PHP the application server (FrankenPHP) links against, with the CLI of the
# same build, and every extension of the contract that a reachable source carries, compiled in:
#   scripts/tools/php-zts.sh [LINE]     (default 8.4, the contract's default line; 8.5: see below)
# Installs <cache>/php-zts/<php version>-<recipe>/ (bin/php, bin/php-config, include/, lib/libphp.so,
# etc/php.d/, VERSION) and prints bin/php. <recipe> is a digest of the version set and the configure
# line below, so a change of either is a new folder (a new build) and never a stale one.
#
# Sources, all from Debian's archive (the system's own mirror, scripts/tools/debian-archive.sh), each
# checked against the sha256 Debian's signed indexes give:
# - PHP 8.4.11, the upstream tarball Debian ships as php8.4_8.4.11.orig.tar.xz (Debian's patches are
#   not applied: they adapt PHP to Debian's packaging, e.g. the system's time zone files, which a
#   minimal run image lacks). The contract names 8.4.12, which the archive does not serve (neither
#   do 8.4.13 to 8.4.15); 8.4.11 is the nearest it does. The buildpack's log says so at every build.
# - the PECL extensions, from their Debian source packages (orig tarballs), at the versions Debian
#   builds for PHP 8.4: amqp, apcu, ast, igbinary, imagick, memcache, memcached, redis, ssh2, yaml,
#   zstd; protobuf's PHP extension from Debian's protobuf source (php/ext/google/protobuf).
# Each is put in ext/ and built statically, like the bundled ones (no shared extension to find at
# run time). opcache alone is a shared Zend extension (PHP before 8.5 cannot build it statically),
# loaded by etc/php.d/opcache.ini (the compiled-in scan dir). No JIT, no tests, no docs.
#
# Not built, because no source is reachable here (Debian, PyPI, npm, crates.io; see
# buildpacks/phpserver/README.md): brotli, lz4, parallel, pdo_sqlsrv, xlswriter, xz.
#
# LINE 8.5 (the contract's CC_PHP_VERSION=8.5 server): Debian lists php8.5 only in experimental, and
# the archive serves none of its files, so the script stops with that reason.
#
# Build deps (Debian): see .ci/run (libicu-dev, libmagickwand-dev, libmemcached-dev, ...).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/debian-archive.sh"
line="${1:-8.4}"

case "$line" in
  8.4)
    php_version=8.4.11
    php_source="main/p/php8.4/php8.4_8.4.11.orig.tar.xz 04cd331380a8683a5c2503938eb51764d48d507c53ad4208d2c82e0eed779a00" # php8.4_8.4.11-1.dsc
    ;;
  8.5)
    die "php-zts 8.5: no PHP 8.5 source is reachable: Debian lists php8.5 (8.5.7-1) in experimental only, and its archive serves none of that package's files (404); no other registry reachable here carries PHP's source. An operator provides a FrankenPHP built on PHP 8.5 with RBP_TOOL_FRANKENPHP_8_5=<path>"
    ;;
  *) die "php-zts $line: unknown line (8.4, or 8.5)" ;;
esac

# name  version  pool path  sha256 (Debian's Sources index)  folder in the tarball (for protobuf, the extension's)
pecl=(
  "amqp      2.1.2   main/p/php-amqp/php-amqp_2.1.2.orig.tar.gz               0cb16d63752a0055de55a22062a6c1744908696d92268d76181284669025d993 amqp-2.1.2"
  "apcu      5.1.24  main/p/php-apcu/php-apcu_5.1.24.orig.tar.gz              5c28a55b27082c69657e25b7ecf553e2cf6b74ec3fa77d6b76f4fb982e001e43 apcu-5.1.24"
  "ast       1.1.2   main/p/php-ast/php-ast_1.1.2.orig.tar.gz                 8742427ff7c07ba93f940968f7363972ea040d97d847da3b79b4283c2a369dea ast-1.1.2"
  "igbinary  3.2.16  main/p/php-igbinary/php-igbinary_3.2.16.orig.tar.gz      8bf25d465abc7973d9e2c9a3039a5f8eea635b23bc1477017ff3999ff95836da igbinary-3.2.16"
  "imagick   3.8.0   main/p/php-imagick/php-imagick_3.8.0.orig.tar.gz         bda67461c854f20d6105782b769c524fc37388b75d4481d951644d2167ffeec6 imagick-3.8.0"
  "memcache  8.2     main/p/php-memcache/php-memcache_8.2.orig.tar.gz         b3f0640eacdeb9046c6c86a1546d7fb8a4e9f219e5d9a36a287e59b2dd8208e5 memcache-8.2"
  "memcached 3.3.0   main/p/php-memcached/php-memcached_3.3.0.orig.tar.gz     2b85bf6699497170801fb4d06eb9c9a06bfc551cdead04101dd75c980be9eebf memcached-3.3.0"
  "redis     6.2.0   main/p/php-redis/php-redis_6.2.0.orig.tar.gz             5069c13dd22bd9e494bb246891052cb6cc0fc9a1b45c6a572a8be61773101363 redis-6.2.0"
  "ssh2      1.4.1   main/p/php-ssh2/php-ssh2_1.4.1.orig.tar.gz               7bca5b23f731db9d8ed0aea5db9bb15da8ff133b0fbba96102b82e95da4d8764 ssh2-1.4.1"
  "yaml      2.2.4   main/p/php-yaml/php-yaml_2.2.4.orig.tar.gz               8eb353baf87f15b1b62ac6eb71c8b589685958a1fe8b0e3d22ac59560d0e8913 yaml-2.2.4"
  "zstd      0.14.0  main/p/php-zstd/php-zstd_0.14.0.orig.tar.gz              207a87de60e3a9eb7993d2fc1a2ce88f854330ef29d210f552a60eb4cf3db79c zstd-0.14.0"
  "protobuf  3.21.12 main/p/protobuf/protobuf_3.21.12.orig.tar.gz             930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53 protobuf-3.21.12/php/ext/google/protobuf"
)

# The extensions, as PHP's configure names them. -O1 without -g (PHP_ZTS_CFLAGS overrides it): on 2
# busy cores -O2 with debug info took more than twice as long, and this PHP runs tests and offline
# builds, not production traffic. Zend signals off and max execution timers on, as FrankenPHP's
# docs/compile.md requires (with Zend signals its PHP threads never start).
configure_flags=(
  --enable-zts --enable-embed=shared --disable-zend-signals --enable-zend-max-execution-timers
  --enable-cli --disable-cgi --disable-phpdbg --disable-all
  --enable-ctype --enable-tokenizer --enable-session --enable-filter --enable-mbstring --enable-mbregex
  --enable-opcache --disable-opcache-jit
  --enable-pdo --with-pdo-sqlite --with-sqlite3 --enable-mysqlnd --with-mysqli=mysqlnd --with-pdo-mysql=mysqlnd
  --with-pgsql --with-pdo-pgsql
  --with-libxml --enable-dom --enable-xml --enable-simplexml --enable-xmlreader --enable-xmlwriter --enable-soap
  --with-openssl --with-curl --with-zlib --with-bz2 --enable-phar --enable-posix --enable-pcntl --with-iconv
  --enable-fileinfo --enable-bcmath --enable-sockets --enable-calendar --enable-dba --enable-exif --enable-ftp
  --enable-gd --with-jpeg --with-webp --with-freetype --with-gmp --with-gettext --enable-intl
  --with-ldap --with-ldap-sasl --with-password-argon2 --with-libedit --enable-shmop --with-sodium
  --enable-sysvmsg --enable-sysvsem --enable-sysvshm --with-tidy --with-zip
  --enable-apcu --enable-ast --enable-igbinary
  --enable-redis --enable-redis-igbinary --enable-redis-zstd --with-libzstd
  --enable-memcached --enable-memcached-session --enable-memcached-igbinary --enable-memcached-json --enable-memcached-sasl
  --enable-memcache --with-imagick --with-amqp --with-ssh2 --with-yaml --enable-zstd --enable-protobuf
)
cflags="${PHP_ZTS_CFLAGS:--O1}"

# The contract's extensions this build carries, as `php -m` names them (mbregex and password-argon2
# are features of mbstring and standard, checked by what they define); checked after the build.
expected_modules="amqp apcu ast bcmath bz2 calendar ctype curl dba dom exif fileinfo filter ftp gd gmp gettext iconv igbinary imagick intl ldap mbstring memcache memcached mysqli mysqlnd openssl pcntl pdo pdo_mysql pdo_pgsql pdo_sqlite pgsql phar posix protobuf readline redis session shmop simplexml soap sockets sodium sqlite3 ssh2 sysvmsg sysvsem sysvshm tidy tokenizer xml xmlreader xmlwriter zip zlib yaml zstd"

recipe="$(printf '%s\n' "$php_version $php_source" "${pecl[@]}" "${configure_flags[*]}" "CFLAGS=$cflags" | sha256sum | cut -c1-8)"
key="$php_version-$recipe"
tool_cached php-zts "$key" bin/php && exit 0
for cmd in make cc c++ pkg-config autoconf bison re2c /usr/lib/apt/apt-helper; do
  command -v "$cmd" >/dev/null || die "php-zts $line: needs $cmd (apt-get install build-essential autoconf bison re2c pkg-config apt)"
done
tool_stage php-zts "$key" >/dev/null
stage="$STAGE"
home="$(tool_home php-zts "$key")"
work="$(mktemp -d "${TMPDIR:-/tmp}/rbp-php-zts.XXXXXX")"
trap 'rm -rf "$work" "$stage"' EXIT
start=$(date +%s)

say "php-zts $line: PHP $php_version and ${#pecl[@]} PECL extensions from Debian's archive"
read -r path sha <<<"$php_source"
debian_pool_fetch "$work/php.tar.xz" "$path" "$sha"
tar -xJf "$work/php.tar.xz" -C "$work"
src="$work/php-$php_version"
[ -x "$src/buildconf" ] || die "php-zts $line: php-$php_version/buildconf is missing from the tarball"
for entry in "${pecl[@]}"; do
  read -r name version path sha folder <<<"$entry"
  debian_pool_fetch "$work/$name.tar.gz" "$path" "$sha"
  mkdir -p "$work/pecl-$name"
  tar -xzf "$work/$name.tar.gz" -C "$work/pecl-$name" "$folder"
  [ -f "$work/pecl-$name/$folder/config.m4" ] || die "php-zts $line: $name $version has no config.m4 in $folder"
  mv "$work/pecl-$name/$folder" "$src/ext/$name"
done
# protobuf's extension compiles the UTF-8 validator that sits at the top of protobuf's source
# (its PECL package carries a copy beside the extension).
tar -xzf "$work/protobuf.tar.gz" -C "$work/pecl-protobuf" protobuf-3.21.12/third_party/utf8_range
mkdir -p "$src/ext/protobuf/third_party"
mv "$work/pecl-protobuf/protobuf-3.21.12/third_party/utf8_range" "$src/ext/protobuf/third_party/"
# memcache's build file tells a PECL build from a PHP-tree one by a src/ folder beside PHP's own
# sources; in the tree it is beside its own.
sed -i 's|^  if test -d \$abs_srcdir/src ; then|  if test -d "$abs_srcdir/ext/memcache/src"; then subdir=src; AC_MSG_RESULT([in the PHP tree]); elif test -d $abs_srcdir/src ; then|' "$src/ext/memcache/config9.m4"
grep -q 'in the PHP tree' "$src/ext/memcache/config9.m4" || die "php-zts $line: memcache's config9.m4 no longer has the line this script adapts"
# The PHP tree includes each static extension's php_<name>.h from the extension's folder
# (build/genif.sh looks there for the phpext_ pointer); memcache keeps it in src/.
printf '/* phpext_memcache_ptr: see src/php_memcache.h (rbp scripts/tools/php-zts.sh) */\n#include "src/php_memcache.h"\n' > "$src/ext/memcache/php_memcache.h"

cd "$src" || exit
say "php-zts $line: buildconf and configure (PHP $php_version, ZTS, embed + cli)"
./buildconf --force >"$work/buildconf.log" 2>&1 || { tail -20 "$work/buildconf.log" >&2; die "php-zts $line: buildconf failed (autoconf missing?)"; }
# Configured for its final folder (php-config, the extension dir and the ini scan dir name it),
# installed into the staging folder.
CFLAGS="$cflags" CXXFLAGS="$cflags" ./configure --prefix="$home" --with-config-file-scan-dir="$home/etc/php.d" "${configure_flags[@]}" \
  >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log" >&2; die "php-zts $line: configure failed (a missing -dev package? .ci/run lists them)"; }

say "php-zts $line: make -j${RBP_TOOLS_JOBS:-2} (the longest step)"
make -j"${RBP_TOOLS_JOBS:-2}" >"$work/make.log" 2>&1 || { grep -E 'error' "$work/make.log" | head -20 >&2; tail -20 "$work/make.log" >&2; die "php-zts $line: make failed"; }
make install INSTALL_ROOT="$work/root" >"$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; die "php-zts $line: make install failed"; }
cp -a "$work/root$home/." "$stage/"
rm -rf "$stage/php/man" "$stage/man"
ext_dir="$("$stage/bin/php-config" --extension-dir)"
[ -f "$work/root$ext_dir/opcache.so" ] || die "php-zts $line: opcache.so was not installed in $ext_dir"
mkdir -p "$stage/etc/php.d"
printf 'zend_extension=opcache\n' > "$stage/etc/php.d/10-opcache.ini"
printf '%s\n' "$php_version" > "$stage/VERSION"
printf '%s\n' "PHP $php_version (Debian php8.4_$php_version.orig.tar.xz)" "${pecl[@]}" > "$stage/SOURCES"

# Checked in the staging folder, its scan dir and extension dir pointed there (they name the final folder).
cd /
php="$stage/bin/php"
stage_ext="$stage${ext_dir#"$home"}"
run_php() { PHP_INI_SCAN_DIR="$stage/etc/php.d" "$php" -d extension_dir="$stage_ext" "$@"; }
run_php -r 'exit(PHP_ZTS ? 0 : 1);' || die "php-zts $line: the built PHP is not thread-safe"
[ -f "$stage/lib/libphp.so" ] || die "php-zts $line: the embed library lib/libphp.so was not installed"
missing="$(run_php -r '
  $m = array_map("strtolower", array_merge(get_loaded_extensions(), get_loaded_extensions(true)));
  $out = [];
  foreach (explode(" ", $argv[1]) as $e) if (!in_array($e, $m, true)) $out[] = $e;
  if (!in_array("zend opcache", $m, true)) $out[] = "opcache";
  if (!function_exists("mb_ereg")) $out[] = "mbregex";
  if (!defined("PASSWORD_ARGON2ID")) $out[] = "password-argon2";
  echo implode(" ", $out);' "$expected_modules")"
[ -z "$missing" ] || die "php-zts $line: the built PHP lacks: $missing"
say "php-zts $line: PHP $php_version built in $(( $(date +%s) - start )) s"
trap 'rm -rf "$work"' EXIT
tool_commit php-zts "$key" bin/php
