import { describe, expect, it } from 'vitest';
import { restartDelay, restartDelays, restartPlan, restartPolicy } from './restart.ts';

describe('restart policy and back-off', () => {
  it('is no when unset, on-failure when asked, an error otherwise', () => {
    expect(restartPolicy(undefined)).toBe('no');
    expect(restartPolicy(' on-failure ')).toBe('on-failure');
    expect(() => restartPolicy('always')).toThrow(/--restart is neither no nor on-failure/);
  });
  it('RBP_RESTART is read as lib/config declares it: whitespace is unset, anything else its own error', () => {
    expect(restartPlan({}).policy).toBe('no');
    expect(restartPlan({ RBP_RESTART: '  ' }).policy).toBe('no');
    expect(restartPlan({ RBP_RESTART: ' on-failure ' }).policy).toBe('on-failure');
    expect(() => restartPlan({ RBP_RESTART: 'always' })).toThrow(/Invalid RBP_RESTART/);
  });
  it('doubles from 1 s up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => restartDelay(n))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
  it('the waits the launch takes in turn, the last one repeated: up to the first that reaches the maximum', () => {
    expect(restartDelays({ firstDelayMs: 1000, maxDelayMs: 30_000 })).toEqual([1000, 2000, 4000, 8000, 16000, 30000]);
    expect(restartDelays({ firstDelayMs: 200, maxDelayMs: 30_000 })).toEqual([200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000]);
    expect(restartDelays({ firstDelayMs: 40_000, maxDelayMs: 30_000 })).toEqual([30000]);
  });
});
