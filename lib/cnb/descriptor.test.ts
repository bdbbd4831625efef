import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UserError } from '../errors.ts';
import { escapeId, lineOf, ociArch, readDescriptor } from './descriptor.ts';
import { PhaseFailure } from './exit.ts';

function bpDir(toml: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-desc-'));
  fs.writeFileSync(path.join(dir, 'buildpack.toml'), toml);
  return dir;
}

const valid = `api = "0.10"
[buildpack]
id = "rbp/node"
version = "1.2.3"
clear-env = true
sbom-formats = ["application/vnd.cyclonedx+json"]
[[targets]]
os = "linux"
arch = "amd64"
[[targets.distros]]
name = "ubuntu"
version = "22.04"
[metadata]
free = "form"
`;

describe('buildpack.toml', () => {
  it('reads a valid descriptor with its targets and metadata, and an absolute dir', () => {
    const dir = bpDir(valid);
    const ref = readDescriptor(path.relative(process.cwd(), dir));
    expect(ref.dir).toBe(dir);
    expect(ref.descriptor.api).toBe('0.10');
    expect(ref.descriptor.buildpack).toMatchObject({ id: 'rbp/node', version: '1.2.3', 'clear-env': true });
    expect(ref.descriptor.targets).toEqual([{ os: 'linux', arch: 'amd64', distros: [{ name: 'ubuntu', version: '22.04' }] }]);
    expect(ref.descriptor.metadata).toEqual({ free: 'form' });
  });

  it('accepts a major-only api; which APIs run is decided before detect (api.ts), not here', () => {
    expect(readDescriptor(bpDir(valid.replace('"0.10"', '"1"'))).descriptor.api).toBe('1');
    expect(readDescriptor(bpDir(valid.replace('"0.10"', '"0.12"'))).descriptor.api).toBe('0.12');
  });

  it.each([
    ['_', 'vendor/my_bp'],
    ['a space', 'rbp node'],
    ['upper case and dots', 'Vendor.BP'],
  ])('accepts an id with %s, as the lifecycle does', (_what, id) => {
    expect(readDescriptor(bpDir(valid.replace('rbp/node', id))).descriptor.buildpack.id).toBe(id);
  });

  it.each([
    ['api as a number', valid.replace('api = "0.10"', 'api = 0.1'), 'platform/buildpack/toml-invalid', 1, 'api is a string'],
    [
      'clear-env as a string',
      valid.replace('clear-env = true', 'clear-env = "yes"'),
      'platform/buildpack/toml-invalid',
      5,
      'buildpack.clear-env is true or false',
    ],
    ['missing id', valid.replace('id = "rbp/node"\n', ''), 'platform/buildpack/toml-invalid', undefined, 'id is missing'],
    ['an empty version', valid.replace('version = "1.2.3"', 'version = ""'), 'platform/buildpack/toml-invalid', 4, 'version is empty'],
    ['no [buildpack] table', 'api = "0.10"\n', 'platform/buildpack/toml-invalid', undefined, 'id is missing'],
    ['an id that names no folder', valid.replace('rbp/node', '..'), 'platform/buildpack/toml-invalid', 3, 'cannot be sbom, . or ..'],
    ["the id sbom, the build's SBOM folder", valid.replace('rbp/node', 'sbom'), 'platform/buildpack/toml-invalid', 3, 'cannot be sbom, . or ..'],
    ['a syntax error', valid.replace('clear-env = true', 'clear-env = "unterminated'), 'platform/buildpack/toml-syntax', 5, 'buildpack.toml is a TOML file'],
  ])('rejects %s: one user error naming the file and line, exit 1 (the lifecycle’s)', (_what, toml, id, line, rule) => {
    const dir = bpDir(toml);
    const e = (() => {
      try {
        readDescriptor(dir);
      } catch (err) {
        return err as PhaseFailure;
      }
      throw new Error('no error');
    })();
    expect(e).toBeInstanceOf(PhaseFailure);
    expect(e.code).toBe(1);
    const shown = e.shown as UserError;
    expect(shown.id).toBe(id);
    expect(shown.data.seen?.where).toMatch(new RegExp(`^${path.join(dir, 'buildpack.toml')}${line ? `:${line}(:\\d+)?` : ''}$`));
    expect(`${shown.data.rule} ${shown.data.title}`).toContain(rule);
  });

  it('finds the line of a key in its table, dotted keys too', () => {
    const text = 'api = "0.10"\n[buildpack]\nname = "n"\n  "id" = "x"\n[[targets]]\nid = "no"\n';
    expect(lineOf(text, '', 'api')).toBe(1);
    expect(lineOf(text, 'buildpack', 'id')).toBe(4);
    expect(lineOf('api = "1"\nbuildpack.id = "x"\n', 'buildpack', 'id')).toBe(2);
    expect(lineOf(text, 'buildpack', 'version')).toBeUndefined();
  });

  it('rejects a directory without buildpack.toml', () => {
    expect(() => readDescriptor(fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-desc-')))).toThrow(/ENOENT/);
  });

  it('escapes ids for layer directories: / becomes _', () => {
    expect(escapeId('rbp/node')).toBe('rbp_node');
    expect(escapeId('a/b/c')).toBe('a_b_c');
    expect(escapeId('plain')).toBe('plain');
  });

  it('maps Node arch names to OCI ones', () => {
    expect(ociArch('x64')).toBe('amd64');
    expect(ociArch('ia32')).toBe('386');
    expect(ociArch('arm64')).toBe('arm64');
    expect(ociArch('riscv64')).toBe('riscv64');
  });
});
