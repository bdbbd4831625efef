/**
 * The shell form of the launch plan (plan.ts): a POSIX sh program that starts the app as the plan
 * says, with no Node.js beside it (issue 27: memory beside the app). It execs the app when nothing
 * needs supervising (under the minimal init when it is PID 1, pid1.ts); otherwise it stays as a
 * small sh supervisor, as the Node.js launcher would (entry.ts, supervisor.ts), with the same log
 * lines:
 * - the app runs in its own process group (setsid, where the image has it) with the launch's stdin;
 *   SIGTERM, SIGINT and SIGHUP are passed on to the whole group (the first of each is logged), then,
 *   after RBP_STOP_TIMEOUT, SIGKILL; QUIT, USR1 and USR2 are passed on as they are;
 * - the launch exits with the app's status (128+n when a signal ended it);
 * - with RBP_RESTART=on-failure a crash (a non-zero status) is followed by the wait of restart.ts
 *   (doubling from RBP_RESTART_FIRST_DELAY up to 30 s, reset by a run of a minute), one line each;
 *   a clean exit ends the run; a stop signal while waiting ends it with 128+n;
 * - scripts.prestart runs before the app, scripts.poststart after it ends, whatever ended it.
 * While it supervises, the shell waits on the app, so as PID 1 it also reaps orphans.
 *
 * Two renderings share this code: `shellForm` (a plan decided at run time: the Node.js launcher
 * execs into it when nothing but supervision keeps it beside the app) and the direct launch script
 * (direct.ts, written at build). With RBP_DRY_RUN=shell either prints what it would run as JSON
 * (`rbp_account`): the test of both forms compares that with the Node.js launcher's plan.
 */
import { SH_READ_HELPERS, shQuote } from '../config/shell.ts';
import { redactUrl } from '../errors.ts';
import { KEEPS_CHILDREN_WHY, RESTART_WHY, shellKeepsChildren } from './exec.ts';
import { INIT_NAME, INIT_SCRIPT, initNote } from './pid1.ts';
import { superviseReason, type LaunchPlan } from './plan.ts';
import { RESTART_VARIABLE } from './restart.ts';

/** The shell form's own name (its $0), as `ps` shows it. */
export const SHELL_NAME = 'rbp-launch';

/** What the shell supervisor adds to the Node.js launcher's line, so the log says which one stayed. */
export const SHELL_SUPERVISOR_NOTE = '(as /bin/sh: no Node.js beside the app)';

/**
 * The sh functions every shell form carries. They read these variables, set by the form:
 * restart (no|on-failure), first_us, max_us, healthy_us, stop_us (microseconds), restart_by (the
 * restart line's reason), pre_why and post_why (the reasons to supervise that do not depend on the
 * run environment), prestart and poststart (commands, or empty), shown (the command for the log),
 * exec_note (printed before an exec), init_note (before an exec under the minimal init, as PID 1), and the plan's variable names in plan_vars.
 */
export const SUPERVISOR_LIB = `rbp_init=${shQuote(INIT_SCRIPT)}
nl='
' bs='\\' dq='"' tab=$(printf '\\t') cr=$(printf '\\r')
# The supervisor's clock in microseconds: /proc/uptime (no process), else date.
rbp_now() {
  now=
  if read -r up _ 2>/dev/null </proc/uptime; then case $up in *.??) now=\${up%.*}\${up#*.} ;; esac; fi
  [ -n "$now" ] || now=$(date +%s)00
  unzero "$now"; now=$((z * 10000))
}
# formatDuration (lib/log.ts) of $1 microseconds, in dur.
rbp_dur() {
  if [ "$1" -lt 1000000 ]; then dur=$((($1 + 500) / 1000))ms
  elif [ "$1" -lt 60000000 ]; then d=$((($1 + 50000) / 100000)); dur=$((d / 10)).$((d % 10))s
  else d=$(((($1 % 60000000) + 500000) / 1000000)); [ "$d" -ge 10 ] || d=0$d; dur=$(($1 / 60000000))m\${d}s
  fi
}
# restartDelay (lib/launch/restart.ts) of restart number $1, in delay (microseconds).
rbp_delay() {
  delay=$first_us; i=1
  while [ "$i" -lt "$1" ] && [ "$delay" -lt "$max_us" ]; do delay=$((delay * 2)); i=$((i + 1)); done
  [ "$delay" -le "$max_us" ] || delay=$max_us
}
# Seconds, with microseconds, of $1 microseconds, in secs.
rbp_secs() { secs=$(($1 / 1000000)).$(printf '%06d' $(($1 % 1000000))); }
# A sleep of $1 microseconds that a stop signal ends: in the background, so that wait returns on a
# trap. A sleep that takes no fractions gets whole seconds.
# A stop that came before sp was set (between two commands) is caught by the check after it. The
# sleep gets SIGKILL: a forked child keeps the shell's handlers until it execs, and would lose a TERM.
rbp_sleep() {
  rbp_secs "$1"
  sleep "$secs" >/dev/null 2>&1 & sp=$!
  [ -z "$stopping" ] || kill -s KILL "$sp" 2>/dev/null
  wait "$sp" 2>/dev/null
  [ $? -ne 1 ] || [ -n "$stopping" ] || { sleep $((($1 + 999999) / 1000000)) >/dev/null 2>&1 & sp=$!; [ -z "$stopping" ] || kill -s KILL "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; }
  sp=
}
# A signal to the app's process group (its own, with setsid), else to the app alone.
rbp_group() { [ -n "$pid" ] || return 0; kill -s "$1" -- "-$pid" 2>/dev/null || kill -s "$1" "$pid" 2>/dev/null; }
rbp_signum() { case $1 in HUP) n=1 ;; INT) n=2 ;; QUIT) n=3 ;; USR1) n=10 ;; USR2) n=12 ;; *) n=15 ;; esac; }
# A stop signal: passed on to the app's group (each signal logged once), then the stop timeout runs.
rbp_stop() {
  got=1
  [ -z "$sp" ] || kill -s KILL "$sp" 2>/dev/null
  if [ -n "$pid" ] && [ "$stopping" != "SIG$1" ]; then
    printf '%s\\n' "- SIG$1: stopping app"
    rbp_group "$1"
  fi
  stopping=SIG$1
}
rbp_pass() { got=1; rbp_group "$1"; }
# RBP_STOP_TIMEOUT after a stop signal, the watchdog (a shell of its own, with no output: it would
# keep the launch's stdout open) sends SIGALRM to this supervisor, which kills the app's group if the
# app still runs (rbp_timeout). The watchdog never kills anything itself, so a pid reused after the
# app ended is safe; it signals only the shell that is still its parent, and is told to stop (TERM)
# when the app ends first.
rbp_watchdog() {
  rbp_secs "$stop_us"
  /bin/sh -c 'trap "kill -s KILL \\$s 2>/dev/null; exit 1" TERM; sleep "$1" & s=$!; wait "$s" || exit 1
    read -r _ _ _ pp _ </proc/$$/stat 2>/dev/null || pp=$PPID; [ "$pp" != "$PPID" ] || kill -s ALRM "$PPID"' rbp-stop-timeout "$secs" </dev/null >/dev/null 2>&1 3<&- &
  wd=$!
}
rbp_timeout() {
  got=1
  [ -n "$pid" ] || return 0
  rbp_dur "$stop_us"; printf '%s\\n' "! app still running after $dur: SIGKILL"
  rbp_group KILL
}
# A hook ($1 prestart or poststart, $2 its command), as npm runs it.
rbp_hook() {
  [ -n "$2" ] || return 0
  npm_lifecycle_event=$1 /bin/sh -c "$2" 0<&3 && return 0
  st=$?
  printf 'launch: the %s script failed (exit %s): %s\\n' "$1" "$st" "$2" >&2
  return "$st"
}
# Every reason to stay beside the app, in the Node.js launcher's order (exec.ts chooseMode), in why.
rbp_why() {
  why=$pre_why
  [ "$restart" != on-failure ] || why=\${why:+$why; }$restart_why
  [ -z "$post_why" ] || why=\${why:+$why; }$post_why
}
# Starts the app ("$@"): prestart, then an exec (under the minimal init as PID 1), or the supervisor.
rbp_start() {
  exec 3<&0
  rbp_hook prestart "$prestart" || exit
  rbp_why
  [ -z "$why" ] || rbp_supervise "$@"
  exec 3<&-
  if [ "$$" = 1 ]; then printf '%s\\n' "$init_note"; exec /bin/sh -c "$rbp_init" ${INIT_NAME} "$@"; fi
  printf '%s\\n' "$exec_note"
  exec "$@"
}
rbp_supervise() {
  printf '%s\\n' "- the launcher stays to supervise: $why ${SHELL_SUPERVISOR_NOTE}"
  # sh starts a background command with SIGINT and SIGQUIT ignored: env gives them back their default.
  run=; command -v setsid >/dev/null 2>&1 && run=setsid
  ! env --default-signal=INT,QUIT true 2>/dev/null || run="$run env --default-signal=INT,QUIT"
  pid= sp= wd= stopping= attempt=0
  for s in TERM INT HUP; do trap "rbp_stop $s" "$s"; done
  for s in QUIT USR1 USR2; do trap "rbp_pass $s" "$s"; done
  trap rbp_timeout ALRM
  while :; do
    # A stop before the app starts: nothing to pass it on to.
    if [ -n "$stopping" ]; then rbp_hook poststart "$poststart"; rbp_signum "\${stopping#SIG}"; exit $((128 + n)); fi
    rbp_now; t0=$now
    printf '%s\\n' "- starting app: $shown"
    $run "$@" 0<&3 3<&- &
    pid=$!
    # A stop that came between the start and pid=$! found no app to pass it on to: it goes now.
    [ -z "$stopping" ] || { printf '%s\\n' "- $stopping: stopping app"; rbp_group "\${stopping#SIG}"; }
    # A trapped signal ends wait early (its handler sets got): wait again for the app's own status.
    # The stop timeout starts here, not in the trap: dash runs traps with signals blocked, and a
    # process started there would inherit that.
    while :; do
      [ -z "$stopping" ] || [ -n "$wd" ] || rbp_watchdog
      got=; wait "$pid" 2>/dev/null; st=$?; [ -n "$got" ] || break
    done
    if [ -n "$wd" ]; then
      kill "$wd" 2>/dev/null
    fi
    # Whatever the app left in its group goes too.
    rbp_group TERM; rbp_group KILL; pid= wd=
    if [ -n "$stopping" ]; then rbp_hook poststart "$poststart"; exit "$st"; fi
    if [ "$st" = 0 ]; then printf '%s\\n' "- app exited with status 0"; rbp_hook poststart "$poststart"; exit 0; fi
    if [ "$st" -gt 128 ] && name=$(kill -l "$st" 2>/dev/null) && [ -n "$name" ]; then desc="was killed by SIG$name"; else desc="exited with status $st"; fi
    printf '%s\\n' "! app ($shown) $desc"
    if [ "$restart" != on-failure ]; then printf '%s\\n' "! launch exits with status $st: app failed"; rbp_hook poststart "$poststart"; exit "$st"; fi
    rbp_restart_wait "$st"
  done
}
rbp_poststart() { rbp_hook poststart "$poststart"; }
# After a crash under on-failure ($1 the last status, t0 the run's start, attempt the restarts so
# far): the wait of restart.ts, with its line; a stop signal while waiting ends the launch.
rbp_restart_wait() {
  rbp_now
  if [ $((now - t0)) -ge "$healthy_us" ]; then attempt=1; else attempt=$((attempt + 1)); fi
  rbp_delay "$attempt"; rbp_dur "$delay"
  printf '%s\\n' "! restarting the app in $dur (restart $attempt, $restart_by; last status $1)"
  rbp_sleep "$delay"
  [ -n "$stopping" ] || return 0
  printf '%s\\n' "- $stopping while waiting to restart: stopping"
  rbp_poststart; rbp_signum "\${stopping#SIG}"; exit $((128 + n))
}
# $1 as a JSON string, in j.
rbp_json() {
  s=$1 j=
  while [ -n "$s" ]; do
    c=\${s%"\${s#?}"}; s=\${s#?}
    case $c in
      "$bs") j=$j$bs$bs ;;
      "$dq") j=$j$bs$dq ;;
      "$nl") j=$j\${bs}n ;;
      "$tab") j=$j\${bs}t ;;
      "$cr") j=$j\${bs}r ;;
      *) j=$j$c ;;
    esac
  done
  j=$dq$j$dq
}
# $1 microseconds as a JSON number of milliseconds, in j.
rbp_ms() { f=$(printf '%03d' $(($1 % 1000))); while case $f in *0) true ;; *) false ;; esac; do f=\${f%0}; done; j=$(($1 / 1000))\${f:+.$f}; }
# What this form would run ("$@"), as JSON (RBP_DRY_RUN=shell).
rbp_account() {
  rbp_why
  out='{"form":"shell","argv":['; sep=
  for a in "$@"; do rbp_json "$a"; out=$out$sep$j; sep=,; done
  rbp_json "$(pwd -P)"; out=$out'],"cwd":'$j',"env":{'; sep=
  for v in $plan_vars; do eval "isset=\\\${$v+1} x=\\\${$v-}"; [ -n "$isset" ] || continue; rbp_json "$x"; out=$out$sep$dq$v$dq:$j; sep=,; done
  rbp_json "$restart"; out=$out'},"port":'$port',"restart":{"policy":'$j
  rbp_ms "$first_us"; out=$out',"firstDelayMs":'$j; rbp_ms "$max_us"; out=$out',"maxDelayMs":'$j
  rbp_ms "$healthy_us"; out=$out',"healthyRunMs":'$j'}'; rbp_ms "$stop_us"; out=$out',"stopTimeoutMs":'$j
  if [ -n "$why" ]; then rbp_json "$why"; out=$out',"mode":"supervise","modeWhy":'$j; else out=$out',"mode":"exec"'; fi
  rbp_json "$prestart"; out=$out',"hooks":{"prestart":'$j; rbp_json "$poststart"; out=$out',"poststart":'$j'}}'
  printf '%s\\n' "$out"
}`;

/** The settings the supervisor reads, for a plan decided at run time. */
function settings(plan: LaunchPlan): string[] {
  const r = plan.restart;
  const us = (ms: number) => String(Math.round(ms * 1000));
  return [
    `restart=${plan.restart.policy} first_us=${us(r.firstDelayMs)} max_us=${us(r.maxDelayMs)} healthy_us=${us(r.healthyRunMs)} stop_us=${us(plan.timeouts.stopMs)}`,
    ...staticSettings(plan),
  ];
}

/**
 * The settings that do not depend on the run environment: the restart line's reason, the reasons to
 * supervise, the hooks, the command for the log and the plan's variable names. `word` renders a
 * value as an sh word (the direct script splices its port and app references in).
 */
export function staticSettings(
  plan: Pick<LaunchPlan, 'argv' | 'env' | 'hooks' | 'supervise'>,
  word: (text: string) => string = shQuote,
  execNote?: string,
): string[] {
  return [
    `restart_by=${shQuote(`${RESTART_VARIABLE}=on-failure`)} restart_why=${shQuote(RESTART_WHY)}`,
    `pre_why=${shQuote(superviseReason(plan) ?? '')} post_why=${shQuote(shellKeepsChildren(plan.argv) ? KEEPS_CHILDREN_WHY : '')}`,
    `prestart=${shQuote(plan.hooks.prestart ?? '')} poststart=${shQuote(plan.hooks.poststart ?? '')}`,
    `shown=${word(plan.argv.map(redactUrl).join(' '))}`,
    `exec_note=${word(execNote ?? `- exec ${plan.argv[0]} (the launch's shell form starts it: nothing to supervise)`)}`,
    `init_note=${word(initNote(plan.argv[0] ?? ''))}`,
    `plan_vars=${shQuote(Object.keys(plan.env).join(' '))}`,
  ];
}

/** The lines that export the plan's variables, each value an sh word. */
export function exportLines(env: Record<string, string>, word: (text: string) => string = shQuote): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${word(v)}; export ${k}`);
}

/**
 * The shell form of a plan decided at run time (no request flow: the chain needs the Node.js
 * launcher), run as `/bin/sh -c <form> rbp-launch`. Its own helpers come from lib/config/shell.ts.
 */
export function shellForm(plan: LaunchPlan): string {
  if (plan.requestFlow) throw new Error('lib/launch/shell.ts: a request flow is supervised by the Node.js launcher');
  return [
    `# The launch's shell form (lib/launch/shell.ts): ${plan.argv[0]} on port ${plan.port}, restart ${plan.restart.policy}.`,
    ...SH_READ_HELPERS,
    SUPERVISOR_LIB,
    ...settings(plan),
    `port=${plan.port}`,
    `cd ${shQuote(plan.cwd)} || exit 82`,
    'unset RBP_DIRECT_LAUNCH',
    ...exportLines(plan.env),
    `rbp_app() { rbp_do=$1; set -- ${plan.argv.map(shQuote).join(' ')}; "$rbp_do" "$@"; }`,
    'if [ "${RBP_DRY_RUN-}" = shell ]; then rbp_app rbp_account; exit 0; fi',
    'rbp_app rbp_start',
    '',
  ].join('\n');
}
