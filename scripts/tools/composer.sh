#!/usr/bin/env bash
# Composer 2.8 from Debian's trixie packages (Debian 12's own composer is 2.5.5, which crashes on
# PHP 8.4): scripts/tools/composer.sh [VERSION]   (default 2.8.8, the 2.8 release trixie carries)
# Installs <cache>/composer/<version>/ and prints bin/composer, a PHP script: `php bin/composer ...`
# runs it on any PHP >= 8.1 (the tests and the buildpack run it on the server's own PHP CLI).
#
# Source: the arch-independent packages `composer` and the PHP libraries it depends on (Symfony
# components, composer/*, seld/*, justinrainbow/json-schema, psr/*, react/promise), downloaded by
# apt from the system's own Debian mirror through a private apt configuration (the system's sources
# and installed packages are untouched) and checked by apt against trixie's signed index. Debian
# installs them into /usr/share/php with absolute requires between them; here they keep Debian's
# layout (share/php beside bin/) and those few requires are made relative to the file.
# Needs apt, dpkg-deb and Debian's mirror.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/debian-archive.sh"
version="${1:-2.8.8}"
tool_cached composer "$version" bin/composer && exit 0
command -v dpkg-deb >/dev/null || die "composer $version: needs dpkg-deb (apt-get install dpkg)"
tool_stage composer "$version" >/dev/null
stage="$STAGE"
work="$(mktemp -d "${TMPDIR:-/tmp}/rbp-composer.XXXXXX")"
trap 'rm -rf "$work" "$stage"' EXIT

export APT_CONFIG
APT_CONFIG="$(debian_apt_config "$work/apt" "deb @ARCHIVE@ trixie main" "deb @ARCHIVE@ trixie-updates main")"
say "composer $version: Debian trixie's package lists (a private apt configuration)"
apt-get update -q >"$work/update.log" 2>&1 || { tail -5 "$work/update.log" >&2; die "composer $version: apt-get update of trixie's lists failed"; }
debver="$(apt-cache madison composer | awk -v v="$version" '$3 ~ "^"v"-" {print $3; exit}')"
[ -n "$debver" ] || die "composer $version: trixie has no composer $version (it lists: $(apt-cache madison composer | awk '{print $3}' | tr '\n' ' '))"

# The arch-independent packages composer 2.8.8 depends on, recursively (apt-cache depends --recurse,
# stopping at PHP itself: php-cli, php-common and the php8.4-* extensions are architecture-specific,
# and the PHP that runs Composer is the caller's).
pkgs=(
  jsonlint php-composer-ca-bundle php-composer-class-map-generator php-composer-metadata-minifier
  php-composer-pcre php-composer-semver php-composer-spdx-licenses php-composer-xdebug-handler php-enum
  php-json-schema php-psr-container php-psr-log php-react-promise php-seld-signal-handler
  php-symfony-console php-symfony-deprecation-contracts php-symfony-filesystem php-symfony-finder
  php-symfony-process php-symfony-service-contracts php-symfony-string
)
say "composer $version: downloading composer=$debver and ${#pkgs[@]} libraries"
mkdir -p "$work/debs" "$work/root"
(cd "$work/debs" && apt-get download -q "composer=$debver" "${pkgs[@]}" >"$work/download.log" 2>&1) \
  || { tail -5 "$work/download.log" >&2; die "composer $version: apt-get download failed"; }
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done

mkdir -p "$stage/bin" "$stage/share"
cp -a "$work/root/usr/share/php" "$stage/share/php"
sed '1s|^#!.*|#!/usr/bin/env php|' "$work/root/usr/bin/composer" > "$stage/bin/composer"
chmod 755 "$stage/bin/composer"
grep -q "__DIR__ . '/../share/php/Composer/autoload.php'" "$stage/bin/composer" || die "composer $version: bin/composer does not load ../share/php/Composer/autoload.php"
# `require_once '/usr/share/php/X/autoload.php'` → relative to the file: dirname(__DIR__, depth) is share/php.
while IFS= read -r -d '' f; do
  rel="${f#"$stage/share/php/"}"
  depth="$(awk -F/ '{print NF-1}' <<<"$rel")"
  sed -i "s|'/usr/share/php/|\\\\dirname(__DIR__, $depth) . '/|g" "$f"
done < <(grep -rlZ --include='*.php' "'/usr/share/php/" "$stage/share/php")
! grep -rq --include='*.php' "'/usr/share/php/" "$stage/share/php" || die "composer $version: absolute /usr/share/php requires are left"
printf '%s\n' "composer $debver (Debian trixie)" "${pkgs[@]}" > "$stage/SOURCES"

php="$(command -v php || true)"
if [ -n "$php" ]; then
  out="$("$php" "$stage/bin/composer" --version 2>&1)" || die "composer $version: does not run on $php: $out"
  case "$out" in *"Composer version $version "*) ;; *) die "composer $version: reports: $out" ;; esac
fi
cd /
trap 'rm -rf "$work"' EXIT
tool_commit composer "$version" bin/composer
