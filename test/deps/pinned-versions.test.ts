/**
 * The versions the contract pins ("Versioning"), as the real buildpack.toml files declare them and
 * lib/deps reads them: a typo there would install another version than the contract's.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDescriptor } from '../../lib/cnb/descriptor.ts';
import { dependenciesOf, type DependencySpec } from '../../lib/deps/index.ts';

const readDependencies = (dir: string) => dependenciesOf(readDescriptor(dir).descriptor);
import { ROOT } from '../helpers/rbp.ts';

const versionsOf = (deps: DependencySpec[], id: string) =>
  [...new Set(deps.filter((d) => d.id === id).map((d) => d.version))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
const minor = (v: string) => v.split('.').slice(0, 2).join('.');

describe('buildpacks/static/buildpack.toml', () => {
  const deps = readDependencies(path.join(ROOT, 'buildpacks', 'static'));
  it('pins Static Web Server 2.42.0 and Caddy 2.11.2', () => {
    expect(versionsOf(deps, 'static-web-server')).toEqual(['2.42.0']);
    expect(versionsOf(deps, 'caddy')).toEqual(['2.11.2']);
  });
  it('has one Hugo per allowed CC_HUGO_VERSION minor, no other', () => {
    expect(versionsOf(deps, 'hugo').map(minor)).toEqual(['0.147', '0.148', '0.149', '0.150', '0.151', '0.152', '0.159', '0.160', '0.161']);
  });
  it('each download names its version (or the {version} template)', () => {
    for (const d of deps) expect(d.uri.includes('{version}') || d.uri.includes(d.version), `${d.id} ${d.version}: ${d.uri}`).toBe(true);
  });
});

describe('buildpacks/phpserver/buildpack.toml', () => {
  const deps = readDependencies(path.join(ROOT, 'buildpacks', 'phpserver'));
  it('pins the application server 1.9.1 (default) and 1.12.3 (CC_PHP_VERSION=8.5), and Composer 2.8.12', () => {
    expect(versionsOf(deps, 'frankenphp')).toEqual(['1.9.1', '1.12.3']);
    expect(versionsOf(deps, 'composer')).toEqual(['2.8.12']);
  });
});
