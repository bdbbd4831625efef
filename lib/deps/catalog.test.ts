import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readDescriptor } from '../cnb/descriptor.ts';
import { dependenciesOf, parseDependencies } from './catalog.ts';
import { tempDir } from '../../test/helpers/deps.ts';

const SHA = 'a'.repeat(64);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('dependenciesOf', () => {
  it('reads [[metadata.dependencies]] from buildpack.toml into typed specs', () => {
    const dir = tempDir();
    dirs.push(dir);
    fs.writeFileSync(
      path.join(dir, 'buildpack.toml'),
      `api = "0.10"
[buildpack]
id = "rbp/static"
version = "0.1.0"

[[metadata.dependencies]]
id = "caddy"
version = "2.11.2"
uri = "https://github.com/caddyserver/caddy/releases/download/v{version}/caddy_{version}_linux_{arch}.tar.gz"
checksum-uri = "https://github.com/caddyserver/caddy/releases/download/v{version}/caddy_{version}_checksums.txt"
arch = "amd64"
cpe = "cpe:2.3:a:caddyserver:caddy:2.11.2:*:*:*:*:*:*:*"

[[metadata.dependencies]]
id = "static-web-server"
version = "2.42.0"
uri = "https://example.test/static-web-server-v{version}-x86_64-unknown-linux-gnu.tar.gz"
sha256 = "${SHA.toUpperCase()}"
arch = "amd64"
strip-components = 1
bin = "static-web-server"

[[metadata.dependencies]]
id = "tool"
version = "1.0.0"
uri = "file:///srv/tool"
archive = "none"
sha256 = "${SHA}"
`,
    );
    const [caddy, sws, tool] = dependenciesOf(readDescriptor(dir).descriptor);
    expect(caddy).toEqual({
      id: 'caddy',
      version: '2.11.2',
      uri: 'https://github.com/caddyserver/caddy/releases/download/v{version}/caddy_{version}_linux_{arch}.tar.gz',
      checksumUri: 'https://github.com/caddyserver/caddy/releases/download/v{version}/caddy_{version}_checksums.txt',
      arch: 'amd64',
      stripComponents: 0,
      archive: 'tar.gz',
      bin: 'caddy',
    });
    expect(sws).toMatchObject({ stripComponents: 1, checksum: { algorithm: 'sha256', hex: SHA }, archive: 'tar.gz' });
    expect(tool).toMatchObject({ archive: 'none', bin: 'tool' });
  });
});

describe('parseDependencies', () => {
  const base = { id: 'caddy', version: '2.11.2', uri: 'https://example.test/caddy.tar.gz', sha256: SHA };

  it.each([
    [{ version: '2.11' }, /"version" must be an exact semver version.*"2\.11"/],
    [{ sha256: 'abc' }, /"sha256" must be 64 hex characters/],
    [{ archive: 'rar' }, /"archive" must be one of tar\.gz, tar\.xz, zip, none/],
    [{ uri: 'https://example.test/caddy' }, /"archive" must be one of .*cannot be told from the uri/],
    [{ uri: 'ftp://example.test/caddy.tar.gz' }, /"uri" must be an https/],
    [{ 'strip-components': -1 }, /"strip-components" must be a whole number/],
    [{ bin: '../../etc/passwd' }, /"bin" must be a relative path/],
    [{ id: '' }, /"id" must be a non-empty string/],
    [{ arch: 'x86-64' }, /"arch" must be an OCI architecture/],
  ])('names the field of an invalid entry: %j', (patch, message) => {
    expect(() => parseDependencies([{ ...base, ...patch }], 'bp/buildpack.toml')).toThrow(message);
    expect(() => parseDependencies([{ ...base, ...patch }], 'bp/buildpack.toml')).toThrow(/^bp\/buildpack\.toml: \[\[metadata\.dependencies\]\] entry 1/);
  });

  it('refuses the same id, version and arch twice', () => {
    expect(() => parseDependencies([base, base])).toThrow(/lists caddy 2\.11\.2 for arch any twice/);
  });

  it('accepts no dependencies at all', () => {
    expect(parseDependencies(undefined)).toEqual([]);
  });
});
