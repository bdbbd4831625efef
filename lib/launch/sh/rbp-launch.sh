#!/bin/sh
# rbp-launch: the launch process of the rbp buildpacks, bin/rbp-launch of their launcher layer.
#
# It carries out a launch plan that it gets as data (sh assignments of rbp_* variables written by
# lib/launch/plan-data.ts) and decides nothing itself. The plan comes:
# - from the planner, plan.cjs beside it (lib/launch/planner.ts), run on a Node.js: the one the build
#   linked as planner-node (the runtime's own, or one the image needs), else RBP_LAUNCHER_NODE (rbp
#   run gives its own). With RBP_DRY_RUN=1 the planner prints the plan as JSON instead;
# - without a Node.js, from the plan the build stored (stored-plan.sh, lib/launch/stored-plan.ts),
#   made with the build's variables: it holds as long as the variables it read keep their value at
#   build, the port aside (its variables are named in the file); otherwise the launch stops with one
#   error that says what to set at build. Its values name the app, the layers and the port by
#   reference (rbp_app, rbp_layers, rbp_port), filled in here.
# When the plan says exec and this shell is not PID 1, the app replaces it: nothing of the launch
# stays beside the app. Otherwise supervise.sh starts the plan's processes and stays beside them.
#
# The layer is found from this script's own path: it names no folder of the machine it was built on.
#
# shellcheck disable=SC2154,SC2034 # the plan's rbp_* variables are its data's; the data uses rbp_app, rbp_layers, rbp_port

case $0 in
  */*) rbp_self=$0 ;;
  *) rbp_self=$(command -v -- "$0") || exit 82 ;;
esac
case $rbp_self in /*) ;; *) rbp_self=$PWD/$rbp_self ;; esac
# The app's folder is where the launch starts; the layer is two up from this script, the folder of
# the buildpack's layers one more (read from the path, so no cd leaves its mark in the environment).
rbp_app=$PWD
rbp_layer=${rbp_self%/*}
rbp_layer=${rbp_layer%/*}
rbp_layers=${rbp_layer%/*}
rbp_unset='
(unset)'

# The launch's stdin, for the app and the hooks (sh gives a background process /dev/null instead).
exec 3<&0

# Into folder $1, leaving no OLDPWD of the launch's own behind.
rbp_cd() {
  [ "$1" != "$PWD" ] || return 0
  rbp_o=${OLDPWD+set}
  cd "$1" || return
  [ -n "$rbp_o" ] || unset OLDPWD
}

# The app's environment, in this shell: its folder, no middleware's secret, the plan's variables.
rbp_app_env() {
  rbp_cd "$rbp_cwd" || exit 82
  # shellcheck disable=SC2086 # a list of variable names
  unset $rbp_0_unset
  [ -z "$rbp_0_env" ] || eval "export $rbp_0_env"
}

# A hook of the plan ($1: prestart or poststart) as npm runs it: the app's environment, its stdin.
rbp_hook() {
  eval "rbp_h=\$rbp_$1"
  [ -n "$rbp_h" ] || return 0
  (rbp_app_env && npm_lifecycle_event=$1 && export npm_lifecycle_event && exec /bin/sh -c "$rbp_h") 0<&3 3<&- && return 0
  rbp_hs=$?
  printf 'launch: the %s script failed (exit %s): %s\n' "$1" "$rbp_hs" "$rbp_h" >&2
  return "$rbp_hs"
}

# A stored plan that does not hold for this launch: the build's error, around what changed.
rbp_needs_node() {
  printf '%s"%s"%s\n' "$rbp_needs_node_before" "$1" "$rbp_needs_node_after" >&2
  exit 1
}

# The stored plan, checked against this launch: every variable it read as it was at build; the port
# from the first of its variables that is set, a number.
rbp_check_stored() {
  for rbp_v in $rbp_reads; do
    eval "rbp_now=\${$rbp_v-\$rbp_unset} rbp_then=\$rbp_at_build_$rbp_v"
    [ "$rbp_now" = "$rbp_then" ] || rbp_needs_node "$rbp_v differs from its value at build, which the stored plan was made with"
  done
  for rbp_v in $rbp_port_vars; do
    eval "rbp_p=\${$rbp_v-}"
    [ -z "$rbp_p" ] || break
  done
  [ -n "$rbp_p" ] || return 0
  case $rbp_p in
    *[!0-9]*) rbp_needs_node "$rbp_v=$rbp_p, which is not a plain port number" ;;
  esac
  { [ "$rbp_p" -ge 1 ] && [ "$rbp_p" -le 65535 ]; } 2>/dev/null || rbp_needs_node "$rbp_v=$rbp_p, which is not a port from 1 to 65535"
  rbp_port=$rbp_p
}

if [ -x "$rbp_layer/planner-node" ]; then
  rbp_node=$rbp_layer/planner-node
else
  rbp_node=${RBP_LAUNCHER_NODE-}
fi
if [ -n "$rbp_node" ]; then
  [ "${RBP_DRY_RUN-}" != 1 ] || exec "$rbp_node" "$rbp_layer/plan.cjs" 3<&-
  rbp_plan=$("$rbp_node" "$rbp_layer/plan.cjs" 3<&-) || exit
elif [ "${RBP_DRY_RUN-}" = 1 ]; then
  printf '%s\n' "rbp-launch: a dry run prints the plan the planner makes, on a Node.js: name one with RBP_LAUNCHER_NODE" >&2
  exit 1
elif [ -f "$rbp_layer/stored-plan.sh" ]; then
  # shellcheck source=/dev/null
  . "$rbp_layer/stored-plan.sh"
  rbp_check_stored
else
  printf '%s\n' "rbp-launch: no Node.js to plan this launch: the image has none for it and RBP_LAUNCHER_NODE is unset (set RBP_LAUNCHER_NODE to the run image's Node.js, or build without it: the build then puts one in the image)" >&2
  exit 1
fi
eval "$rbp_plan"

if [ "$rbp_mode" = exec ] && [ "$$" != 1 ]; then
  rbp_hook prestart || exit
  rbp_app_env
  exec 3<&-
  eval "set -- $rbp_0_argv"
  printf '%s\n' "- exec $rbp_0_prog (nothing to supervise)"
  exec "$@"
fi
[ "$$" != 1 ] || rbp_why="${rbp_why:+$rbp_why; }the launch is PID 1: it passes stop signals on and reaps orphans"
# shellcheck source=lib/launch/sh/supervise.sh
. "$rbp_layer/supervise.sh"
rbp_supervise
