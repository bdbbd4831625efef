#!/usr/bin/env bash
# FrankenPHP (the PHP application server) built from the Go module proxy with cgo, linked against a
# minimal thread-safe PHP built from Debian's source (scripts/tools/php-zts.sh):
#   scripts/tools/frankenphp.sh [VERSION]     (default 1.11.1, see "Version" below)
# Installs <cache>/frankenphp/<version>/bin/frankenphp, with the PHP it runs (libphp.so) in
# <cache>/frankenphp/<version>/lib/ (found through the executable's rpath, $ORIGIN/../lib).
# `frankenphp version` prints `FrankenPHP v<version> PHP <php> Caddy v<caddy> …` like upstream's.
# Needs Go, a C compiler, libbrotli-dev and what php-zts.sh needs.
#
# Version. The contract names FrankenPHP 1.9.1 (Caddy 2.10.2). Its Caddy module,
# github.com/dunglas/frankenphp/caddy@v1.9.1, is not on the Go module proxy (404), only the library
# github.com/dunglas/frankenphp@v1.9.1 is; and the v1.11.1 Caddy module does not compile against
# the 1.9.1 library (it uses ten functions 1.9.1 lacks: WithWorkerMaxThreads, WithHotReload, …).
# The proxy serves the Caddy module at v1.11.1 (other versions are refused on this workplace), and
# it requires Caddy 2.10.2, the Caddy the contract names for this server. So 1.11.1 is the default:
# the buildpack then logs that the operator's FrankenPHP is 1.11.1, not the contract's 1.9.1, and
# that its PHP is 8.2, not 8.4.12.
# The sum database has no entry for github.com/dunglas/frankenphp (it answers 404), so that one
# module path is exempt (GONOSUMDB); every other module is checked against the go.sum that
# FrankenPHP's Caddy module publishes, and the sum database.
#
# Cold build time, measured on the 2-core project machine: php-zts.sh (apt-get source, configure,
# make -j2, install) 26 min while other builds shared the machine (load average about 15), and the
# whole script 4 min 18 s on a quieter machine with Go's build cache already warm; the Go part from
# a cold Go cache took about 10 min under load (module downloads about 1 min, compiling Caddy, its
# modules and FrankenPHP's cgo about 9). Budget 40 min on a new, busy CI machine. With both cache
# folders present the script is a no-op.
source "$(dirname "$0")/lib.sh"
version="${1:-1.11.1}"
tool_cached frankenphp "$version" bin/frankenphp && exit 0
command -v go >/dev/null || die "frankenphp $version: needs Go (go not found on PATH)"
command -v cc >/dev/null || die "frankenphp $version: needs a C compiler (apt-get install build-essential)"
pkg-config --exists libbrotlienc libbrotlidec 2>/dev/null || die "frankenphp $version: needs libbrotli-dev (apt-get install libbrotli-dev pkg-config)"

php="$("$(dirname "$0")/php-zts.sh" | tail -n 1)" || die "frankenphp $version: the thread-safe PHP could not be built (see above)"
phpdir="$(dirname "$(dirname "$php")")"
phpconfig="$phpdir/bin/php-config"
phpversion="$("$phpconfig" --version)"

tool_stage frankenphp "$version" >/dev/null
stage="$STAGE"
work="$(mktemp -d "${TMPDIR:-/tmp}/rbp-frankenphp.XXXXXX")"
trap 'rm -rf "$work" "$stage"' EXIT

export GOFLAGS=-mod=mod GONOSUMDB=github.com/dunglas/frankenphp GOTOOLCHAIN=local
mod=github.com/dunglas/frankenphp/caddy
say "frankenphp $version: $mod@v$version from the Go module proxy"
cd "$work"
moddir="$(go mod download -json "$mod@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$moddir" ] && [ -f "$moddir/frankenphp/main.go" ] \
  || die "frankenphp $version: $mod@v$version is not on the Go module proxy (this workplace serves v1.11.1; v1.9.1's Caddy module is missing there)"
# Upstream's own main package (caddy/frankenphp/main.go) in a module of ours: `go install pkg@version`
# refuses the Caddy module because its go.mod has a replace directive.
cp "$moddir/frankenphp/main.go" main.go
cp "$moddir/go.sum" go.sum
chmod u+w main.go go.sum
printf 'module rbp.local/frankenphp\n\ngo 1.25\n\nrequire %s v%s\n' "$mod" "$version" > go.mod
go mod tidy >&2 || die "frankenphp $version: go mod tidy failed (see above)"
grep -q "github.com/caddyserver/caddy/v2 " go.mod || die "frankenphp $version: the module graph has no Caddy"
caddy="$(sed -n 's/^[[:space:]]*github.com\/caddyserver\/caddy\/v2 \(v[^ ]*\).*/\1/p' go.mod)"

say "frankenphp $version: go build with cgo (PHP $phpversion, Caddy $caddy)"
# Tags as upstream documents for a lean build: no Badger/MySQL/PostgreSQL storage drivers (from
# smallstep's nosql), no file watcher (it needs the e-dant/watcher C library, not packaged here).
CGO_ENABLED=1 \
CGO_CFLAGS="$("$phpconfig" --includes)" \
CGO_LDFLAGS="-L$phpdir/lib $("$phpconfig" --ldflags) $("$phpconfig" --libs) -Wl,-rpath,\$ORIGIN/../lib" \
  go build -trimpath -tags nobadger,nomysql,nopgx,nowatcher \
    -ldflags "-w -s -X 'github.com/caddyserver/caddy/v2.CustomVersion=FrankenPHP v$version PHP $phpversion Caddy'" \
    -o "$stage/bin/frankenphp" . >&2 \
  || die "frankenphp $version: go build failed (see above)"
mkdir -p "$stage/lib"
cp -a "$phpdir/lib/libphp.so" "$stage/lib/"

out="$("$stage/bin/frankenphp" version 2>&1)" || die "frankenphp $version: the built binary does not run: $out"
case "$out" in "FrankenPHP v$version PHP $phpversion Caddy $caddy"*) ;; *) die "frankenphp $version: the built binary reports: $out" ;; esac
cd /
trap 'rm -rf "$work"' EXIT
tool_commit frankenphp "$version" bin/frankenphp
