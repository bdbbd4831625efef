import { describe, expect, it } from 'vitest';
import { acceptedHugoVersions, chooseHugoVersion, HUGO_VERSIONS, today } from './hugo-version.ts';
import { renderedUserError as errorOf } from '../../../test/helpers/user-error.ts';

const BEFORE = new Date('2026-06-14T23:59:59Z');
const AFTER = new Date('2026-06-15T00:00:00Z');
const TODAY = new Date('2026-11-22T12:00:00Z');

describe('CC_HUGO_VERSION', () => {
  it('accepts every listed version before June 15th 2026, with 0.149 by default', () => {
    expect(acceptedHugoVersions(BEFORE)).toEqual([...HUGO_VERSIONS]);
    expect(chooseHugoVersion(undefined, BEFORE).version).toBe('0.149');
    for (const v of HUGO_VERSIONS) expect(chooseHugoVersion(v, BEFORE).version).toBe(v);
  });

  it('from June 15th 2026 accepts only 0.160 and later', () => {
    expect(acceptedHugoVersions(AFTER)).toEqual(['0.160', '0.161']);
    expect(chooseHugoVersion('0.161', TODAY).version).toBe('0.161');
  });

  it('after the date, an unset CC_HUGO_VERSION gets 0.160 and the reason says why', () => {
    const c = chooseHugoVersion(undefined, TODAY);
    expect(c.version).toBe('0.160');
    expect(c.reason).toContain('0.149 is no longer supported since 2026-06-15');
  });

  it('after the date, an explicit old version is refused with the accepted list', () => {
    expect(errorOf(() => chooseHugoVersion('0.149', TODAY))).toMatchInlineSnapshot(`
      "! ERROR Hugo 0.149 is no longer supported
      !
      ! Seen: CC_HUGO_VERSION: "0.149" (the application environment)
      ! Rule: from 2026-06-15 only Hugo 0.160 and later are supported
      !   accepted: 0.160, 0.161
      ! Fix:  set CC_HUGO_VERSION to one of 0.160, 0.161, or remove it
      ! (error id: static/hugo-version/unsupported)"
    `);
  });

  it('refuses a value that is not in the list, even a real Hugo version', () => {
    for (const v of ['0.111', '0.149.1', 'latest', '0.153']) expect(() => chooseHugoVersion(v, BEFORE)).toThrow(/not a Hugo version this runtime offers/);
    expect(errorOf(() => chooseHugoVersion('0.153', BEFORE))).toMatchInlineSnapshot(`
      "! ERROR CC_HUGO_VERSION=0.153 is not a Hugo version this runtime offers
      !
      ! Seen: CC_HUGO_VERSION: "0.153" (the application environment)
      ! Rule: CC_HUGO_VERSION accepts only these values (default 0.149)
      !   accepted: 0.147, 0.148, 0.149, 0.150, 0.151, 0.152, 0.159, 0.160, 0.161
      ! Fix:  set CC_HUGO_VERSION to one of 0.147, 0.148, 0.149, 0.150, 0.151, 0.152, 0.159, 0.160, 0.161, or remove it
      ! (error id: config/CC_HUGO_VERSION/invalid)"
    `);
  });

  it('takes today from RBP_NOW when the operator sets it, and refuses a non-date', () => {
    expect(today({ RBP_NOW: '2026-06-15' }).toISOString()).toBe('2026-06-15T00:00:00.000Z');
    expect(Math.abs(today({}).getTime() - Date.now())).toBeLessThan(5000);
    expect(() => today({ RBP_NOW: 'tomorrow' })).toThrow(/Invalid RBP_NOW/);
  });
});
