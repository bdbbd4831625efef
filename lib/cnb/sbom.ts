/** CycloneDX SBOM files (cnb-spec.md §7): `<layer>.sbom.cdx.json`, `launch.sbom.cdx.json`, `build.sbom.cdx.json`. */
import fs from 'node:fs';
import path from 'node:path';

export const CYCLONEDX_MEDIA_TYPE = 'application/vnd.cyclonedx+json';

export interface SbomComponent {
  name: string;
  version: string;
  type?: 'application' | 'library' | 'framework' | 'operating-system';
  purl?: string;
  sha256?: string;
  licenses?: string[];
}

export function cycloneDx(components: SbomComponent[]): object {
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.4',
    version: 1,
    components: components.map((c) => ({
      type: c.type ?? 'application',
      name: c.name,
      version: c.version,
      ...(c.purl ? { purl: c.purl } : {}),
      ...(c.sha256 ? { hashes: [{ alg: 'SHA-256', content: c.sha256 }] } : {}),
      ...(c.licenses?.length ? { licenses: c.licenses.map((id) => ({ license: { id } })) } : {}),
    })),
  };
}

/** `target` is a layer name, or `launch` / `build` for the buildpack-wide SBOMs. */
export function writeSbom(layersDir: string, target: string, components: SbomComponent[]): string {
  const file = path.join(layersDir, `${target}.sbom.cdx.json`);
  fs.writeFileSync(file, `${JSON.stringify(cycloneDx(components), null, 2)}\n`);
  return file;
}
