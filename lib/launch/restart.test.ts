import { describe, expect, it } from 'vitest';
import { restartDelay, restartPolicy, restartPolicyOf } from './restart.ts';

describe('restart policy and back-off', () => {
  it('is no when unset, on-failure when asked, an error otherwise', () => {
    expect(restartPolicy(undefined)).toBe('no');
    expect(restartPolicy(' on-failure ')).toBe('on-failure');
    expect(() => restartPolicy('always')).toThrow(/--restart is neither no nor on-failure/);
  });
  it('RBP_RESTART is read as lib/config declares it: whitespace is unset, anything else its own error', () => {
    expect(restartPolicyOf({})).toBe('no');
    expect(restartPolicyOf({ RBP_RESTART: '  ' })).toBe('no');
    expect(restartPolicyOf({ RBP_RESTART: ' on-failure ' })).toBe('on-failure');
    expect(() => restartPolicyOf({ RBP_RESTART: 'always' })).toThrow(/Invalid RBP_RESTART/);
  });
  it('doubles from 1 s up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => restartDelay(n))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
});
