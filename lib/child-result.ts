/**
 * A finished child process's result, typed as it really is. execa's and Node.js's types promise that
 * stdout, stderr and all are strings, but a child that never started printed nothing at all:
 * spawnSync and execaSync give null or undefined when the program is missing, and execa does when the
 * spawn itself throws (E2BIG, EPERM). Reading a result through `finished()` keeps the fallback its
 * output needs for that case (`r.stdout ?? ''`).
 */
type Streams = 'stdout' | 'stderr' | 'all';

export type Finished<R extends Partial<Record<Streams, unknown>>> = Omit<R, Streams> & { [K in Streams]?: R[K] | null };

/** `r` itself, its output typed as possibly missing (see above). */
export function finished<R extends Partial<Record<Streams, unknown>>>(r: R): Finished<R> {
  return r;
}
