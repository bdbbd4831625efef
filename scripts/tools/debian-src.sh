#!/usr/bin/env bash
# Adds deb-src entries for the suites the machine already uses, so that `apt-get source php8.2`
# works (FrankenPHP's ZTS PHP is built from Debian's PHP source). A no-op when they are there.
set -euo pipefail
SUDO=""; [ "$(id -u)" != 0 ] && SUDO="sudo"
f=/etc/apt/sources.list.d/debian-src.sources
[ -f "$f" ] && exit 0
if grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ || grep -qs '^deb-src' /etc/apt/sources.list; then exit 0; fi
src=$(grep -ls '^Types: deb$' /etc/apt/sources.list.d/*.sources | head -n 1 || true)
[ -n "$src" ] || { echo "scripts/tools/debian-src.sh: no deb822 .sources file to copy the suites from" >&2; exit 1; }
sed 's/^Types: deb$/Types: deb-src/' "$src" | $SUDO tee "$f" >/dev/null
echo "scripts/tools/debian-src.sh: added $f" >&2
