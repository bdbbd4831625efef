/**
 * The shell form of a launch with a request-flow chain of processes (issue 27: memory beside the
 * app): the Node.js launcher plans the chain as always (request-flow/plan.ts: the order, the ports
 * it allocates, each middleware's command, environment and files, every user error), then replaces
 * itself (process.execve) with this POSIX sh program, which starts and watches the chain exactly as
 * the Node.js supervisor (supervisor.ts, entry.ts superviseHere) does, with the same log lines and
 * the same statuses, and no Node.js beside the app:
 * - the members start inside-out, the app first (with the launch's stdin), each in its own process
 *   group, each waited for until it listens (the kernel's table of listening sockets, /proc/net/tcp
 *   and tcp6) before the next starts, within RBP_LISTEN_TIMEOUT; the app listening on the public
 *   port instead is its own failure (96);
 * - when a member exits the others are stopped (SIGTERM to their groups, SIGKILL after
 *   RBP_STOP_TIMEOUT), and the launch exits with the status that names it (request-flow/middlewares.ts
 *   FAILURE_STATUS), the app's own status for the app; under RBP_RESTART=on-failure the whole chain
 *   starts again after the wait of restart.ts;
 * - SIGTERM, SIGINT and SIGHUP go to every member's group, and the launch exits with the app's status;
 *   QUIT, USR1 and USR2 go to the app's group (the Node.js launcher would have ended, or opened its
 *   inspector, leaving the chain unwatched).
 * A cache proxy's folder (its VCL) is written before each start and removed after each stop, as
 * vcl.ts prepareVarnishDir does. Only `block`, an HTTP server inside the launcher, needs Node.js.
 */
import { SH_READ_HELPERS, shQuote } from '../config/shell.ts';
import { redactUrl } from '../errors.ts';
import { SHELL_SUPERVISOR_NOTE, SUPERVISOR_LIB, exportLines, staticSettings } from './shell.ts';
import type { LaunchPlan } from './plan.ts';
import { MIDDLEWARE_SECRETS, type MiddlewareKind } from './request-flow/activation.ts';
import { APP_NOT_LISTENING_STATUS, FAILURE_STATUS, LABEL, type MiddlewareSpec } from './request-flow/middlewares.ts';
import { varnishDirFiles, wrapperVcl } from './request-flow/vcl.ts';
import { cacheVcl } from './request-flow/activation.ts';

/** The sh functions of the chain supervisor; they use SUPERVISOR_LIB's clock, sleep, hooks and watchdog. */
export const CHAIN_LIB = `# Field $1 of member $2 (name, shown, listen, hex, fail, nls, pid, done, st), in v.
rbp_f() { eval "v=\\\${$1_$2-}"; }
# A process that runs (not ended, not a zombie).
rbp_alive() { [ -n "$1" ] && read -r s 2>/dev/null </proc/$1/stat || return 1; s=\${s##*) }; case $s in Z* | X*) return 1 ;; esac; }
# Whether something listens on the port whose hex is $1: the kernel's table (the Node.js supervisor connects).
rbp_listening() {
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] || continue
    while read -r _ l _ st _; do case $l in *:"$1") [ "$st" != 0A ] || return 0 ;; esac; done <"$f"
  done
  return 1
}
rbp_kill() { [ -n "$2" ] || return 0; kill -s "$1" -- "-$2" 2>/dev/null || kill -s "$1" "$2" 2>/dev/null; }
# The names of members $@, joined as the Node.js supervisor joins them, in names.
rbp_names() { names=; for i in "$@"; do rbp_f name "$i"; names=\${names:+$names, }$v; done; }
# A stop signal: to every started member's group (each signal logged once); the loops then stop the
# chain. A trap runs between any two commands: it keeps to variables of its own (c*).
rbp_cstop() {
  got=1
  [ -z "$sp" ] || kill -s KILL "$sp" 2>/dev/null
  [ "$stopping" != "SIG$1" ] || return 0
  stopping=SIG$1
  [ -n "$chain_on" ] || return 0
  cnames=
  for ci in $started; do eval "cv=\\$name_$ci"; cnames=\${cnames:+$cnames, }$cv; done
  printf '%s\\n' "- SIG$1: stopping $cnames"
  for ci in $started; do eval "cv=\\$done_$ci cp=\\$pid_$ci"; [ -n "$cv" ] || rbp_kill "$1" "$cp"; done
}
# QUIT, USR1 and USR2 go to the app's group as they are (the app's own signals), as the app's shell form does.
rbp_cpass() { got=1; eval "cv=\\$done_0 cp=\\$pid_0"; [ -n "$cv" ] || rbp_kill "$1" "$cp"; }
# The members that ended since the last look: their status read (wait), the first in ended.
rbp_reap() {
  ended=
  for i in $started; do
    rbp_f done "$i"; [ -z "$v" ] || continue
    rbp_f pid "$i"; ! rbp_alive "$v" || continue
    # It has ended: wait returns at once, with its status, unless a trapped signal (a trap sets got)
    # cut it short; a wait again gives the same status.
    n_=0; while got_=$got; got=; wait "$v" 2>/dev/null; r_=$?; [ -n "$got" ] && [ "$n_" -lt 5 ]; do n_=$((n_ + 1)); done
    got=\${got:-$got_}; eval "st_$i=$r_ done_$i=1"
    ended=\${ended:-$i}
  done
}
# The members still running, in left.
rbp_left() { left=; for i in $started; do rbp_f done "$i"; [ -n "$v" ] || left="$left $i"; done; }
# The wait between two looks: a sleep that a child's end (SIGCHLD is trapped) or a trapped signal
# interrupts. Each look starts with got= (a trap sets it), and the wait is skipped when a trap ran
# during the look; a child that ends in the few microseconds between that test and the wait is
# reaped by wait without ending it (dash, POSIX leaves it open): the sleep bounds that case.
rbp_tick() {
  rbp_alive "$tk" && return 0
  [ -z "$tk" ] || wait "$tk" 2>/dev/null
  sleep 10 >/dev/null 2>&1 3<&- & tk=$!
}
# Stops every started member: SIGTERM to each group, SIGKILL after the stop timeout, then the clean-up.
rbp_stopall() {
  for i in $started; do rbp_f pid "$i"; rbp_kill TERM "$v"; done
  timed=; rbp_watchdog
  while :; do
    got=; rbp_reap; rbp_left
    [ -n "$left" ] && [ -z "$timed" ] || break
    rbp_tick; [ -n "$got" ] || wait "$tk" 2>/dev/null
  done
  kill "$wd" 2>/dev/null; wd=
  if [ -n "$left" ]; then rbp_names $left; rbp_dur "$stop_us"; printf '%s\\n' "! $names still running after $dur: SIGKILL"; fi
  # Every group, whatever its member left behind.
  for i in $started; do rbp_f pid "$i"; rbp_kill KILL "$v"; done
  while got=; rbp_reap; rbp_left; [ -n "$left" ]; do rbp_tick; [ -n "$got" ] || wait "$tk" 2>/dev/null; done
  for i in $started; do "rbp_clean_$i"; done
  [ -z "$tk" ] || { kill -s KILL "$tk" 2>/dev/null; wait "$tk" 2>/dev/null; }; tk=
  chain_on=
}
# The run ended by a signal: the chain stopped, the app's status (or 128+n when it never ran).
rbp_by_signal() {
  rbp_stopall; cause=signal
  if [ -n "$st_0" ]; then cst=$st_0; else rbp_signum "\${stopping#SIG}"; cst=$((128 + n)); fi
}
# Member $1 ended the run with status $2.
rbp_member_failed() {
  rbp_f name "$1"; nm=$v; rbp_f shown "$1"; shn=$v; rbp_f fail "$1"; fs=$v
  others=; [ "$started" = " 0" ] || others='; stopping the others'
  if [ "$1" = 0 ] && [ "$2" = 0 ]; then
    printf '%s\\n' "- app exited with status 0$others"; cause=clean-exit; cst=0
  else
    if [ "$2" -gt 128 ] && sig=$(kill -l "$2" 2>/dev/null) && [ -n "$sig" ]; then desc="was killed by SIG$sig"; else desc="exited with status $2"; fi
    printf '%s\\n' "! $nm ($shn) $desc$others"; cause=failure; cst=\${fs:-$2}
  fi
  rbp_stopall
  [ "$cause" != failure ] || [ "$restart" = on-failure ] || printf '%s\\n' "! launch exits with status $cst: $nm failed"
}
# Member $1 did not listen ($2 says how): the run ends with its status for that.
rbp_not_listening() {
  printf '%s\\n' "! $2"; rbp_f nls "$1"; cst=$v cause=failure; rbp_stopall
  [ "$restart" = on-failure ] || printf '%s\\n' "! launch exits with status $cst: $3 did not listen"
}
# One run of the chain (supervisor.ts supervise): sets cst (the status) and cause.
rbp_chain_run() {
  started= chain_on=1 cause= cst=
  for i in $members; do eval "pid_$i= done_$i= st_$i="; "rbp_prep_$i"; done
  rbp_now; c0=$now
  for i in $members; do
    [ -z "$stopping" ] || { rbp_by_signal; return; }
    rbp_f name "$i"; nm=$v; rbp_f listen "$i"; ls=$v; rbp_f hex "$i"; hx=$v; rbp_f shown "$i"
    printf '%s\\n' "- starting $nm on port $ls: $v"
    "rbp_member_$i"
    eval "pid_$i=$!"; started="$started $i"
    # A stop that came as the member started goes to it now.
    [ -z "$stopping" ] || { rbp_f pid "$i"; rbp_kill "\${stopping#SIG}" "$v"; }
    rbp_now; c1=$now; delay=20000
    while :; do
      # A stop signal first: the members it ends are no failure.
      [ -z "$stopping" ] || { rbp_by_signal; return; }
      rbp_reap
      if [ -n "$ended" ]; then rbp_f st "$ended"; rbp_member_failed "$ended" "$v"; return; fi
      ! rbp_listening "$hx" || break
      if [ "$i" = 0 ] && rbp_listening "$pub_hex"; then
        rbp_not_listening 0 "app listens on the public port $pub_port: behind request-flow middleware it must listen on $ls (its PORT variable)" app
        return
      fi
      rbp_now
      if [ $((now - c1)) -gt "$listen_us" ]; then
        rbp_dur "$listen_us"; rbp_not_listening "$i" "$nm did not listen on port $ls within $dur" "$nm"
        return
      fi
      rbp_sleep "$delay"; delay=$((delay * 2)); [ "$delay" -le 200000 ] || delay=200000
    done
    rbp_now; rbp_dur $((now - c1)); printf '%s\\n' "  - listening on $ls ($dur)"
  done
  rbp_now; rbp_dur $((now - c0)); printf '%s\\n' "- request flow ready: $route ($dur)"
  while :; do
    got=
    [ -z "$stopping" ] || { rbp_by_signal; return; }
    rbp_reap
    if [ -n "$ended" ]; then rbp_f st "$ended"; rbp_member_failed "$ended" "$v"; return; fi
    rbp_tick; [ -n "$got" ] || wait "$tk" 2>/dev/null
  done
}
# The chain, restarted as RBP_RESTART says (entry.ts superviseHere).
rbp_chain() {
  exec 3<&0 </dev/null
  ( rbp_appenv; rbp_hook prestart "$prestart" ) || exit
  printf '%s\\n' "- the launcher stays to supervise: $why ${SHELL_SUPERVISOR_NOTE}"
  run=; command -v setsid >/dev/null 2>&1 && run=setsid
  ! env --default-signal=INT,QUIT true 2>/dev/null || run="$run env --default-signal=INT,QUIT"
  sp= wd= tk= stopping= chain_on= started= attempt=0
  for s in TERM INT HUP; do trap "rbp_cstop $s" "$s"; done
  for s in QUIT USR1 USR2; do trap "rbp_cpass $s" "$s"; done
  trap 'got=1 timed=1' ALRM
  trap 'got=1' CHLD
  while :; do
    rbp_now; t0=$now
    rbp_chain_run
    if [ "$restart" != on-failure ] || [ "$cause" != failure ]; then rbp_poststart; exit "$cst"; fi
    rbp_restart_wait "$cst"
  done
}
# poststart in the app's environment (this form runs in the launch environment).
rbp_poststart() { ( rbp_appenv; rbp_hook poststart "$poststart" ); }
# What this form would run, as JSON (RBP_DRY_RUN=shell).
rbp_chain_account() {
  out='{"form":"shell","members":['; sep=
  for i in $members; do
    rbp_f name "$i"; rbp_json "$v"; rbp_f listen "$i"
    out=$out$sep'{"name":'$j',"listen":'$v',"argv":'; sep=,
    "rbp_argv_$i"; out=$out$j'}'
  done
  rbp_json "$why"; out=$out'],"mode":"supervise","modeWhy":'$j
  rbp_json "$route"; out=$out',"route":'$j',"port":'$port'}'
  printf '%s\\n' "$out"
}
rbp_jarr() { j2=; sep2=; for a in "$@"; do rbp_json "$a"; j2=$j2$sep2$j; sep2=,; done; j="[$j2]"; }`;

/** Whether the shell form can carry out this plan's request flow: processes only, and the kernel's port table to watch. */
export function chainFormProblem(plan: LaunchPlan, procNet: boolean): string | undefined {
  const flow = plan.requestFlow;
  if (!flow) return 'no request flow';
  if (flow.block) return 'the Node.js launcher answers 403 in front of the app';
  if (!procNet) return 'the shell form watches the ports in /proc/net/tcp, which this system does not have';
  return undefined;
}

const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/** The sh that starts a member ("$run" is setsid...): its environment, its folder, exec. */
function starter(i: number, argv: string[], cwd: string, unset: string[], env: Record<string, string>, stdin: string): string[] {
  const body = [
    ...(unset.length ? [`unset ${unset.join(' ')}`] : []),
    ...exportLines(env),
    `cd ${shQuote(cwd)} || exit 82`,
    `exec $run ${argv.map(shQuote).join(' ')}`,
  ];
  return [`rbp_member_${i}() { (`, ...body.map((l) => `  ${l}`), `) ${stdin} & }`, `rbp_argv_${i}() { rbp_jarr ${argv.map(shQuote).join(' ')}; }`];
}

/** The secrets a middleware of `kind` (or the app, with none) must not see. */
function othersSecrets(kind?: MiddlewareKind): string[] {
  return Object.keys(MIDDLEWARE_SECRETS).filter((k) => MIDDLEWARE_SECRETS[k] !== kind);
}

/** A cache proxy's folder, written before its start (vcl.ts prepareVarnishDir) and removed after its stop. */
function cacheFiles(i: number, m: MiddlewareSpec, plan: LaunchPlan, env: NodeJS.ProcessEnv): string[] {
  const vcl = cacheVcl(env, m.cwd);
  const dir = m.argv[m.argv.indexOf('-n') + 1]!.replace(/\/state$/, '');
  const { wrapper, copy } = varnishDirFiles(dir);
  return [
    `rbp_prep_${i}() {`,
    `  mkdir -m 755 ${shQuote(dir)} && cp ${shQuote(vcl!.path)} ${shQuote(copy)} && chmod 644 ${shQuote(copy)} &&`,
    `    printf '%s' ${shQuote(wrapperVcl(copy, m.forward))} >${shQuote(wrapper)} && chmod 644 ${shQuote(wrapper)} ||`,
    `    { printf '%s\\n' ${shQuote(`launch: could not write the cache proxy's folder ${dir}`)} >&2; exit 1; }`,
    '}',
    `rbp_clean_${i}() { rm -rf ${shQuote(dir)}; }`,
  ];
}

/**
 * The shell form of a plan with a request flow of processes (chainFormProblem said it can), run as
 * `/bin/sh -c <form> rbp-launch` in the launch environment (the app's variables and each secret are
 * given to their own member here). `why` is the launch mode's reason to supervise, for the log.
 */
export function chainForm(plan: LaunchPlan, env: NodeJS.ProcessEnv, why: string): string {
  const flow = plan.requestFlow!;
  const us = (ms: number) => String(Math.round(ms * 1000));
  const r = plan.restart;
  const inner = [...flow.middlewares].reverse();
  const members = [
    { name: 'app', shown: plan.argv.map(redactUrl).join(' '), listen: flow.appPort, fail: '', nls: APP_NOT_LISTENING_STATUS },
    ...inner.map((m) => ({ name: LABEL[m.kind], shown: m.shown, listen: m.listen, fail: String(FAILURE_STATUS[m.kind]), nls: FAILURE_STATUS[m.kind] })),
  ];
  const route = [`:${flow.publicPort}`, ...flow.chain, `app :${flow.appPort}`].join(' → ');
  const lines = [
    `# The launch's shell form with its request flow (lib/launch/shell-chain.ts): ${route}, restart ${r.policy}.`,
    `restart=${r.policy} first_us=${us(r.firstDelayMs)} max_us=${us(r.maxDelayMs)} healthy_us=${us(r.healthyRunMs)} stop_us=${us(plan.timeouts.stopMs)} listen_us=${us(plan.timeouts.listenMs)}`,
    ...staticSettings(plan),
    `why=${shQuote(why)} route=${shQuote(route)} port=${flow.publicPort} pub_port=${flow.publicPort} pub_hex=${hex(flow.publicPort)}`,
    `members=${shQuote(members.map((_, i) => i).join(' '))}`,
    ...members.flatMap((m, i) => [
      `name_${i}=${shQuote(m.name)} shown_${i}=${shQuote(m.shown)} listen_${i}=${m.listen} hex_${i}=${hex(m.listen)} fail_${i}=${m.fail} nls_${i}=${m.nls}`,
    ]),
    'unset RBP_DIRECT_LAUNCH',
    // The app's environment, for the app and its hooks: the plan's variables, no middleware's secret.
    'rbp_appenv() {',
    `  unset ${othersSecrets().join(' ')}`,
    ...exportLines(plan.env).map((l) => `  ${l}`),
    '}',
    ...starter(0, plan.argv, plan.cwd, othersSecrets(), plan.env, '0<&3 3<&-'),
    'rbp_prep_0() { :; }',
    'rbp_clean_0() { :; }',
    ...inner.flatMap((m, k) => [
      ...starter(k + 1, m.argv, m.cwd, othersSecrets(m.kind), {}, '</dev/null 3<&-'),
      ...(m.kind === 'cache' ? cacheFiles(k + 1, m, plan, env) : [`rbp_prep_${k + 1}() { :; }`, `rbp_clean_${k + 1}() { :; }`]),
    ]),
    'if [ "${RBP_DRY_RUN-}" = shell ]; then rbp_chain_account; exit 0; fi',
    'rbp_chain',
    '',
  ];
  return [...SH_READ_HELPERS, SUPERVISOR_LIB, CHAIN_LIB, ...lines].join('\n');
}
