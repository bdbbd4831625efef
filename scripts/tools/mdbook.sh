#!/usr/bin/env bash
# mdBook from the Rust crate registry: scripts/tools/mdbook.sh [VERSION]   (default 0.4.52, the
# version buildpacks/static/buildpack.toml pins). Installs <cache>/mdbook/<version>/bin/mdbook with
#   cargo install mdbook --version X --locked --no-default-features --features search
# `mdbook build` needs only the search index; the default `serve` and `watch` features (a web
# server and a file watcher) are left out to save build time. Needs cargo.
# Cold build: 23 min on 2 cores shared with other builds (load ~16); much less on an idle machine.
source "$(dirname "$0")/lib.sh"
version="${1:-0.4.52}"
tool_cached mdbook "$version" bin/mdbook && exit 0
command -v cargo >/dev/null || die "mdbook $version: needs cargo (the Rust toolchain; cargo not found on PATH)"
tool_stage mdbook "$version" >/dev/null; stage="$STAGE"  # not in $(…): STAGE and the cleanup trap must live in this shell
chmod 755 "$stage"  # mktemp made it private; the cache is read by whoever runs the tests
target="$(mktemp -d)"
trap 'rm -rf "$STAGE" "$target"' EXIT
say "mdbook $version: cargo install mdbook --version $version --locked --no-default-features --features search"
CARGO_TARGET_DIR="$target" cargo install mdbook --version "$version" --locked --no-default-features --features search \
  --root "$stage" >&2 \
  || die "mdbook $version: cargo install failed (is $version on crates.io? see cargo's message above)"
rm -f "$stage/.crates.toml" "$stage/.crates2.json"
tool_reports "mdbook $version" "v${version//./\\.}\$" "$stage/bin/mdbook" --version
rm -rf "$target"
tool_commit mdbook "$version" bin/mdbook
