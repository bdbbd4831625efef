/**
 * The one way a test says it needs something of the machine (a tool, a service, root): in CI (`CI`
 * set) a missing requirement fails the tests that need it, since .ci/run installs everything; on a
 * laptop they are skipped, and the reason is printed once, with how to get what is missing.
 */
import { beforeAll, describe } from 'vitest';
import { findVarnishd } from '../../lib/launch/request-flow/vcl.ts';

export const IN_CI = Boolean(process.env.CI);

export interface Requirement<T> {
  /** Skip the tests that need it: only outside CI, when it is missing. */
  skip: boolean;
  /** What it found; throws (failing the test) when it is missing, which only happens in CI. */
  value(): T;
}

/**
 * `found` is the thing itself (a path, true), or undefined/false when the machine lacks it. `what`
 * names it, `how` says how to get it, `who` names the tests for the printed reason.
 */
export function requirement<T>(found: T | undefined | false | null, o: { what: string; how: string; who: string }): Requirement<T> {
  if (found !== undefined && found !== false && found !== null) return { skip: false, value: () => found };
  const reason = `${o.what} is missing (${o.how})`;
  if (!IN_CI) console.warn(`${o.who}: skipped: ${reason}`);
  return {
    skip: !IN_CI,
    value: () => {
      throw new Error(`${reason}: in CI it must be present (.ci/run installs it), and the tests that need it run`);
    },
  };
}

/**
 * Several things a suite needs at once, each named with how to get it ("skopeo (apt-get install
 * skopeo)"): present when `missing` is empty.
 */
export function requirementOfAll(missing: string[], who: string): Requirement<true> {
  return requirement(missing.length === 0, { what: missing.join(', '), how: 'each as said; .ci/run installs them all', who });
}

/** varnishd (the cache proxy): RBP_TOOL_VARNISHD, else on PATH or in /usr/sbin. */
export function varnishdRequirement(who: string): Requirement<string> {
  return requirement(findVarnishd(), { what: 'varnishd', how: 'apt-get install varnish, or RBP_TOOL_VARNISHD naming one', who });
}

/** A describe block that needs `r`: skipped outside CI without it; in CI its tests fail first, saying what is missing. */
export function describeNeeding(r: Requirement<unknown>, name: string, fn: () => void): void {
  describe.skipIf(r.skip)(name, () => {
    beforeAll(() => void r.value());
    fn();
  });
}
