#!/usr/bin/env bash
# pack, the Cloud Native Buildpacks CLI (buildpacks/pack), from the Go module proxy:
#   scripts/tools/pack.sh [VERSION]   (default 0.40.6)
# Installs <cache>/pack/<version>/pack, stamped with its version as upstream's release build does
# (`pack --version` says 0.0.0 otherwise). Its main package is the module root. Needs Go.
# The tests drive it against podman's Docker-compatible API (`podman system service`).
source "$(dirname "$0")/lib.sh"
version="${1:-0.40.6}"
home="$(tool_home pack "$version")"
if [ -x "$home/pack" ] && [ "$("$home/pack" --version 2>/dev/null | head -n 1)" = "$version" ]; then
  tool_cached pack "$version" pack && exit 0
fi
tool_stage pack "$version" >/dev/null; stage="$STAGE"
command -v go >/dev/null || die "pack $version: needs Go (go not found on PATH)"
say "pack $version: building github.com/buildpacks/pack@v$version"
moddir="$(go_module_dir github.com/buildpacks/pack "$version")" \
  || die "pack $version: go mod download failed (is v$version on the Go module proxy?)"
(cd "$moddir" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath \
  -ldflags "-s -w -X github.com/buildpacks/pack/pkg/client.Version=$version" -o "$stage/pack" .) >&2 \
  || die "pack $version: go build failed (see above)"
[ "$("$stage/pack" --version | head -n 1)" = "$version" ] || die "pack $version: the built binary reports '$("$stage/pack" --version)'"
tool_commit pack "$version" pack
