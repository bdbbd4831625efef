# shellcheck shell=bash
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

# tool_reports WHAT EXTENDED-REGEX COMMAND...: runs COMMAND once and checks that its output matches,
# else dies quoting it. The output is read whole first: `COMMAND | grep -q` would close the pipe at
# the first match, and a tool that panics on a broken pipe (Static Web Server) fails the pipeline.
tool_reports() {
  local what="$1" pattern="$2" out
  shift 2
  out="$("$@" 2>&1)" || die "$what: '$*' failed: $out"
  grep -Eq -- "$pattern" <<<"$out" || die "$what: the built binary reports '$out'"
}

# tool_home TOOL VERSION: the cache folder of that tool and version.
tool_home() { printf '%s/%s/%s' "$RBP_TOOLS_CACHE" "$1" "$2"; }

# tool_cached TOOL VERSION RELATIVE_EXE: prints the executable and returns 0 when installed.
tool_cached() {
  local home; home="$(tool_home "$1" "$2")"
  if [ -f "$home/.complete" ] && [ -x "$home/$3" ]; then
    chmod go+rx "$home"  # readable by other users (a build user 1000 in a container mounting it)
    printf '%s\n' "$home/$3"; return 0
  fi
  return 1
}

# tool_stage TOOL VERSION: a fresh, empty staging folder beside the final one (same file system, so
# the final rename is atomic): `<version>.partial`, wiped first, so an interrupted earlier run leaves
# nothing that counts. Works inside `$(...)` too (it prints the folder); sets STAGE when called plainly.
tool_stage() {
  local home; home="$(tool_home "$1" "$2")"
  mkdir -p "$(dirname "$home")"
  rm -rf "$home.partial"
  mkdir "$home.partial"
  STAGE="$home.partial"
  printf '%s' "$STAGE"
}

# tool_commit TOOL VERSION RELATIVE_EXE: marks the staging folder complete, moves it into place and
# prints the executable.
tool_commit() {
  local home stage; home="$(tool_home "$1" "$2")"; stage="$home.partial"
  [ -x "$stage/$3" ] || die "$1 $2: the build finished but $3 is not there"
  date -u +%FT%TZ > "$stage/.complete"
  chmod 755 "$stage"
  rm -rf "$home"
  mv "$stage" "$home"
  printf '%s\n' "$home/$3"
}

# go_module_dir MODULE VERSION: downloads one version of a Go module from the proxy and prints its
# folder in the module cache (to build inside it). Not `go install pkg@version`: that also asks the
# proxy for the module's version list (to report a deprecation), which the proxy here refuses (403).
go_module_dir() {
  local dir
  dir="$(go mod download -json "$1@v$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')" || return 1
  [ -d "$dir" ] || return 1
  printf '%s' "$dir"
}
