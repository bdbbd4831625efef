/**
 * The launch as PID 1 (issue 30 item 6). In an app image the launch process is PID 1: the kernel
 * delivers a signal to PID 1 only when that process handles it, so an app that installs no SIGTERM
 * handler (most Node.js apps) ignores `podman stop`'s SIGTERM and is killed after the grace period
 * (exit 137). Whichever launch runs as PID 1 (the Node.js launcher, or the direct launch script of
 * a static or PHP app) therefore does not become the app itself: it starts it under this minimal
 * init, a POSIX sh program that runs the app as its only child, forwards the stop signals to it,
 * reaps every child that ends (orphans are re-parented to PID 1, as tini does), and exits with the
 * app's status (143 for an app SIGTERM ended). It needs no binary beyond the /bin/sh every run image
 * has, and works the same under rbp's images and the reference launcher's (`/cnb/process/web` execs
 * our launch). Not PID 1 (rbp run, `podman run --init`, a platform's own init): nothing changes.
 * When the Node.js launcher must stay beside the app (a request flow, poststart, a restart policy), it
 * is PID 1 itself: it handles the stop signals and passes them on to the app's process group (the
 * supervisor), but orphans the app leaves are reaped only when it exits.
 */

/** Where the init's shell is: the one the direct launch scripts already run on. */
export const INIT_SHELL = '/bin/sh';

/** Signals the init passes on to the app (podman stop: TERM; Ctrl-C: INT; reloads: HUP, USR1, USR2). */
export const FORWARDED_SIGNALS = ['TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2'] as const;

/**
 * The init, run as `/bin/sh -c INIT_SCRIPT rbp-init <app argv...>`.
 * - fd 0 is handed to the app explicitly: sh gives a background job /dev/null otherwise; and sh starts
 *   it with SIGINT and SIGQUIT ignored, which `env --default-signal` (GNU coreutils) undoes.
 * - A trapped signal makes `wait` return early (128 + n); its trap forwards it to the app and notes
 *   it, and the loop waits again. A wait that no signal interrupted gives the app's own status, which
 *   the shell keeps for `$!`: a wait raced by a late signal is answered again with the same status.
 * - Waiting is also what reaps the orphans: dash waits on any child while it waits for the app.
 */
export const INIT_SCRIPT = [
  'exec 3<&0',
  'd=; ! env --default-signal=INT,QUIT true 2>/dev/null || d="env --default-signal=INT,QUIT"',
  '$d "$@" 0<&3 3<&- &',
  'child=$!',
  'exec 3<&-',
  `for s in ${FORWARDED_SIGNALS.join(' ')}; do trap "got=1; kill -$s $child 2>/dev/null" "$s"; done`,
  'while :; do',
  '  got=',
  '  wait "$child"',
  '  status=$?',
  '  [ -n "$got" ] || exit "$status"',
  'done',
].join('\n');

/** The init's own name (its $0), as `ps` shows it. */
export const INIT_NAME = 'rbp-init';

/** argv that runs `app` under the init. */
/** The log line of a launch that execs its app under the minimal init: the Node.js launcher's and the shell form's. */
export function initNote(argv0: string): string {
  return `- exec ${argv0} under a minimal init (the launch is PID 1: ${INIT_SHELL} forwards stop signals to it and reaps children)`;
}

export function underInit(app: readonly string[]): string[] {
  return [INIT_SHELL, '-c', INIT_SCRIPT, INIT_NAME, ...app];
}

/** Whether this process is PID 1 of its PID namespace (a container's first process). */
export function isPid1(pid: number = process.pid): boolean {
  return pid === 1;
}
