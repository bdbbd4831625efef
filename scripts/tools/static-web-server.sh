#!/usr/bin/env bash
# Static Web Server from the Rust crate registry: scripts/tools/static-web-server.sh [VERSION]
# (default 2.42.0, the static runtime's default server). Installs
# <cache>/static-web-server/<version>/bin/static-web-server with
#   cargo install static-web-server --version X --locked
# and the crate's default features (the buildpack uses none beyond them: it passes --port, --host,
# --root, --index-files and reads a config file). Needs cargo.
# Cold build: 35 min on 2 cores shared with other builds (load ~16); much less on an idle machine.
source "$(dirname "$0")/lib.sh"
version="${1:-2.42.0}"
tool_cached static-web-server "$version" bin/static-web-server && exit 0
command -v cargo >/dev/null || die "static-web-server $version: needs cargo (the Rust toolchain; cargo not found on PATH)"
tool_stage static-web-server "$version" >/dev/null; stage="$STAGE"  # not in $(…): STAGE and the cleanup trap must live in this shell
chmod 755 "$stage"  # mktemp made it private; the cache is read by whoever runs the tests
target="$(mktemp -d)"
trap 'rm -rf "$STAGE" "$target"' EXIT
say "static-web-server $version: cargo install static-web-server --version $version --locked"
# The crate's release profile asks for fat LTO and one codegen unit: the fastest binary, and a build
# several times slower on 2 cores. The tests need the same program, not its last percent of speed:
# thin-local LTO (cargo's default) and 16 units cut the cold build (it stays -O3, same features).
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
CARGO_TARGET_DIR="$target" cargo install static-web-server --version "$version" --locked --root "$stage" >&2 \
  || die "static-web-server $version: cargo install failed (is $version on crates.io? see cargo's message above)"
rm -f "$stage/.crates.toml" "$stage/.crates2.json"
tool_reports "static-web-server $version" " ${version//./\\.}\$" "$stage/bin/static-web-server" --version
rm -rf "$target"
tool_commit static-web-server "$version" bin/static-web-server
