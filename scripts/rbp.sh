#!/bin/sh
# rbp, the package's bin (scripts/build.mjs copies it to dist/rbp): runs rbp.js beside this file on
# the node of PATH, as `node -- rbp.js ARGS`, so Node.js never reads rbp's own flags (Node.js takes an
# --env-file anywhere on its command line unless `--` ends its own options). A shebang cannot say it
# everywhere: `#!/usr/bin/env -S node --` needs an env that knows -S, and npm runs bins through their
# shebang. Folders by parameter expansion, not dirname: no process started before rbp.js's own.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) case $self in */*) self=${self%/*}/$link ;; *) self=$link ;; esac ;; esac
done
if ! command -v node >/dev/null 2>&1; then
  echo "! ERROR rbp needs Node.js >= 20: no node on PATH" >&2
  echo "! Fix:  install Node.js 20 or newer and put it on PATH" >&2
  exit 2
fi
case $self in */*) rbp_js=${self%/*}/rbp.js ;; *) rbp_js=rbp.js ;; esac

# Node.js parses NODE_EXTRA_CA_CERTS at its start (~45 ms for a system bundle), though most runs make
# no request: rbp takes the variable back first thing and reads the file at its first request
# (lib/cnb/extra-ca.ts), so every process it starts gets it as it was. Not when NODE_OPTIONS picks
# Node.js's own certificate store: Node.js combines those.
defer_ca() {
  [ -n "${NODE_EXTRA_CA_CERTS-}" ] || return 0
  case " ${NODE_OPTIONS-} " in
    *--use-openssl-ca* | *--use-bundled-ca* | *--use-system-ca*) return 0 ;;
  esac
  _RBP_DEFERRED_NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
  export _RBP_DEFERRED_NODE_EXTRA_CA_CERTS
  unset NODE_EXTRA_CA_CERTS
}

# rbp run hands its place over (lib/platform/handoff.ts): rbp.js plans the launch, writes on fd 3 the
# sh that starts the process, and ends; this shell runs it, and the process, exec'd, keeps this pid.
# Nothing of rbp stays beside it. rbp.js's own output goes where this shell's does (fd 4); with stdout
# closed (nothing to duplicate), rbp.js runs as for any other command. The variable is deferred in
# the subshell only: the process handed over to starts from this shell's environment.
if [ "${1-}" = run ] && { true 5>&1; } 2>/dev/null; then
  exec 4>&1
  handoff=$(defer_ca; _RBP_HANDOFF=$$ node -- "$rbp_js" "$@" 3>&1 1>&4 4>&-)
  status=$?
  exec 4>&-
  [ -n "$handoff" ] || exit "$status"
  eval "$handoff"
fi
defer_ca
exec node -- "$rbp_js" "$@"
