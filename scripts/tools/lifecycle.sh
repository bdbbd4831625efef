#!/usr/bin/env bash
# The reference CNB lifecycle (buildpacks/lifecycle) from the Go module proxy:
#   scripts/tools/lifecycle.sh [VERSION]   (default 0.20.8: Platform API up to 0.13, Buildpack API 0.10)
# Installs <cache>/lifecycle/<version>/ laid out as a builder's /cnb/lifecycle: `lifecycle` (cmd/lifecycle,
# which picks its phase from its own name) with the phase links detector, analyzer, restorer,
# builder, exporter, creator, rebaser, extender beside it, and `launcher` (cmd/launcher, a binary of
# its own: the one an app image runs). Prints the path of the `lifecycle` binary.
source "$(dirname "$0")/lib.sh"
version="${1:-0.20.8}"
home="$(tool_home lifecycle "$version")"
# An install from before the launcher was built on its own (a link to lifecycle) is not complete.
if [ -L "$home/launcher" ]; then rm -f "$home/.complete"; fi
tool_cached lifecycle "$version" lifecycle && exit 0
tool_stage lifecycle "$version" >/dev/null; stage="$STAGE"
command -v go >/dev/null || die "lifecycle $version: needs Go (go not found on PATH)"
for cmd in lifecycle launcher; do
  say "lifecycle $version: building github.com/buildpacks/lifecycle/cmd/$cmd@v$version"
  GOBIN="$stage" CGO_ENABLED=0 GOFLAGS=-trimpath go install -ldflags "-s -w -X github.com/buildpacks/lifecycle/cmd.Version=$version" \
    "github.com/buildpacks/lifecycle/cmd/$cmd@v$version" >&2 \
    || die "lifecycle $version: go install cmd/$cmd failed (is v$version on the Go module proxy?)"
done
for phase in detector analyzer restorer builder exporter creator rebaser extender; do
  ln -s lifecycle "$stage/$phase"
done
tool_commit lifecycle "$version" lifecycle
