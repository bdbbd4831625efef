#!/usr/bin/env bash
# Installs (or finds in the tool cache) every tool the tests drive, at the contract's versions, and
# prints one `export NAME=PATH` line per tool for the tests:  eval "$(scripts/tools/env.sh)"
# The tool scripts run side by side (RBP_TOOLS_JOBS at a time, default 3: on 2 cores the downloads
# of one overlap the compiles of another); each one's output goes to stderr when it is done.
# A tool that cannot be built stops this script with its tool script's message (never a silent skip).
# Zola is the one tool of the contract that no reachable registry publishes: it is checked by its
# command line (`rbp run --dry-run`), and its test runs only when RBP_TOOL_ZOLA names a real binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jobs="${RBP_TOOLS_JOBS:-3}"

# NAME                       script               version (empty: the script's default, the contract's)
# Longest builds first, so the slowest one starts at once.
tools=(
  "RBP_TOOL_FRANKENPHP        frankenphp.sh"
  "RBP_TOOL_STATIC_WEB_SERVER static-web-server.sh"
  "RBP_TOOL_MDBOOK            mdbook.sh"
  "RBP_TOOL_CADDY             caddy.sh             2.11.2"
  "RBP_TEST_CADDY_2_10_2      caddy.sh             2.10.2"
  "RBP_TOOL_LIFECYCLE         lifecycle.sh"
  "RBP_TEST_PACK              pack.sh"
  "RBP_TOOL_HUGO              hugo.sh              0.149"
  "RBP_TEST_HUGO_0_160        hugo.sh              0.160"
  "RBP_TOOL_MKDOCS            mkdocs.sh"
  "RBP_TOOL_COMPOSER          composer.sh"
  "RBP_RUN_IMAGE              run-image.sh"
)

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
for i in "${!tools[@]}"; do
  read -r name script version <<<"${tools[$i]}"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (
    start=$(date +%s)
    if "$here/$script" ${version:+"$version"} >"$logs/$i.out" 2>"$logs/$i.err"; then
      echo "$(( $(date +%s) - start ))" >"$logs/$i.secs"
    else
      exit 1
    fi
  ) &
  pids[$i]=$!
done

failed=0
for i in "${!tools[@]}"; do
  read -r name script version <<<"${tools[$i]}"
  if ! wait "${pids[$i]}"; then
    cat "$logs/$i.err" >&2
    echo "scripts/tools/env.sh: $script ${version:-} failed (its output is above); the tests need it" >&2
    failed=1
    continue
  fi
  exe="$(tail -n 1 "$logs/$i.out")"
  if [ ! -e "$exe" ]; then
    cat "$logs/$i.err" >&2
    echo "scripts/tools/env.sh: $script printed '$exe', which does not exist" >&2
    failed=1
    continue
  fi
  echo "scripts/tools: $name=$exe ($(cat "$logs/$i.secs") s)" >&2
  printf 'export %s=%q\n' "$name" "$exe"
done
exit "$failed"
