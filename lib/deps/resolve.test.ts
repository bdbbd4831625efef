import { describe, expect, it } from 'vitest';
import type { DependencySpec } from './catalog.ts';
import { catalogSource, nearestFirst, pickVersion, resolveVersion } from './resolve.ts';
import { stableRendering, thrownUserError as userError } from '../../test/helpers/user-error.ts';

function spec(version: string, extra: Partial<DependencySpec> = {}): DependencySpec {
  return {
    id: 'caddy',
    version,
    uri: 'https://example.test/caddy_{version}_linux_{arch}.tar.gz',
    stripComponents: 0,
    archive: 'tar.gz',
    bin: 'caddy',
    ...extra,
  };
}

const catalog = ['1.4.0', '2.6.2', '2.10.2', '2.11.2', '2.11.3', '3.0.0-beta.1'].map((v) => spec(v));

describe('resolveVersion', () => {
  it.each([
    ['2', '2.11.3'],
    ['2.11', '2.11.3'],
    ['2.11.2', '2.11.2'],
    ['v2.11.2', '2.11.2'],
    ['^2', '2.11.3'],
    ['~2.10', '2.10.2'],
    ['>=1 <2.7', '2.6.2'],
    ['>=1 <3', '2.11.3'],
    ['latest', '2.11.3'],
    ['', '2.11.3'],
    ['1', '1.4.0'],
  ])('resolves %j to %s (prereleases only when asked)', (constraint, expected) => {
    expect(resolveVersion(catalog, 'caddy', constraint, 'amd64').version).toBe(expected);
  });

  it('fills {version} and {arch} in the uri and checksum-uri', () => {
    const s = resolveVersion([spec('2.11.2', { checksumUri: 'https://example.test/{version}/sums-{arch}.txt' })], 'caddy', '2', 'arm64');
    expect(s.uri).toBe('https://example.test/caddy_2.11.2_linux_arm64.tar.gz');
    expect(s.checksumUri).toBe('https://example.test/2.11.2/sums-arm64.txt');
    expect(s.arch).toBe('arm64');
  });

  it('takes the entry for the exact arch over one for any arch, and skips other arches', () => {
    const specs = [
      spec('2.11.2', { uri: 'https://any.test/caddy' }),
      spec('2.11.2', { arch: 'amd64', uri: 'https://amd64.test/caddy' }),
      spec('2.12.0', { arch: 'arm64', uri: 'https://arm64.test/caddy' }),
    ];
    expect(resolveVersion(specs, 'caddy', '2', 'amd64').uri).toBe('https://amd64.test/caddy');
    expect(resolveVersion(specs, 'caddy', '2', 'arm64').version).toBe('2.12.0');
    expect(resolveVersion(specs, 'caddy', '2.11', 'riscv64').uri).toBe('https://any.test/caddy');
  });

  it('refuses a constraint nothing matches, listing the versions nearest first', () => {
    const e = userError(() => resolveVersion(catalog, 'caddy', '2.12', 'amd64', { what: 'CC_CADDY_VERSION', where: 'the platform environment' }));
    expect(e.data.id).toBe('deps/no-matching-version');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen).toEqual({ what: 'CC_CADDY_VERSION', value: '2.12', where: 'the platform environment' });
    expect(e.data.details?.[0]).toBe('available, nearest first: 2.11.3, 2.11.2, 2.10.2, 2.6.2, 3.0.0-beta.1, 1.4.0');
    expect(e.data.fix).toContain('2.11.3');
  });

  it('refuses what is not a version', () => {
    const e = userError(() => resolveVersion(catalog, 'caddy', 'two', 'amd64'));
    expect(e.data.id).toBe('deps/invalid-constraint');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen?.value).toBe('two');
  });

  it('refuses an arch no entry covers, naming the arches there are', () => {
    const e = userError(() => resolveVersion([spec('2.11.2', { arch: 'amd64' })], 'caddy', '2', 'arm64'));
    expect(e.data.id).toBe('deps/unsupported-arch');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.fix).toContain('amd64');
  });

  it('treats an unknown id as a bug in the buildpack, not a user error', () => {
    expect(() => resolveVersion(catalog, 'hugo', '0.149', 'amd64')).toThrow(/declares no dependency "hugo"/);
  });

  it('serves the same resolution as a source', async () => {
    await expect(catalogSource(catalog, 'caddy').resolve('2.10', 'amd64')).resolves.toMatchObject({ version: '2.10.2' });
  });
});

describe('nearestFirst / pickVersion', () => {
  it('orders around the lowest version the range allows', () => {
    expect(nearestFirst(['0.147.0', '0.149.0', '0.152.0', '0.160.0'], '>=0.150.0 <0.151.0-0')).toEqual(['0.149.0', '0.152.0', '0.147.0', '0.160.0']);
  });

  it('says how many versions it left out of a long list', () => {
    const versions = Array.from({ length: 30 }, (_, i) => `1.${i}.0`);
    const e = userError(() => pickVersion(versions, '5', 'node'));
    expect(e.data.details).toHaveLength(2);
    expect(e.data.details?.[0]?.replace('available, nearest first: ', '').split(', ')).toHaveLength(12);
    expect(e.data.details?.[1]).toBe('… and 18 more');
  });
});
