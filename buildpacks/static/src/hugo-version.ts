/**
 * CC_HUGO_VERSION (contract, Versioning and Limits 6): only the listed minors are accepted, 0.149 by
 * default, and from June 15th (2026) only 0.160 and later are supported. After that date an app that
 * never set CC_HUGO_VERSION gets 0.160, the oldest supported version, and the log says so; one that
 * asks for an older version gets an error listing what is accepted (building with another version
 * than the one asked for would hide the change). "Today" is the build machine's clock, or RBP_NOW
 * (an ISO 8601 date or date-time), which is how tests cross the date.
 */
import { read, spec } from '../../../lib/config/read.ts';
import { UserError } from '../../../lib/errors.ts';

const HUGO = spec('CC_HUGO_VERSION');
/** The listed minors and the default, as lib/config declares them. */
export const HUGO_VERSIONS = HUGO.kind.type === 'enum' ? HUGO.kind.values : [];
export const HUGO_DEFAULT = HUGO.default!;
/** The first day on which only SUPPORTED_FROM and later are supported (UTC). */
export const HUGO_CUTOFF = '2026-06-15';
export const HUGO_SUPPORTED_FROM = '0.160';
export const NOW_VARIABLE = 'RBP_NOW';

export interface HugoChoice {
  /** A `0.<minor>` from the list. */
  version: string;
  /** Why, for the log. */
  reason: string;
}

function minorOf(v: string): number {
  return Number(v.split('.')[1]);
}

/** The versions accepted on `now`. */
export function acceptedHugoVersions(now: Date): string[] {
  const afterCutoff = now.getTime() >= Date.parse(`${HUGO_CUTOFF}T00:00:00Z`);
  return HUGO_VERSIONS.filter((v) => !afterCutoff || minorOf(v) >= minorOf(HUGO_SUPPORTED_FROM));
}

/** RBP_NOW (lib/config, an ISO date or date-time; another value is its user error), else the clock. */
export function today(env: Record<string, string | undefined>): Date {
  const now = read(env, NOW_VARIABLE);
  return now ? new Date(Date.parse(now.value)) : new Date();
}

export function chooseHugoVersion(requested: string | undefined, now: Date): HugoChoice {
  const accepted = acceptedHugoVersions(now);
  if (requested === undefined) {
    if (accepted.includes(HUGO_DEFAULT)) return { version: HUGO_DEFAULT, reason: `the default (CC_HUGO_VERSION is not set)` };
    return {
      version: HUGO_SUPPORTED_FROM,
      reason: `CC_HUGO_VERSION is not set and the default ${HUGO_DEFAULT} is no longer supported since ${HUGO_CUTOFF}: using ${HUGO_SUPPORTED_FROM}, the oldest supported version`,
    };
  }
  if (accepted.includes(requested)) return { version: requested, reason: `CC_HUGO_VERSION=${requested}` };
  const listed = HUGO_VERSIONS.includes(requested);
  throw new UserError({
    id: listed ? 'static/hugo-version/unsupported' : 'config/CC_HUGO_VERSION/invalid',
    title: listed ? `Hugo ${requested} is no longer supported` : `CC_HUGO_VERSION=${requested} is not a Hugo version this runtime offers`,
    seen: { what: 'CC_HUGO_VERSION', value: requested, where: 'the application environment' },
    rule: listed
      ? `from ${HUGO_CUTOFF} only Hugo ${HUGO_SUPPORTED_FROM} and later are supported`
      : `CC_HUGO_VERSION accepts only these values (default ${accepted.includes(HUGO_DEFAULT) ? HUGO_DEFAULT : HUGO_SUPPORTED_FROM})`,
    details: [`accepted: ${accepted.join(', ')}`],
    fix: `set CC_HUGO_VERSION to one of ${accepted.join(', ')}, or remove it`,
  });
}
