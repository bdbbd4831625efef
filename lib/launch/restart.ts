/**
 * Restart on crash (contract, "Other conditions": the application crash behaviour is an automatic
 * restart). RBP_RESTART, set by the platform (`rbp run --restart`, `rbp deploy`), is `no` or
 * `on-failure`; unset means `no`. With on-failure the launcher supervises the app and starts it again
 * after it exits with a non-zero status, waiting 1 s, 2 s, 4 s… up to 30 s between attempts; a run
 * that lasted a minute resets that back-off. A clean exit (status 0) and a stop by signal end the run.
 */
import { read } from '../config/read.ts';
import { UserError } from '../errors.ts';

export const RESTART_VARIABLE = 'RBP_RESTART';
export const RESTART_WHY = 'RBP_RESTART=on-failure: the launch starts it again when it crashes';
export const RESTART_POLICIES = ['no', 'on-failure'] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

export const FIRST_DELAY_MS = 1000;
export const MAX_DELAY_MS = 30_000;
/** A run at least this long was healthy: the next crash starts the back-off again. */
export const HEALTHY_RUN_MS = 60_000;

/** The restart policy as the launch plan holds it (plan.ts). */
export interface RestartPlan {
  policy: RestartPolicy;
  /** The first wait (RBP_RESTART_FIRST_DELAY); each next one doubles, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A run this long resets the back-off. */
  healthyRunMs: number;
}

/** RBP_RESTART and RBP_RESTART_FIRST_DELAY of the launch environment (an invalid value is its user error). */
export function restartPlan(env: NodeJS.ProcessEnv): RestartPlan {
  return {
    policy: read<RestartPolicy>(env, RESTART_VARIABLE)?.value ?? 'no',
    firstDelayMs: read<number>(env, 'RBP_RESTART_FIRST_DELAY')!.value * 1000,
    maxDelayMs: MAX_DELAY_MS,
    healthyRunMs: HEALTHY_RUN_MS,
  };
}

/** The `--restart` flag of rbp run and rbp deploy. */
export function restartPolicy(value: string | undefined, what = '--restart'): RestartPolicy {
  const v = value?.trim();
  if (!v) return 'no';
  if ((RESTART_POLICIES as readonly string[]).includes(v)) return v as RestartPolicy;
  throw new UserError({
    id: 'launch/restart/invalid',
    title: `${what} is neither no nor on-failure`,
    seen: { what, value: v },
    rule: `${what} is \`no\` (a crashed app stays stopped) or \`on-failure\` (it is started again, with back-off).`,
    fix: `Use ${what} no or ${what} on-failure.`,
  });
}

/** The wait before restart number `attempt` (1, 2, …): doubling from 1 s, at most 30 s. */
export function restartDelay(attempt: number, first = FIRST_DELAY_MS, max = MAX_DELAY_MS): number {
  return Math.min(max, first * 2 ** Math.max(0, attempt - 1));
}

/** The waits before restart 1, 2, ... up to the first that reaches the maximum, which then repeats. */
export function restartDelays(plan: Pick<RestartPlan, 'firstDelayMs' | 'maxDelayMs'>): number[] {
  const delays: number[] = [];
  for (let attempt = 1; delays.at(-1) !== plan.maxDelayMs && attempt <= 64; attempt++) delays.push(restartDelay(attempt, plan.firstDelayMs, plan.maxDelayMs));
  return delays;
}
