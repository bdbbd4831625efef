import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CYCLONEDX_MEDIA_TYPE, cycloneDx, sbomMediaType, validateSbomFiles, writeSbom } from './sbom.ts';

describe('CycloneDX SBOM', () => {
  it('has the CycloneDX JSON shape: bomFormat, specVersion, version, components with hashes, purl and licenses', () => {
    expect(
      cycloneDx([
        { name: 'node', version: '22.3.0', purl: 'pkg:generic/node@22.3.0', sha256: 'ab'.repeat(32), licenses: ['MIT'] },
        { name: 'left-pad', version: '1.3.0', type: 'library' },
      ]),
    ).toEqual({
      bomFormat: 'CycloneDX',
      specVersion: '1.4',
      version: 1,
      components: [
        {
          type: 'application',
          'bom-ref': 'pkg:generic/node@22.3.0',
          name: 'node',
          version: '22.3.0',
          purl: 'pkg:generic/node@22.3.0',
          hashes: [{ alg: 'SHA-256', content: 'ab'.repeat(32) }],
          licenses: [{ license: { id: 'MIT' } }],
        },
        { type: 'library', 'bom-ref': 'left-pad@1.3.0', name: 'left-pad', version: '1.3.0' },
      ],
    });
  });

  it('is written as <target>.sbom.cdx.json, the extension the lifecycle maps to its media type', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-sbom-'));
    const file = writeSbom(dir, 'node', [{ name: 'node', version: '22.3.0' }]);
    expect(file).toBe(path.join(dir, 'node.sbom.cdx.json'));
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).components[0]).toEqual({ type: 'application', 'bom-ref': 'node@22.3.0', name: 'node', version: '22.3.0' });
    expect(writeSbom(dir, 'launch', [])).toBe(path.join(dir, 'launch.sbom.cdx.json'));
    expect(CYCLONEDX_MEDIA_TYPE).toBe('application/vnd.cyclonedx+json');
  });
});

describe('SBOM file validation (after each bin/build)', () => {
  const layersWith = (...files: string[]) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-sbom-'));
    for (const f of files) fs.writeFileSync(path.join(dir, f), '{}');
    return dir;
  };

  it('maps the three extensions to their media types', () => {
    expect(sbomMediaType('node.sbom.cdx.json')).toBe('application/vnd.cyclonedx+json');
    expect(sbomMediaType('launch.sbom.spdx.json')).toBe('application/spdx+json');
    expect(sbomMediaType('build.sbom.syft.json')).toBe('application/vnd.syft+json');
    expect(sbomMediaType('node.sbom.xml.json')).toBeUndefined();
  });

  it('accepts declared formats, with media type parameters', () => {
    expect(() =>
      validateSbomFiles(layersWith('launch.sbom.cdx.json', 'node.toml', 'node.sbom.spdx.json'), [CYCLONEDX_MEDIA_TYPE, 'application/spdx+json; version=2.2']),
    ).not.toThrow();
  });

  it('rejects an undeclared media type', () => {
    expect(() => validateSbomFiles(layersWith('launch.sbom.cdx.json'), [])).toThrow("undeclared SBOM media type: 'application/vnd.cyclonedx+json'");
  });

  it('rejects an unsupported *.sbom.*.json format, ignores other extensions and layers without a toml', () => {
    expect(() => validateSbomFiles(layersWith('build.sbom.xml.json'), [CYCLONEDX_MEDIA_TYPE])).toThrow('unsupported SBOM file format');
    expect(() => validateSbomFiles(layersWith('build.sbom.cdx.xml', 'gone.sbom.cdx.json'), [])).not.toThrow();
  });
});
