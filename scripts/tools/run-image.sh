#!/usr/bin/env bash
# A run image for app images (`rbp build --image`, `rbp builder`): Debian bookworm, minbase, plus what
# the servers the buildpacks install need at run time (glibc, libstdc++ for Node.js and Bun, CA
# certificates, and the shared libraries FrankenPHP links: libxml2, SQLite, curl, Oniguruma, Brotli),
# as an OCI image layout:  scripts/tools/run-image.sh [SUITE]   (default bookworm)
# Installs <cache>/run-image/<suite>-r<REVISION>/ (an OCI layout, tag `latest`) and prints that
# folder's `oci-layout` file (the last line), like the other tool scripts print their executable.
# Needs root, mmdebstrap and umoci (Debian packages) and Debian's package mirror.
source "$(dirname "$0")/lib.sh"
suite="${1:-bookworm}"
# Bump REVISION when PACKAGES change, so a cached image of the old list is not taken for the new one
# (lib/package/app-image.ts names the default folder, bookworm-r<REVISION>, too).
REVISION=2
PACKAGES=ca-certificates,libstdc++6,libxml2,libsqlite3-0,libcurl4,libonig5,libbrotli1
name="$suite-r$REVISION"
home="$(tool_home run-image "$name")"
if [ -f "$home/.complete" ]; then printf '%s\n' "$home/layout/oci-layout"; exit 0; fi
command -v mmdebstrap >/dev/null || die "run-image $suite: needs mmdebstrap (apt-get install mmdebstrap)"
command -v umoci >/dev/null || die "run-image $suite: needs umoci (apt-get install umoci)"
tool_stage run-image "$name" >/dev/null; stage="$STAGE"
say "run-image $suite: mmdebstrap --variant=minbase"
mmdebstrap --variant=minbase --include="$PACKAGES" --aptopt='Apt::Install-Recommends "false"' \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
  "$suite" "$stage/rootfs.tar" >&2 || die "run-image $suite: mmdebstrap failed (is Debian's mirror reachable?)"
layout="$stage/layout"
umoci init --layout "$layout" >&2
umoci new --image "$layout:latest" >&2
umoci unpack --image "$layout:latest" "$stage/bundle" >&2
tar -xpf "$stage/rootfs.tar" -C "$stage/bundle/rootfs" --exclude='./dev/*'
umoci repack --image "$layout:latest" "$stage/bundle" >&2
umoci config --image "$layout:latest" --os linux --architecture "$(dpkg --print-architecture)" \
  --config.env 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --config.label "io.buildpacks.stack.id=io.buildpacks.stacks.bookworm" \
  --config.label "io.buildpacks.base.distro.name=debian" --config.label "io.buildpacks.base.distro.version=12" >&2
umoci gc --layout "$layout" >&2
rm -rf "$stage/bundle" "$stage/rootfs.tar"
[ -f "$layout/index.json" ] || die "run-image $suite: umoci wrote no index.json"
date -u +%FT%TZ > "$stage/.complete"
rm -rf "$home"
mv "$stage" "$home"
printf '%s\n' "$home/layout/oci-layout"
