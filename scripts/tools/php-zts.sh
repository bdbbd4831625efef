#!/usr/bin/env bash
# A minimal thread-safe (ZTS) PHP with the embed SAPI, the library FrankenPHP links against:
#   scripts/tools/php-zts.sh [SERIES]      (default 8.2, the only series Debian 12 ships)
# Installs <cache>/php-zts/<series>/ (bin/php, bin/php-config, include/, lib/libphp.so); the exact
# version built is in <cache>/php-zts/<series>/VERSION. Used by scripts/tools/frankenphp.sh.
#
# Source: Debian's source package `php<series>` (`apt-get source`, needs a deb-src entry and
# dpkg-dev), so the PHP is the one Debian patches and supports. Debian's own PHP is not ZTS and
# has no embed SAPI, hence this build. The contract's PHP 8.4.12 is not obtainable here (no
# registry this project reaches ships it): the server runs PHP 8.2 in tests, and the buildpack's
# log says so. All extensions are compiled in (no shared extension to find at run time): the common
# basics and what the fixtures and tests need; nothing else, to keep the build short on 2 cores.
# Build deps (Debian): build-essential pkg-config bison re2c libxml2-dev libsqlite3-dev libssl-dev
# libcurl4-openssl-dev zlib1g-dev libonig-dev (`apt-get build-dep php8.2` installs them all).
source "$(dirname "$0")/lib.sh"
series="${1:-8.2}"
tool_cached php-zts "$series" bin/php && exit 0
for cmd in apt-get dpkg-source make cc pkg-config; do
  command -v "$cmd" >/dev/null || die "php-zts $series: needs $cmd (apt-get install dpkg-dev build-essential pkg-config)"
done
tool_stage php-zts "$series" >/dev/null
stage="$STAGE"
work="$(mktemp -d "${TMPDIR:-/tmp}/rbp-php-zts.XXXXXX")"
trap 'rm -rf "$work" "$stage"' EXIT

# `apt-get source php8.2` takes the newest version the deb-src lists name; a mirror may lack that
# one's files (the security pool lagging behind its index), so each listed version is tried in turn.
cd "$work"
versions="$(apt-cache showsrc "php$series" 2>/dev/null | sed -n 's/^Version: //p' | sort -rV | uniq)"
[ -n "$versions" ] || die "php-zts $series: apt-cache showsrc php$series lists nothing: add a deb-src entry for the system's suites and run apt-get update"
got=""
for v in $versions; do
  say "php-zts $series: apt-get source php$series=$v"
  if apt-get source -q "php$series=$v" >"$work/apt.log" 2>&1; then got="$v"; break; fi
  say "php-zts $series: $(grep -m1 '^E: ' "$work/apt.log" || tail -1 "$work/apt.log")"
done
[ -n "$got" ] || die "php-zts $series: apt-get source could not fetch any of: $(echo $versions)"
src="$(find "$work" -maxdepth 1 -mindepth 1 -type d -name "php$series-*" | head -1)"
[ -x "$src/configure" ] || die "php-zts $series: the source of php$series=$got has no configure script"
upstream="$(basename "$src")"; upstream="${upstream#php$series-}"

say "php-zts $series: configure PHP $upstream (Debian $got), ZTS + embed"
cd "$src"
# -O1 without -g (PHP_ZTS_CFLAGS overrides it): on 2 busy cores -O2 with debug info took more than
# twice as long, and the server runs tests, not production traffic. opcache without its JIT: the
# JIT is one huge file that is slow to compile and no test needs it. Zend signals off and max
# execution timers on, as FrankenPHP's docs/compile.md requires: with Zend signals the server's PHP
# threads never start (ts_resource_ex loops), and nothing listens.
# Configured for its final folder (php-config prints it), installed into the staging folder.
home="$(tool_home php-zts "$series")"
CFLAGS="${PHP_ZTS_CFLAGS:--O1}" ./configure --prefix="$home" \
  --enable-zts --enable-embed=shared --disable-zend-signals --enable-zend-max-execution-timers --enable-cli --disable-cgi --disable-phpdbg --disable-all --without-pear \
  --enable-ctype --enable-tokenizer --enable-session --enable-filter --enable-mbstring --enable-opcache --disable-opcache-jit \
  --enable-pdo --with-pdo-sqlite --with-sqlite3 --with-libxml --enable-dom --enable-xml --enable-simplexml \
  --enable-xmlreader --enable-xmlwriter --with-openssl --with-curl --with-zlib --enable-phar --enable-posix \
  --enable-pcntl --with-iconv --enable-fileinfo --enable-bcmath --enable-sockets \
  >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log" >&2; die "php-zts $series: configure failed (missing build deps? apt-get build-dep php$series)"; }

say "php-zts $series: make -j${RBP_TOOLS_JOBS:-2} (the longest step)"
make -j"${RBP_TOOLS_JOBS:-2}" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; die "php-zts $series: make failed"; }
make install INSTALL_ROOT="$work/root" >"$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; die "php-zts $series: make install failed"; }
cp -a "$work/root$home/." "$stage/"
# Debian's patches leave @DEBIAN_PHP_API@ in php-config and phpize for its packaging to fill in (its
# headers live in include/php/<api>/); this build installs them in include/php/, as upstream does.
api="$(sed -n 's/^#define PHP_API_VERSION \([0-9]*\).*/\1/p' "$stage/include/php/main/php.h")"
sed -i -e 's|/@DEBIAN_PHP_API@||g' -e "s|@DEBIAN_PHP_API@|$api|g" "$stage/bin/php-config" "$stage/bin/phpize"
printf '%s\n' "$upstream" > "$stage/VERSION"

LD_LIBRARY_PATH="$stage/lib" "$stage/bin/php" -r 'exit(PHP_ZTS ? 0 : 1);' || die "php-zts $series: the built PHP is not thread-safe"
[ -f "$stage/lib/libphp.so" ] || die "php-zts $series: the embed library lib/libphp.so was not installed"
[ -f "$("$stage/bin/php-config" --include-dir | sed "s|^$home|$stage|")/main/php_variables.h" ] || die "php-zts $series: php-config --include-dir does not name the installed headers"
cd /
trap 'rm -rf "$work"' EXIT
tool_commit php-zts "$series" bin/php
