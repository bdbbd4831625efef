import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeId, ociArch, readDescriptor } from './descriptor.ts';

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

  it('accepts a major-only api', () => {
    expect(readDescriptor(bpDir(valid.replace('"0.10"', '"1"'))).descriptor.api).toBe('1');
  });

  it.each([
    ['api as a number', valid.replace('api = "0.10"', 'api = 0.1'), 'api must be "<major>.<minor>"'],
    ['api with a patch', valid.replace('"0.10"', '"0.10.1"'), 'api must be "<major>.<minor>"'],
    ['missing id', valid.replace('id = "rbp/node"\n', ''), '[buildpack] id is missing'],
    ['id with a space', valid.replace('rbp/node', 'rbp node'), 'is not a valid buildpack id'],
    ['reserved id app', valid.replace('rbp/node', 'app'), 'is not a valid buildpack id'],
    ['reserved id sbom', valid.replace('rbp/node', 'sbom'), 'is not a valid buildpack id'],
    ['missing version', valid.replace('version = "1.2.3"\n', ''), '[buildpack] version is missing'],
    ['no [buildpack] table', 'api = "0.10"\n', '[buildpack] id is missing'],
  ])('rejects %s', (_what, toml, message) => {
    const dir = bpDir(toml);
    expect(() => readDescriptor(dir)).toThrow(message);
    expect(() => readDescriptor(dir)).toThrow(path.join(dir, 'buildpack.toml'));
  });

  it('lists every problem at once', () => {
    expect(() => readDescriptor(bpDir('api = "x"\n[buildpack]\nname = "n"\n'))).toThrow(/api must be.*; \[buildpack\] id is missing; \[buildpack\] version is missing/);
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
