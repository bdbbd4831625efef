import { describe, expect, it } from 'vitest';
import { apiAtLeast, isSupportedApi, parseApi } from './api.ts';

describe('Buildpack API versions, as the lifecycle 0.20.8 reads them', () => {
  it('parses <major>.<minor>, <major> and a leading v; nothing else', () => {
    expect(parseApi('0.10')).toEqual({ major: 0, minor: 10 });
    expect(parseApi('1')).toEqual({ major: 1, minor: 0 });
    expect(parseApi('v0.8')).toEqual({ major: 0, minor: 8 });
    for (const bad of ['0.10.1', 'ten', '', ' 0.10', undefined, 0.1]) expect(parseApi(bad), String(bad)).toBeUndefined();
  });

  it('supports 0.7 to 0.11, each 0.x on its own', () => {
    expect(['0.7', '0.8', '0.9', '0.10', '0.11', 'v0.9'].every(isSupportedApi)).toBe(true);
    expect(['0.1', '0.6', '0.12', '1', '1.0', 'ten', undefined].some(isSupportedApi)).toBe(false);
  });

  it('compares minor versions as numbers', () => {
    expect(apiAtLeast('0.10', '0.9')).toBe(true);
    expect(apiAtLeast('0.8', '0.9')).toBe(false);
    expect(apiAtLeast('0.8', '0.8')).toBe(true);
    expect(apiAtLeast('0.7', '0.8')).toBe(false);
  });
});
