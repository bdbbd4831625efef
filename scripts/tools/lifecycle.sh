#!/usr/bin/env bash
# The reference CNB lifecycle (buildpacks/lifecycle) from the Go module proxy:
#   scripts/tools/lifecycle.sh [VERSION]   (default 0.20.8: Platform API up to 0.13, Buildpack API 0.10)
# Installs <cache>/lifecycle/<version>/lifecycle and, beside it, the phase links a builder image has
# at /cnb/lifecycle (detector, analyzer, restorer, builder, exporter, creator, rebaser) and the launcher:
# the one binary picks its phase from its own name. Prints the path of the `lifecycle` binary.
source "$(dirname "$0")/lib.sh"
version="${1:-0.20.8}"
# Complete only with the launcher beside it (an earlier script built the phases alone).
# and stamped with its version, as upstream's release build does (-version says 0.0.0 otherwise).
home="$(tool_home lifecycle "$version")"
if [ -x "$home/launcher" ] && [ "$("$home/lifecycle" -version 2>/dev/null | head -n 1)" = "$version" ]; then
  tool_cached lifecycle "$version" lifecycle && exit 0
fi
tool_stage lifecycle "$version" >/dev/null; stage="$STAGE"
command -v go >/dev/null || die "lifecycle $version: needs Go (go not found on PATH)"
say "lifecycle $version: building github.com/buildpacks/lifecycle/cmd/lifecycle@v$version"
moddir="$(go_module_dir github.com/buildpacks/lifecycle "$version")" \
  || die "lifecycle $version: go mod download failed (is v$version on the Go module proxy?)"
mkdir -p "$stage/bin"
ldflags="-s -w -X github.com/buildpacks/lifecycle/cmd.Version=$version"
# The launcher is its own program (cmd/launcher), as in a builder image's /cnb/lifecycle/launcher.
(cd "$moddir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$stage/bin/lifecycle" ./cmd/lifecycle \
  && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$stage/bin/launcher" ./cmd/launcher) >&2 \
  || die "lifecycle $version: go build failed"
mv "$stage/bin/lifecycle" "$stage/bin/launcher" "$stage/" && rmdir "$stage/bin"
for phase in detector analyzer restorer builder exporter creator rebaser extender; do
  ln -s lifecycle "$stage/$phase"
done
tool_commit lifecycle "$version" lifecycle
