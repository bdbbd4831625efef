#!/usr/bin/env bash
# FrankenPHP (the PHP application server) built from the Go module proxy with cgo, linked against the
# thread-safe PHP of scripts/tools/php-zts.sh, with that PHP's CLI beside it:
#   scripts/tools/frankenphp.sh [VERSION]     (default 1.11.1, the default line; 1.12.2: the 8.5 line)
# Installs <cache>/frankenphp/<version>-php<php folder>/ and prints bin/frankenphp:
#   bin/frankenphp   the server; `frankenphp version` prints `FrankenPHP v<version> PHP <php> Caddy v<caddy>`
#   bin/php          the PHP CLI of the same build (the buildpack's `php` runs it: see
#                    buildpacks/phpserver/README.md), same PHP, same extensions
#   lib/             libphp.so and the shared libraries both link that are not part of glibc (ICU,
#                    ImageMagick, libpq, ...), found through their rpath ($ORIGIN/../lib), so the
#                    folder runs in a run image that has only glibc (and libstdc++)
# opcache (a shared Zend extension before PHP 8.5) and its ini stay in the php-zts folder the build
# names (its compiled-in scan dir): moved elsewhere without it, the server runs without opcache.
# Needs Go, a C compiler, patchelf, libbrotli-dev and what php-zts.sh needs.
#
# Versions. The contract names FrankenPHP 1.9.1 (Caddy 2.10.2) for the default line, and 1.12.3
# (PHP 8.5, Caddy 2.11.3) for CC_PHP_VERSION=8.5. The Go module proxy reachable here serves
# FrankenPHP's Caddy module (github.com/dunglas/frankenphp/caddy) at v1.11.1, v1.12.2 and v1.12.6
# only: v1.9.1 is missing (404), v1.9.0, v1.10.x, v1.11.0, v1.11.2+, v1.12.0 and v1.12.3 are refused
# (403), and the v1.11.1 module does not compile against the v1.9.1 library (it uses ten functions
# 1.9.1 lacks). So:
# - default line: 1.11.1, which requires Caddy 2.10.2, the contract's, on PHP 8.4 (php-zts.sh 8.4);
# - 8.5 line: 1.12.2, the nearest to 1.12.3, with Caddy raised to the contract's 2.11.3, on PHP 8.5
#   (php-zts.sh 8.5), which stops: no PHP 8.5 source is reachable here.
# The build log and the buildpack's log (RBP_TOOL_FRANKENPHP) both say how the server differs.
# The sum database has no entry for github.com/dunglas/frankenphp (it answers 404), so that one
# module path is exempt (GONOSUMDB); every other module is checked against the go.sum that
# FrankenPHP's Caddy module publishes, and the sum database.
#
# Cold build time: see scripts/tools/README.md (php-zts.sh is most of it; the Go part from a cold Go
# cache takes about 10 min on 2 busy cores). With both cache folders present the script is a no-op.
source "$(dirname "$0")/lib.sh"
version="${1:-1.11.1}"
case "$version" in
  1.12.*) line=8.5; caddy_version=2.11.3; contract=1.12.3 ;;
  1.11.*) line=8.4; caddy_version=2.10.2; contract=1.9.1 ;;
  *) die "frankenphp $version: unknown version (1.11.1 for the default line, 1.12.2 for CC_PHP_VERSION=8.5)" ;;
esac
command -v go >/dev/null || die "frankenphp $version: needs Go (go not found on PATH)"
command -v cc >/dev/null || die "frankenphp $version: needs a C compiler (apt-get install build-essential)"
command -v patchelf >/dev/null || die "frankenphp $version: needs patchelf (apt-get install patchelf)"
command -v patch >/dev/null || die "frankenphp $version: needs patch (apt-get install patch)"
pkg-config --exists libbrotlienc libbrotlidec 2>/dev/null || die "frankenphp $version: needs libbrotli-dev (apt-get install libbrotli-dev pkg-config)"

# RBP_PHP_ZTS: the bin/php of a ZTS PHP with the embed SAPI built elsewhere (an operator's), instead of php-zts.sh's.
if [ -n "${RBP_PHP_ZTS:-}" ]; then
  php="$RBP_PHP_ZTS"
  [ -x "$php" ] && [ -x "$(dirname "$php")/php-config" ] || die "frankenphp $version: RBP_PHP_ZTS=$php is not a PHP bin/php with php-config beside it"
else
  php="$("$(dirname "$0")/php-zts.sh" "$line" | tail -n 1)" || die "frankenphp $version: the thread-safe PHP $line could not be built (see above)"
fi
phpdir="$(dirname "$(dirname "$php")")"
phpconfig="$phpdir/bin/php-config"
phpversion="$("$phpconfig" --version)"
# The patches of scripts/tools/patches/frankenphp-<version>-*.patch, applied to FrankenPHP's library
# module; their digest is part of the cache key, so a new or changed patch gives a new build.
patches=("$(cd "$(dirname "$0")" && pwd)"/patches/frankenphp-"$version"-*.patch)
[ -e "${patches[0]}" ] || patches=()
patched=""
[ ${#patches[@]} -eq 0 ] || patched="-p$(cat "${patches[@]}" | sha256sum | cut -c1-8)"
key="$version-php$(basename "$phpdir")$patched"
tool_cached frankenphp "$key" bin/frankenphp && exit 0

tool_stage frankenphp "$key" >/dev/null
stage="$STAGE"
work="$(mktemp -d "${TMPDIR:-/tmp}/rbp-frankenphp.XXXXXX")"
trap 'rm -rf "$work" "$stage"' EXIT
start=$(date +%s)
[ "$version" = "$contract" ] || say "frankenphp $version: the contract's server for this line is $contract; the Go module proxy serves its Caddy module at 1.11.1, 1.12.2 and 1.12.6 only: building $version (Caddy $caddy_version, PHP $phpversion)"

export GOFLAGS=-mod=mod GONOSUMDB=github.com/dunglas/frankenphp GOTOOLCHAIN=local
mod=github.com/dunglas/frankenphp/caddy
say "frankenphp $version: $mod@v$version from the Go module proxy"
cd "$work" || exit
moddir="$(go mod download -json "$mod@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$moddir" ] && [ -f "$moddir/frankenphp/main.go" ] \
  || die "frankenphp $version: $mod@v$version is not on the Go module proxy (it serves 1.11.1, 1.12.2 and 1.12.6)"
# Upstream's own main package (caddy/frankenphp/main.go) in a module of ours: `go install pkg@version`
# refuses the Caddy module because its go.mod has a replace directive.
cp "$moddir/frankenphp/main.go" main.go
cp "$moddir/go.sum" go.sum
chmod u+w main.go go.sum
printf 'module rbp.local/frankenphp\n\ngo 1.25\n\nrequire %s v%s\n' "$mod" "$version" > go.mod
# FrankenPHP's library with our patches, in place of the proxy's (a replace of the main module wins).
if [ ${#patches[@]} -gt 0 ]; then
  libdir="$(go mod download -json "github.com/dunglas/frankenphp@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$libdir" ] || die "frankenphp $version: github.com/dunglas/frankenphp@v$version is not on the Go module proxy"
  cp -r "$libdir" lib && chmod -R u+w lib
  for p in "${patches[@]}"; do
    say "frankenphp $version: applying $(basename "$p")"
    patch -d lib -p1 --batch --forward < "$p" >&2 || die "frankenphp $version: $(basename "$p") does not apply (see above)"
  done
  printf '\nreplace github.com/dunglas/frankenphp => ./lib\n' >> go.mod
fi
go mod tidy >&2 || die "frankenphp $version: go mod tidy failed (see above)"
if ! grep -q "github.com/caddyserver/caddy/v2 v$caddy_version\b" go.mod; then
  go get "github.com/caddyserver/caddy/v2@v$caddy_version" >&2 && go mod tidy >&2 || die "frankenphp $version: Caddy $caddy_version could not be required (see above)"
fi
caddy="$(sed -n 's/^[[:space:]]*github.com\/caddyserver\/caddy\/v2 \(v[^ ]*\).*/\1/p' go.mod)"
[ "$caddy" = "v$caddy_version" ] || die "frankenphp $version: the module graph has Caddy $caddy, not $caddy_version"

say "frankenphp $version: go build with cgo (PHP $phpversion, Caddy $caddy)"
# Tags as upstream documents for a lean build: no Badger/MySQL/PostgreSQL storage drivers (from
# smallstep's nosql), no file watcher (it needs the e-dant/watcher C library, not packaged here).
# The rpath is DT_RPATH (--disable-new-dtags), which also serves libphp.so's own dependencies.
CGO_ENABLED=1 \
CGO_CFLAGS="$("$phpconfig" --includes)" \
CGO_LDFLAGS="-L$phpdir/lib $("$phpconfig" --ldflags) $("$phpconfig" --libs) -Wl,--disable-new-dtags -Wl,-rpath,\$ORIGIN/../lib" \
  go build -trimpath -tags nobadger,nomysql,nopgx,nowatcher \
    -ldflags "-w -s -X 'github.com/caddyserver/caddy/v2.CustomVersion=FrankenPHP v$version PHP $phpversion Caddy'" \
    -o "$stage/bin/frankenphp" . >&2 \
  || die "frankenphp $version: go build failed (see above)"
mkdir -p "$stage/lib"
cp -a "$phpdir/lib/libphp.so" "$stage/lib/"
cp -a "$php" "$stage/bin/php"
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/bin/php"
patchelf --force-rpath --set-rpath '$ORIGIN' "$stage/lib/libphp.so"

# The shared libraries outside glibc (and libstdc++, which every run image has), beside them.
for exe in "$stage/bin/frankenphp" "$stage/bin/php" "$stage/lib/libphp.so"; do
  ldd "$exe" | sed -n 's/^[[:space:]]*\([^ ]*\) => \(\/[^ ]*\) .*/\1 \2/p'
done | sort -u | while read -r name file; do
  case "$name" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*|libphp.so) continue ;;
  esac
  [ -e "$stage/lib/$name" ] || cp -L "$file" "$stage/lib/$name"
done
bundled="$(find "$stage/lib" -maxdepth 1 -name '*.so*' ! -name libphp.so | wc -l)"

out="$("$stage/bin/frankenphp" version 2>&1)" || die "frankenphp $version: the built binary does not run: $out"
case "$out" in "FrankenPHP v$version PHP $phpversion Caddy $caddy"*) ;; *) die "frankenphp $version: the built binary reports: $out" ;; esac
cli="$("$stage/bin/php" -r 'echo PHP_VERSION;' 2>&1)" || die "frankenphp $version: the PHP CLI does not run: $cli"
[ "$cli" = "$phpversion" ] || die "frankenphp $version: the PHP CLI reports $cli, not $phpversion"
say "frankenphp $version: built in $(( $(date +%s) - start )) s ($bundled shared libraries bundled in lib/)"
cd /
trap 'rm -rf "$work"' EXIT
tool_commit frankenphp "$key" bin/frankenphp
