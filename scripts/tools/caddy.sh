#!/usr/bin/env bash
# Caddy from the Go module proxy: scripts/tools/caddy.sh [VERSION]   (default 2.11.2, the static
# runtime's; 2.10.2 is the one inside the PHP server). Installs <cache>/caddy/<version>/bin/caddy.
# Needs Go. Built as xcaddy and upstream's release do: a main module that requires
# github.com/caddyserver/caddy/v2 at that version (so `caddy version` reports it; a plain
# `go install .../cmd/caddy@v` reports "unknown") with the standard modules.
source "$(dirname "$0")/lib.sh"
version="${1:-2.11.2}"
tool_cached caddy "$version" bin/caddy && exit 0
tool_stage caddy "$version" >/dev/null; stage="$STAGE"
command -v go >/dev/null || die "caddy $version: needs Go (go not found on PATH)"
say "caddy $version: building github.com/caddyserver/caddy/v2@v$version"
src="$stage/src"; mkdir -p "$src"
cat > "$src/main.go" <<'GO'
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() { caddycmd.Main() }
GO
(
  cd "$src"
  go mod init rbp.local/caddy >&2
  go get "github.com/caddyserver/caddy/v2@v$version" >&2
  go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath -o "$stage/bin/caddy" . >&2
) || die "caddy $version: the build failed (is v$version on the Go module proxy?)"
rm -rf "$src"
tool_reports "caddy $version" "^v${version//./\\.}( |\$)" "$stage/bin/caddy" version
tool_commit caddy "$version" bin/caddy
