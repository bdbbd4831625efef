#!/bin/sh
# bin/detect and bin/build of our buildpacks (scripts/build.mjs copies this file to both).
#
# A build image may hold no Node.js (a stock CNB build image has none): lib/<entry>.cjs runs on the
# Node.js carried in the buildpack (node/bin/node, put there by `npm run build -- --with-node`), else
# a node from PATH (lib/<entry>.cjs checks its version first thing), else this fails with one clear
# message. It execs, so exit codes (0, 100, other) and signals are the bundled code's own. Plain
# POSIX sh: dash and busybox run it, and it forks nothing on its way.
#
# bin/detect first answers what the app's root files decide alone, from the buildpack's own data
# (lib/detect-quick.sh, written from src/detect.ts at build: test/lifecycle/quick-detect.test.ts checks
# both give one answer): no Node.js start for the common cases, on every platform that runs it.
set -u
entry=${0##*/}
bp=${CNB_BUILDPACK_DIR:-$(cd "$(dirname "$0")/.." && pwd)}

# The quick answer: prints it and exits, or returns when the data does not decide it (a variable that
# may change the answer is set, or the first file found is not one it passes on).
# shellcheck disable=SC2154 # q_* and said are the sourced data's
quick() {
  # shellcheck source=/dev/null # written by the build: q_variables, q_files, q_pass, q_plan, q_declined
  . "$bp/lib/detect-quick.sh"
  platform=${CNB_PLATFORM_DIR:-${1:-}}
  # The names are checked at build: letters, digits and _ for variables, no blank in file names.
  for v in $q_variables; do
    eval "[ -z \"\${$v+set}\" ]" || return 0
    [ ! -e "$platform/env/$v" ] || return 0
  done
  for f in $q_files; do
    if [ -e "$f" ] || [ -L "$f" ]; then
      q_pass "$f" && [ -f "$f" ] && [ ! -L "$f" ] || return 0
      plan=${CNB_BUILD_PLAN_PATH:-${2:-}}
      [ -n "$plan" ] || return 0
      printf '%s' "$q_plan" >"$plan" || return 0
      printf '%s\n' "$said"
      exit 0
    fi
  done
  case $q_declined in
    *'{app}'*) printf '%s%s%s\n' "${q_declined%%\{app\}*}" "$(pwd -P)" "${q_declined#*\{app\}}" ;;
    *) printf '%s\n' "$q_declined" ;;
  esac
  exit 100
}
if [ "$entry" = detect ] && [ -f "$bp/lib/detect-quick.sh" ]; then quick "$@"; fi

node="$bp/node/bin/node"
if [ ! -x "$node" ]; then
  if ! command -v node >/dev/null 2>&1; then
    echo "ERROR ${bp##*/}: bin/$entry needs Node.js >= 20: none in this buildpack (node/bin/node) and no node on PATH" >&2
    echo "Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= 20 on the build image's PATH" >&2
    exit 1
  fi
  node=node
fi
# Node.js parses NODE_EXTRA_CA_CERTS at its start (~45 ms for a system bundle), though most runs make
# no request: the bundle takes the variable back first thing (lib/cnb/extra-ca.ts) and reads the file
# at its first request, so every process it starts gets it as it was. Not when NODE_OPTIONS picks
# Node.js's own certificate store: Node.js combines those.
if [ -n "${NODE_EXTRA_CA_CERTS-}" ]; then
  case " ${NODE_OPTIONS-} " in
    *--use-openssl-ca* | *--use-bundled-ca* | *--use-system-ca*) ;;
    *)
      _RBP_DEFERRED_NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
      export _RBP_DEFERRED_NODE_EXTRA_CA_CERTS
      unset NODE_EXTRA_CA_CERTS
      ;;
  esac
fi
exec "$node" "$bp/lib/$entry.cjs" "$@"
