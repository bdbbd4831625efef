/**
 * The launch plan as data for the sh that carries it out (sh/rbp-launch.sh, sh/supervise.sh): lines of
 * sh assignments of rbp_* variables, every value single-quoted, which the launch evaluates (the
 * planner's output) or sources (a stored plan). A list the sh expands again (an argv, NAME=value
 * pairs) is itself a string of quoted words, for `eval "set -- $rbp_0_argv"`. Every value the sh
 * needs is computed here (ports as hex, timeouts as ticks, the back-off's waits and how the log
 * shows them): the sh applies no rule of its own. supervise.sh lists the variables.
 */
import path from 'node:path';
import { redactUrl } from '../errors.ts';
import { formatDuration } from '../log.ts';
import type { LaunchPlan } from './plan.ts';
import { MIDDLEWARE_SECRETS } from './request-flow/activation.ts';
import { APP_NOT_LISTENING_STATUS, FAILURE_STATUS, LABEL } from './request-flow/middlewares.ts';
import { HEALTHY_RUN_MS, restartDelays } from './restart.ts';

/** A word for sh: single-quoted. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** How a value becomes an sh word: quoted as it is, or with references spliced in (a stored plan). */
export type Word = (text: string) => string;

/** One process of the launch, as the supervisor starts it. */
interface Member {
  name: string;
  /** The program, for the line that says how it ended. */
  prog: string;
  shown: string;
  argv: string[];
  env: Record<string, string>;
  /** The secrets it may not see. */
  unset: string[];
  listen?: number;
  /** The launch's status when it ends the run (none: the app's own). */
  status?: number;
  /** The launch's status when it does not listen in time. */
  nls?: number;
}

/** The program a command runs: the first word of a `sh -c` script (after `exec`), else argv[0]'s name. */
export function programOf(argv: string[]): string {
  const script = ['sh', '/bin/sh', 'bash', '/bin/bash'].includes(argv[0] ?? '') && argv[1] === '-c' ? argv[2] : undefined;
  const words = script
    ? script
        .trim()
        .split(/\s+/)
        .filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) && w !== 'exec')
    : argv;
  return path.basename(words[0] ?? argv[0] ?? '');
}

const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/** The plan's processes, from the app outward: the order they start in. */
function members(plan: LaunchPlan): Member[] {
  const flow = plan.requestFlow;
  const secrets = Object.keys(MIDDLEWARE_SECRETS);
  const app: Member = {
    name: 'app',
    prog: programOf(plan.argv),
    shown: plan.argv.map(redactUrl).join(' '),
    argv: plan.argv,
    env: plan.env,
    unset: secrets,
    ...(flow ? { listen: flow.appPort, nls: APP_NOT_LISTENING_STATUS } : {}),
  };
  const outer = [...(flow?.middlewares ?? [])].reverse().map((m): Member => ({
    name: LABEL[m.kind],
    prog: m.kind === 'block' ? 'node' : programOf(m.argv),
    shown: m.shown,
    argv: m.argv,
    env: {},
    unset: secrets.filter((k) => MIDDLEWARE_SECRETS[k] !== m.kind),
    listen: m.listen,
    status: FAILURE_STATUS[m.kind],
    nls: FAILURE_STATUS[m.kind],
  }));
  return [app, ...outer];
}

const ticks = (ms: number, tick: number) => Math.max(1, Math.ceil(ms / tick));

/** The assignments of the plan; `word` renders each value (the stored plan splices its references in). */
export function planData(plan: LaunchPlan, word: Word = shQuote, cleanup: string[] = []): string[] {
  const words = (xs: string[]) => shQuote(xs.map(word).join(' '));
  const flow = plan.requestFlow;
  const delays = restartDelays(plan.restart);
  const lines = [
    `rbp_mode=${plan.mode} rbp_why=${shQuote(plan.why)} rbp_cwd=${word(plan.cwd)}`,
    `rbp_prestart=${shQuote(plan.hooks.prestart ?? '')} rbp_poststart=${shQuote(plan.hooks.poststart ?? '')}`,
    `rbp_restart=${plan.restart.policy} rbp_healthy=${HEALTHY_RUN_MS / 1000}`,
    `rbp_delays=${shQuote(delays.map((ms) => String(ms / 1000)).join(' '))} rbp_delays_shown=${shQuote(delays.map(formatDuration).join(' '))}`,
    `rbp_stop_ticks=${ticks(plan.timeouts.stopMs, 100)} rbp_stop_shown=${shQuote(formatDuration(plan.timeouts.stopMs))}`,
    `rbp_listen_ticks=${ticks(plan.timeouts.listenMs, 50)} rbp_listen_shown=${shQuote(formatDuration(plan.timeouts.listenMs))}`,
    `rbp_pub=${flow?.publicPort ?? ''} rbp_pub_hex=${flow ? hex(flow.publicPort) : ''}`,
    `rbp_route=${shQuote(flow ? [`:${flow.publicPort}`, ...(flow.block ? ['403 (blocked)'] : flow.chain), `app :${flow.appPort}`].join(' → ') : '')}`,
    `rbp_cleanup=${words(cleanup)}`,
  ];
  const all = members(plan);
  lines.push(`rbp_members=${shQuote(all.map((_, i) => i).join(' '))}`);
  all.forEach((m, i) => {
    lines.push(
      `rbp_${i}_name=${shQuote(m.name)} rbp_${i}_prog=${shQuote(m.prog)} rbp_${i}_shown=${word(m.shown)}`,
      `rbp_${i}_argv=${words(m.argv)}`,
      `rbp_${i}_env=${words(Object.entries(m.env).map(([k, v]) => `${k}=${v}`))} rbp_${i}_unset=${shQuote(m.unset.join(' '))}`,
      `rbp_${i}_listen=${m.listen ?? ''} rbp_${i}_hex=${m.listen ? hex(m.listen) : ''} rbp_${i}_status=${m.status ?? ''} rbp_${i}_nls=${m.nls ?? ''}`,
    );
  });
  return lines;
}
