# Shared by scripts/tools/<tool>.sh: the tool cache and its completeness marker.
#
# Each tool script installs one version of one tool into
#   ${RBP_TOOLS_CACHE:-$HOME/.cache/rbp-tools}/<tool>/<version>/
# builds in a temporary folder beside it, and renames the finished folder into place only when
# the build succeeded, with a `.complete` file written last: a folder holding `.complete` is a
# finished install, and a second run is a no-op that prints the executable's path. The executable's
# path is always the script's last line of output; progress goes to stderr.
set -euo pipefail

RBP_TOOLS_CACHE="${RBP_TOOLS_CACHE:-$HOME/.cache/rbp-tools}"

say() { printf '%s\n' "$*" >&2; }
die() { printf 'scripts/tools: %s\n' "$*" >&2; exit 1; }

# tool_home TOOL VERSION: the cache folder of that tool and version.
tool_home() { printf '%s/%s/%s' "$RBP_TOOLS_CACHE" "$1" "$2"; }

# tool_cached TOOL VERSION RELATIVE_EXE: prints the executable and returns 0 when installed.
tool_cached() {
  local home; home="$(tool_home "$1" "$2")"
  if [ -f "$home/.complete" ] && [ -x "$home/$3" ]; then printf '%s\n' "$home/$3"; return 0; fi
  return 1
}

# tool_stage TOOL VERSION: a fresh, empty staging folder beside the final one (same file system, so
# the final rename is atomic). Removed on exit unless tool_commit moved it into place.
tool_stage() {
  local home; home="$(tool_home "$1" "$2")"
  mkdir -p "$(dirname "$home")"
  STAGE="$(mktemp -d "$home.partial.XXXXXX")"
  trap 'rm -rf "$STAGE"' EXIT
  printf '%s' "$STAGE"
}

# tool_commit TOOL VERSION RELATIVE_EXE: marks STAGE complete, moves it into place, prints the exe.
tool_commit() {
  local home; home="$(tool_home "$1" "$2")"
  [ -x "$STAGE/$3" ] || die "$1 $2: the build finished but $3 is not there"
  date -u +%FT%TZ > "$STAGE/.complete"
  rm -rf "$home"
  mv "$STAGE" "$home"
  trap - EXIT
  printf '%s\n' "$home/$3"
}
