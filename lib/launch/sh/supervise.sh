# shellcheck shell=sh
# shellcheck disable=SC2154 # the plan's rbp_* variables come from its data (rbp-launch.sh)
# The launch supervisor, sourced by rbp-launch.sh once the plan is read: it starts the plan's
# processes (the members: the app, then each middleware from the app outward), watches them, and
# stops them all when one ends or a stop signal comes. Every value comes from the plan's data:
# - each member i (rbp_members, 0 the app) has rbp_<i>_name, _prog, _shown (for the log), _argv
#   (sh words), _env (NAME=value words set on top of the launch environment), _unset (the secrets it
#   may not see), _listen and _hex (its port, decimal and as /proc/net/tcp shows it, when the next
#   member may start only once it listens), _status (the launch's status when it ends the run; the
#   app's own status otherwise) and _nls (the status when it does not listen in time);
# - rbp_stop_ticks, rbp_listen_ticks: the stop and listen timeouts in tenths and twentieths of a
#   second, with rbp_stop_shown and rbp_listen_shown for the log; rbp_pub_hex: the public port the
#   app must not take behind a request flow; rbp_route: the request flow, for the log;
# - rbp_restart (no, on-failure), rbp_delays (the waits before restart 1, 2, ..., in seconds, the
#   last repeated) with rbp_delays_shown, rbp_healthy (seconds of a run that resets the back-off);
# - rbp_cleanup: folders the launch made (sh words), removed when it ends.
# Each member runs in its own process group (setsid): a signal reaches whatever it started. When a
# member ends, one line says which and how; the others get SIGTERM, then SIGKILL after the stop
# timeout, and their groups are emptied. The launch exits with the app's status, or the ending
# middleware's. With RBP_RESTART=on-failure a failure starts every member again after the back-off.
# As PID 1 it also reaps the orphans the kernel gives it (sh reaps every child while it waits).

# Field $2 of member $1, in rbp_v.
rbp_f() { eval "rbp_v=\${rbp_$1_$2-}"; }

# Whether process $1 runs: neither ended nor a zombie.
rbp_alive() {
  [ -n "$1" ] && read -r rbp_s 2>/dev/null <"/proc/$1/stat" || return 1
  rbp_s=${rbp_s##*) }
  case $rbp_s in Z* | X*) return 1 ;; esac
}

# Signal $1 to the process group of member $2 (to the process alone when it has none).
rbp_kill() {
  eval "rbp_kp=\$rbp_pid_$2"
  [ -n "$rbp_kp" ] || return 0
  kill -s "$1" -- "-$rbp_kp" 2>/dev/null || kill -s "$1" "$rbp_kp" 2>/dev/null
}

# Whether something listens on the port whose hex is $1 (the kernel's table of sockets).
rbp_listening() {
  for rbp_tcp in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$rbp_tcp" ] || continue
    while read -r _ rbp_l _ rbp_ls _; do
      case $rbp_l in *:"$1") [ "$rbp_ls" != 0A ] || return 0 ;; esac
    done <"$rbp_tcp"
  done
  return 1
}

# A short pause between two looks (a whole second where sleep takes no fractions).
rbp_nap() { sleep "$1" 2>/dev/null || sleep 1; }

# The names of the members $@, joined, in rbp_names.
rbp_names() {
  rbp_names=
  for rbp_i in "$@"; do
    rbp_f "$rbp_i" name
    rbp_names=${rbp_names:+$rbp_names, }$rbp_v
  done
}

# A stop signal ($1): passed on to every running member's group, said once per signal. A trap runs
# between any two commands of the loops: it keeps to variables of its own (rbp_c*).
rbp_on_stop() {
  rbp_got=1
  [ -z "$rbp_sp" ] || kill -s KILL "$rbp_sp" 2>/dev/null
  [ "$rbp_stopping" != "$1" ] || return 0
  rbp_stopping=$1
  rbp_cn=
  for rbp_ci in $rbp_started; do
    eval "rbp_cd=\$rbp_done_$rbp_ci rbp_cv=\$rbp_${rbp_ci}_name"
    [ -n "$rbp_cd" ] || rbp_cn=${rbp_cn:+$rbp_cn, }$rbp_cv
  done
  [ -z "$rbp_cn" ] || printf '%s\n' "- SIG$1: stopping $rbp_cn"
  for rbp_ci in $rbp_started; do
    eval "rbp_cd=\$rbp_done_$rbp_ci rbp_cp=\$rbp_pid_$rbp_ci"
    [ -n "$rbp_cd" ] || kill -s "$1" -- "-$rbp_cp" 2>/dev/null || kill -s "$1" "$rbp_cp" 2>/dev/null
  done
}

# QUIT, USR1 and USR2 are the app's own (a dump, a reload): to its group, as they are.
rbp_pass() {
  rbp_got=1
  [ -n "$rbp_done_0" ] || kill -s "$1" -- "-$rbp_pid_0" 2>/dev/null || kill -s "$1" "$rbp_pid_0" 2>/dev/null
}

# Starts member $1 in its own group, with the launch's stdin for the app and none for the others.
rbp_start() {
  rbp_f "$1" name
  rbp_sn=$rbp_v
  rbp_f "$1" listen
  rbp_sl=$rbp_v
  rbp_f "$1" shown
  printf '%s\n' "- starting $rbp_sn${rbp_sl:+ on port $rbp_sl}: $rbp_v"
  eval "rbp_sa=\$rbp_$1_argv rbp_se=\$rbp_$1_env rbp_su=\$rbp_$1_unset"
  if [ "$1" = 0 ]; then
    (rbp_member_env && eval "exec $rbp_run $rbp_sa") 0<&3 3<&- &
  else
    (rbp_member_env && eval "exec $rbp_run $rbp_sa") </dev/null 3<&- &
  fi
  eval "rbp_pid_$1=\$! rbp_done_$1= rbp_st_$1="
  rbp_started="$rbp_started $1"
  # A stop that came while it started goes to it too.
  [ -z "$rbp_stopping" ] || rbp_kill "$rbp_stopping" "$1"
}

# In a member's own shell: its folder, the secrets it may not see unset, its variables.
rbp_member_env() {
  rbp_cd "$rbp_cwd" || return
  # shellcheck disable=SC2086 # a list of variable names
  unset $rbp_su
  [ -z "$rbp_se" ] || eval "export $rbp_se"
}

# The members that ended since the last look: their status read, the first of them in rbp_ended.
rbp_reap() {
  rbp_ended=
  for rbp_i in $rbp_started; do
    eval "rbp_d=\$rbp_done_$rbp_i rbp_p=\$rbp_pid_$rbp_i"
    [ -z "$rbp_d" ] || continue
    ! rbp_alive "$rbp_p" || continue
    # It ended: wait gives its status at once, unless a trap cut it short (the trap sets rbp_got);
    # sh keeps the status, so a second wait gives it again.
    rbp_g=$rbp_got rbp_got=
    wait "$rbp_p" 2>/dev/null
    rbp_r=$?
    if [ -n "$rbp_got" ] && [ "$rbp_r" -gt 128 ]; then
      wait "$rbp_p" 2>/dev/null
      rbp_r2=$?
      [ "$rbp_r2" = 127 ] || rbp_r=$rbp_r2
    fi
    rbp_got=${rbp_got:-$rbp_g}
    eval "rbp_st_$rbp_i=\$rbp_r rbp_done_$rbp_i=1"
    rbp_ended=${rbp_ended:-$rbp_i}
  done
}

# The members still running, in rbp_left.
rbp_left() {
  rbp_left=
  for rbp_i in $rbp_started; do
    eval "rbp_d=\$rbp_done_$rbp_i"
    [ -n "$rbp_d" ] || rbp_left="$rbp_left $rbp_i"
  done
}

# Waits for a member to end or a trapped signal, whichever first. The app alone is waited for
# itself; several members, through a background sleep that bounds the wait (a member that ends just
# before the wait begins is seen at the next look).
rbp_tick() {
  [ -z "$rbp_got" ] || return 0
  if [ "$rbp_members" = 0 ]; then
    wait "$rbp_pid_0" 2>/dev/null
    return 0
  fi
  if ! rbp_alive "$rbp_tk"; then
    [ -z "$rbp_tk" ] || wait "$rbp_tk" 2>/dev/null
    sleep 2 >/dev/null 2>&1 3<&- &
    rbp_tk=$!
  fi
  wait "$rbp_tk" 2>/dev/null
}

# Stops every member: signal $1 to each group (none: a stop signal reached them already), SIGKILL to
# those left after the stop timeout, and to every group at the end, so nothing a member started
# outlives the launch.
rbp_stop_all() {
  [ -z "$1" ] || for rbp_i in $rbp_started; do rbp_kill "$1" "$rbp_i"; done
  rbp_n=0
  while rbp_reap && rbp_left && [ -n "$rbp_left" ]; do
    if [ "$rbp_n" -ge "$rbp_stop_ticks" ]; then
      # shellcheck disable=SC2086 # a list of member numbers
      rbp_names $rbp_left
      printf '%s\n' "! $rbp_names still running after $rbp_stop_shown: SIGKILL"
      break
    fi
    rbp_nap 0.1
    rbp_n=$((rbp_n + 1))
  done
  for rbp_i in $rbp_started; do rbp_kill KILL "$rbp_i"; done
  while rbp_reap && rbp_left && [ -n "$rbp_left" ]; do rbp_nap 0.05; done
}

# How member $1 ended, from its status $2, in rbp_how.
rbp_how() {
  if [ "$2" -gt 128 ] && rbp_sig=$(kill -l "$2" 2>/dev/null) && [ -n "$rbp_sig" ]; then
    rbp_how="was killed by SIG${rbp_sig#SIG}"
  else
    rbp_how="exited with status $2"
  fi
}

# Member $1 ended the run (its status in rbp_st_$1): one line says which and how; the others stop.
rbp_member_ended() {
  eval "rbp_es=\$rbp_st_$1"
  rbp_f "$1" status
  rbp_st=${rbp_v:-$rbp_es}
  rbp_others=
  for rbp_i in $rbp_started; do [ "$rbp_i" = "$1" ] || rbp_others="$rbp_others $rbp_i"; done
  # shellcheck disable=SC2086
  rbp_names $rbp_others
  rbp_stopping_others=${rbp_names:+; stopping $rbp_names}
  rbp_f "$1" prog
  rbp_prog=$rbp_v
  rbp_f "$1" name
  if [ "$1" = 0 ] && [ "$rbp_es" = 0 ]; then
    printf '%s\n' "- $rbp_prog ($rbp_v) exited with status 0$rbp_stopping_others"
    rbp_cause=clean
  else
    rbp_how "$1" "$rbp_es"
    rbp_cause=failure
    if [ "$rbp_restart" = on-failure ]; then
      printf '%s\n' "! $rbp_prog ($rbp_v) $rbp_how$rbp_stopping_others"
    else
      printf '%s\n' "! $rbp_prog ($rbp_v) $rbp_how$rbp_stopping_others; the launch exits with status $rbp_st"
    fi
  fi
  rbp_stop_all TERM
}

# Member $1 did not listen ($2 says how): the run ends with its status for that.
rbp_not_listening() {
  rbp_f "$1" nls
  rbp_st=$rbp_v rbp_cause=failure
  if [ "$rbp_restart" = on-failure ]; then printf '%s\n' "! $2"; else printf '%s\n' "! $2; the launch exits with status $rbp_st"; fi
  rbp_stop_all TERM
}

# The run ended by a stop signal: every member stopped; the app's status, or 128+n when it never ended.
rbp_by_signal() {
  rbp_stop_all ''
  rbp_cause=signal
  if [ -n "$rbp_st_0" ]; then
    rbp_st=$rbp_st_0
  else
    case $rbp_stopping in INT) rbp_st=130 ;; HUP) rbp_st=129 ;; *) rbp_st=143 ;; esac
  fi
}

# Waits until member $1 listens; returns 1 when the run ended meanwhile (rbp_st, rbp_cause set).
rbp_wait_listen() {
  rbp_f "$1" hex
  rbp_hx=$rbp_v
  rbp_n=0
  while :; do
    if [ -n "$rbp_stopping" ]; then
      rbp_by_signal
      return 1
    fi
    rbp_reap
    if [ -n "$rbp_ended" ]; then
      rbp_member_ended "$rbp_ended"
      return 1
    fi
    ! rbp_listening "$rbp_hx" || return 0
    rbp_f "$1" listen
    if [ "$1" = 0 ] && [ -n "$rbp_pub_hex" ] && rbp_listening "$rbp_pub_hex"; then
      rbp_not_listening 0 "app listens on the public port $rbp_pub: behind request-flow middleware it must listen on $rbp_v (its PORT variable)"
      return 1
    fi
    if [ "$rbp_n" -ge "$rbp_listen_ticks" ]; then
      rbp_lp=$rbp_v
      rbp_f "$1" name
      rbp_not_listening "$1" "$rbp_v did not listen on port $rbp_lp within $rbp_listen_shown"
      return 1
    fi
    rbp_nap 0.05
    rbp_n=$((rbp_n + 1))
  done
}

# One run of every member, from the app outward, until one ends or a stop signal comes.
rbp_run_once() {
  rbp_started='' rbp_st='' rbp_cause=''
  for rbp_m in $rbp_members; do
    if [ -n "$rbp_stopping" ]; then
      rbp_by_signal
      return
    fi
    rbp_start "$rbp_m"
    rbp_f "$rbp_m" hex
    [ -z "$rbp_v" ] || rbp_wait_listen "$rbp_m" || return 0
  done
  [ -z "$rbp_route" ] || printf '%s\n' "- request flow ready: $rbp_route"
  while :; do
    rbp_got=
    if [ -n "$rbp_stopping" ]; then
      rbp_by_signal
      return
    fi
    rbp_reap
    if [ -n "$rbp_ended" ]; then
      rbp_member_ended "$rbp_ended"
      return
    fi
    rbp_tick
  done
}

# Seconds since boot (the clock of the back-off's reset), in rbp_now.
rbp_clock() {
  if read -r rbp_now _ 2>/dev/null </proc/uptime; then rbp_now=${rbp_now%.*}; else rbp_now=$(date +%s); fi
}

# The end of the launch: poststart, the folders it made removed, the status.
rbp_finish() {
  rbp_fs=$1
  rbp_hook poststart
  eval "set -- $rbp_cleanup"
  [ $# -eq 0 ] || rm -rf -- "$@"
  [ -z "$rbp_tk" ] || kill -s KILL "$rbp_tk" 2>/dev/null
  exit "$rbp_fs"
}

# After a failure under RBP_RESTART=on-failure: the back-off's wait, said in one line; a stop
# signal while waiting ends the launch.
rbp_restart_wait() {
  rbp_clock
  if [ $((rbp_now - rbp_t0)) -ge "$rbp_healthy" ]; then rbp_attempt=1; else rbp_attempt=$((rbp_attempt + 1)); fi
  # shellcheck disable=SC2086 # lists of words
  set -- $rbp_delays
  rbp_k=1
  while [ "$rbp_k" -lt "$rbp_attempt" ] && [ $# -gt 1 ]; do shift && rbp_k=$((rbp_k + 1)); done
  rbp_delay=$1
  # shellcheck disable=SC2086
  set -- $rbp_delays_shown
  rbp_k=1
  while [ "$rbp_k" -lt "$rbp_attempt" ] && [ $# -gt 1 ]; do shift && rbp_k=$((rbp_k + 1)); done
  printf '%s\n' "! restarting $rbp_what in $1 (restart $rbp_attempt, RBP_RESTART=on-failure; last status $rbp_st)"
  sleep "$rbp_delay" >/dev/null 2>&1 3<&- &
  rbp_sp=$!
  [ -z "$rbp_stopping" ] || kill -s KILL "$rbp_sp" 2>/dev/null
  wait "$rbp_sp" 2>/dev/null
  rbp_sp=
  [ -n "$rbp_stopping" ] || return 0
  printf '%s\n' "- SIG$rbp_stopping while waiting to restart: stopping"
  case $rbp_stopping in INT) rbp_finish 130 ;; HUP) rbp_finish 129 ;; *) rbp_finish 143 ;; esac
}

rbp_supervise() {
  printf '%s\n' "- the launch stays to supervise: $rbp_why"
  rbp_run=
  ! command -v setsid >/dev/null 2>&1 || rbp_run=setsid
  # sh starts a background process with SIGINT and SIGQUIT ignored: env gives them back.
  ! env --default-signal=INT,QUIT true 2>/dev/null || rbp_run="$rbp_run env --default-signal=INT,QUIT"
  rbp_sp='' rbp_tk='' rbp_stopping='' rbp_started='' rbp_attempt=0 rbp_done_0=''
  rbp_what='the app'
  [ -z "$rbp_route" ] || rbp_what='the app and its request flow'
  for rbp_sig in TERM INT HUP; do
    # shellcheck disable=SC2064 # the signal's name, now
    trap "rbp_on_stop $rbp_sig" "$rbp_sig"
  done
  for rbp_sig in QUIT USR1 USR2; do
    # shellcheck disable=SC2064
    trap "rbp_pass $rbp_sig" "$rbp_sig"
  done
  trap 'rbp_got=1' CHLD
  rbp_hook prestart || exit
  while :; do
    rbp_clock
    rbp_t0=$rbp_now
    rbp_run_once
    if [ "$rbp_cause" != failure ] || [ "$rbp_restart" != on-failure ]; then rbp_finish "$rbp_st"; fi
    rbp_restart_wait
  done
}
