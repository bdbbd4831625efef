#!/usr/bin/env bash
# Installs (or finds in the tool cache) every tool the tests drive, at the contract's versions, and
# prints one `export NAME=PATH` line per tool for the tests:  eval "$(scripts/tools/env.sh)"
# A tool that cannot be built stops this script with its tool script's message (never a silent skip).
# Zola is the one tool of the contract that no reachable registry publishes: it is checked by its
# command line (`rbp run --dry-run`), and its test runs only when RBP_TOOL_ZOLA names a real binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# NAME                      script               version (empty: the script's default, the contract's)
tools=(
  "RBP_TOOL_CADDY            caddy.sh             2.11.2"
  "RBP_TEST_CADDY_2_10_2     caddy.sh             2.10.2"
  "RBP_TOOL_STATIC_WEB_SERVER static-web-server.sh"
  "RBP_TOOL_MDBOOK           mdbook.sh"
  "RBP_TOOL_HUGO             hugo.sh              0.149"
  "RBP_TEST_HUGO_0_160       hugo.sh              0.160"
  "RBP_TOOL_MKDOCS           mkdocs.sh"
  "RBP_TOOL_FRANKENPHP       frankenphp.sh"
  "RBP_TOOL_LIFECYCLE        lifecycle.sh"
  "RBP_RUN_IMAGE             run-image.sh"
)

for line in "${tools[@]}"; do
  read -r name script version <<<"$line"
  start=$(date +%s)
  if ! out="$("$here/$script" ${version:+"$version"})"; then
    echo "scripts/tools/env.sh: $script ${version:-} failed (see above); the tests need it" >&2
    exit 1
  fi
  exe="$(printf '%s\n' "$out" | tail -n 1)"
  [ -e "$exe" ] || { echo "scripts/tools/env.sh: $script printed '$exe', which does not exist" >&2; exit 1; }
  echo "scripts/tools: $name=$exe ($(( $(date +%s) - start )) s)" >&2
  printf 'export %s=%q\n' "$name" "$exe"
done
