#!/usr/bin/env bash
# Caddy from the Go module proxy: scripts/tools/caddy.sh [VERSION]   (default 2.11.2, the static
# runtime's; 2.10.2 is the one inside the PHP server). Installs <cache>/caddy/<version>/bin/caddy.
# Needs Go. Upstream's release binaries are built the same way (cmd/caddy, -trimpath).
source "$(dirname "$0")/lib.sh"
version="${1:-2.11.2}"
tool_cached caddy "$version" bin/caddy && exit 0
stage="$(tool_stage caddy "$version")"
command -v go >/dev/null || die "caddy $version: needs Go (go not found on PATH)"
say "caddy $version: building github.com/caddyserver/caddy/v2/cmd/caddy@v$version"
GOBIN="$stage/bin" CGO_ENABLED=0 GOFLAGS=-trimpath go install "github.com/caddyserver/caddy/v2/cmd/caddy@v$version" >&2 \
  || die "caddy $version: go install failed (is v$version on the Go module proxy?)"
"$stage/bin/caddy" version | grep -q "^v$version" || die "caddy $version: the built binary reports $("$stage/bin/caddy" version)"
tool_commit caddy "$version" bin/caddy
