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

/** The media type of an SBOM file by its name, as the lifecycle maps it; undefined for other formats. */
export function sbomMediaType(fileName: string): string | undefined {
  if (fileName.endsWith('.sbom.cdx.json')) return CYCLONEDX_MEDIA_TYPE;
  if (fileName.endsWith('.sbom.spdx.json')) return 'application/spdx+json';
  if (fileName.endsWith('.sbom.syft.json')) return 'application/vnd.syft+json';
  return undefined;
}

/**
 * Checks a buildpack's `*.sbom.*.json` files after its build (lifecycle buildpack/bomfile.go): each
 * must be CycloneDX, SPDX or Syft JSON and of a media type buildpack.toml declares in `sbom-formats`.
 * Files of layers without a `<layer>.toml` are not looked at. Throws with the lifecycle's wording.
 */
export function validateSbomFiles(layersDir: string, declared: string[] = []): void {
  let files: string[];
  try {
    files = fs.readdirSync(layersDir).sort();
  } catch {
    return;
  }
  // A declared type may carry parameters (`application/spdx+json; version=2.2`).
  const types = declared.map((d) => d.split(';')[0]!.trim().toLowerCase());
  for (const f of files) {
    if (!/^[^.]+\.sbom\..+\.json$/.test(f)) continue;
    const layer = f.slice(0, f.indexOf('.'));
    if (layer !== 'launch' && layer !== 'build' && !files.includes(`${layer}.toml`)) continue;
    const type = sbomMediaType(f);
    const file = path.join(layersDir, f);
    if (!type) throw new Error(`unsupported SBOM file format: '${file}'`);
    if (!types.includes(type)) throw new Error(`validating SBOM file '${file}': undeclared SBOM media type: '${type}' (add it to sbom-formats in buildpack.toml)`);
  }
}
