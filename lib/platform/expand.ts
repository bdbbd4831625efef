/**
 * Order expansion, as the reference lifecycle does it (buildpacks/lifecycle phase/detector.go
 * detectOrder/detectGroup; cnb-spec.md §8). Walking a group left to right:
 * - an entry whose id is already in the group so far is skipped (ids, not versions: `A@v2` after
 *   `A@v1` is dropped);
 * - a composite entry is replaced by each of its groups in turn, followed by the rest of the outer
 *   group (depth first, so nested orders give the cartesian product of their groups); when none
 *   of them passes and the composite is optional, the outer group is tried once more without it;
 * - the groups of an order are tried in turn and the first one that passes wins.
 * A generator: it yields each flat group to try, and the caller sends back how that group did.
 */
import type { GroupEntry, Order } from './order.ts';

/** How a flat group did: `error` when a required buildpack of it failed with an error (exit 21). */
export type GroupOutcome = 'pass' | 'fail' | 'error';

/** Yields flat groups (no composites left); returns the outcome of the whole order. */
export type Trials = Generator<GroupEntry[], GroupOutcome, GroupOutcome>;

const idOf = (e: GroupEntry) => e.ref.descriptor.buildpack.id;

function* tryOrder(order: Order, done: GroupEntry[], next: GroupEntry[], optional: boolean): Trials {
  let error = false;
  for (const group of order) {
    const r = yield* tryGroup([...group, ...next], done);
    if (r === 'pass') return r;
    if (r === 'error') error = true;
  }
  if (optional) return yield* tryGroup(next, done);
  return error ? 'error' : 'fail';
}

function* tryGroup(group: GroupEntry[], done: GroupEntry[]): Trials {
  const flat = [...done];
  for (const [i, e] of group.entries()) {
    if (flat.some((d) => idOf(d) === idOf(e))) continue;
    if (e.order) return yield* tryOrder(e.order, flat, group.slice(i + 1), e.optional);
    flat.push(e);
  }
  return yield flat;
}

/** The flat groups of `order`, one at a time, in the order the lifecycle tries them. */
export function orderTrials(order: Order): Trials {
  return tryOrder(order, [], [], false);
}
