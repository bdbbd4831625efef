/**
 * Tool installs that do not depend on each other run at the same time (Node.js's download and
 * unpack beside npm's and Yarn's), while the log reads as if they had run one after the other: the
 * first task logs as it goes, each other one into its own buffer, printed in order once all are
 * done. With --quiet nothing is shown as it goes anyway, so every task logs directly
 * (its warnings stay immediate). Every task runs to its end; the first failure, in task order, is
 * thrown, and the log stops with that task.
 */
import { Writable } from 'node:stream';
import { Logger, useColor } from '../../../lib/log.ts';

export type Task<T> = (log: Logger) => Promise<T>;

export async function inParallel<T extends unknown[]>(log: Logger, tasks: { [K in keyof T]: Task<T[K]> }): Promise<T> {
  const buffers: ((Buffer | string)[] | undefined)[] = []; // none for the first task, which logs directly
  const loggers = (tasks as Task<unknown>[]).map((_, i) => {
    if (i === 0 || log.level === 'quiet') return log;
    const chunks: (Buffer | string)[] = [];
    buffers[i] = chunks;
    const sink = new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        chunks.push(chunk);
        cb();
      },
    });
    return new Logger({ out: sink, level: log.level, color: useColor(process.stdout) });
  });
  const settled = await Promise.allSettled((tasks as Task<unknown>[]).map((task, i) => task(loggers[i]!)));
  const failedAt = settled.findIndex((s) => s.status === 'rejected');
  // After a failure the log ends as it would have one task at a time: the tasks after the failed
  // one are not shown (the build fails; what they did goes with it).
  const shown = failedAt < 0 ? buffers : buffers.slice(0, failedAt + 1);
  for (const chunks of shown) for (const c of chunks ?? []) log.raw(c);
  if (failedAt >= 0) throw (settled[failedAt] as PromiseRejectedResult).reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as T;
}

/** A promise with its resolve and reject at hand: a value one task finds and others wait for. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A rejection no task waited for is not an unhandled one: the task that caused it reports it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
