import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Logger } from '../../../lib/log.ts';
import { deferred, inParallel } from './in-parallel.ts';

function capture(level: 'normal' | 'quiet' = 'normal'): { log: Logger; text: () => string } {
  let text = '';
  const out = new Writable({
    write(c, _e, cb) {
      text += String(c);
      cb();
    },
  });
  return { log: new Logger({ out, color: false, level }), text: () => text };
}

describe('inParallel', () => {
  it('runs the tasks at the same time and logs them in task order', async () => {
    const { log, text } = capture();
    const started: string[] = [];
    // a ends only once b has ended: the order is the tasks' own, whatever the machine's speed.
    const bEnded = deferred<undefined>();
    const [a, b] = await inParallel<[number, number]>(log, [
      async (l) => {
        started.push('a');
        await bEnded.promise;
        l.info('a done');
        return 1;
      },
      async (l) => {
        started.push('b');
        l.info('b done');
        bEnded.resolve(undefined);
        return 2;
      },
    ]);
    // b started before a finished, and ended first, yet its lines come after a's.
    expect(started).toEqual(['a', 'b']);
    expect([a, b]).toEqual([1, 2]);
    expect(text()).toBe('- a done\n- b done\n');
  });

  it('a task waits for a value another finds; the first failure in task order is thrown and the log stops there', async () => {
    const { log, text } = capture();
    const v = deferred<string>();
    const err = await inParallel(log, [
      async (l) => {
        l.info('first');
        v.reject(new Error('no version'));
        throw new Error('no version');
      },
      async (l) => {
        l.info('second waits');
        await v.promise;
        return 'never';
      },
      async (l) => {
        l.info('third');
        return 'ok';
      },
    ]).catch((e: unknown) => e);
    expect((err as Error).message).toBe('no version');
    expect(text()).toBe('- first\n');
  });
});
