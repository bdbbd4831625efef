/** CycloneDX SBOM files (cnb-spec.md §7): `<layer>.sbom.cdx.json`, `launch.sbom.cdx.json`, `build.sbom.cdx.json`. */
import fs from 'node:fs';
import path from 'node:path';
import spdxLicenseIds from 'spdx-license-ids';

export const CYCLONEDX_MEDIA_TYPE = 'application/vnd.cyclonedx+json';

export interface SbomComponent {
  name: string;
  /** Absent when unknown (an operator's tool that printed no version). */
  version?: string;
  type?: 'application' | 'library' | 'framework' | 'operating-system';
  /** Package group (npm scope without @, Composer vendor). */
  group?: string;
  purl?: string;
  sha256?: string;
  /** Other digests, CycloneDX algorithm names (`SHA-512`, `SHA-1`). */
  hashes?: { alg: 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512'; content: string }[];
  /** SPDX ids or expressions, or free license names; see licenseChoice. */
  licenses?: string[];
  /** `rbp:` properties: where a component came from (`rbp:source` = operator, `rbp:path`). */
  properties?: Record<string, string>;
}

const SPDX_IDS = new Set<string>(spdxLicenseIds);

/**
 * A license as CycloneDX takes it: an SPDX id (`MIT`) as `license.id`, an SPDX expression
 * (`MIT OR Apache-2.0`) as `expression`, anything else (`SEE LICENSE IN …`) as `license.name`.
 */
export function licenseChoice(text: string): object {
  const t = text.trim();
  if (SPDX_IDS.has(t)) return { license: { id: t } };
  const parts = t.replace(/[()]/g, ' ').split(/\s+/).filter(Boolean);
  if (parts.length > 1 && parts.every((w) => SPDX_IDS.has(w.replace(/\+$/, '')) || /^(AND|OR|WITH)$/.test(w) || /-exception|exception-/i.test(w)))
    return { expression: t };
  return { license: { name: t } };
}

function componentJson(c: SbomComponent): object {
  const hashes = [...(c.sha256 ? [{ alg: 'SHA-256', content: c.sha256 }] : []), ...(c.hashes ?? [])];
  const licenses = (c.licenses ?? []).map(licenseChoice);
  // CycloneDX: either one expression, or any number of licenses.
  const expr = licenses.find((l) => 'expression' in l);
  return {
    type: c.type ?? 'application',
    'bom-ref': c.purl ?? `${c.group ? `${c.group}/` : ''}${c.name}@${c.version ?? ''}`,
    ...(c.group ? { group: c.group } : {}),
    name: c.name,
    ...(c.version !== undefined ? { version: c.version } : {}),
    ...(c.purl ? { purl: c.purl } : {}),
    ...(hashes.length ? { hashes } : {}),
    ...(licenses.length ? { licenses: expr ? [expr] : licenses } : {}),
    ...(c.properties ? { properties: Object.entries(c.properties).map(([name, value]) => ({ name, value })) } : {}),
  };
}

export function cycloneDx(components: SbomComponent[]): object {
  // One entry per bom-ref: CycloneDX requires them unique.
  const seen = new Map<string, object>();
  for (const c of components) {
    const j = componentJson(c) as { 'bom-ref': string };
    if (!seen.has(j['bom-ref'])) seen.set(j['bom-ref'], j);
  }
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.4',
    version: 1,
    components: [...seen.values()],
  };
}

/** A component as componentJson() writes it. */
interface WrittenComponent {
  type?: SbomComponent['type'];
  group?: string;
  name: string;
  version?: string;
  purl?: string;
  hashes?: SbomComponent['hashes'];
  licenses?: { expression?: string; license?: { id?: string; name?: string } }[];
  properties?: { name: string; value: string }[];
}

/** Components of an SBOM file this module wrote, back as SbomComponent (for appending). */
function readComponents(file: string): SbomComponent[] {
  let doc: { components?: WrittenComponent[] };
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof doc;
  } catch {
    return [];
  }
  return (doc.components ?? []).map((c) => ({
    name: c.name,
    ...(c.version !== undefined ? { version: c.version } : {}),
    ...(c.type ? { type: c.type } : {}),
    ...(c.group ? { group: c.group } : {}),
    ...(c.purl ? { purl: c.purl } : {}),
    ...(Array.isArray(c.hashes) ? { hashes: c.hashes } : {}),
    ...(Array.isArray(c.licenses) ? { licenses: c.licenses.map((l) => l.expression ?? l.license?.id ?? l.license?.name ?? '').filter(Boolean) } : {}),
    ...(Array.isArray(c.properties) ? { properties: Object.fromEntries(c.properties.map((p) => [p.name, p.value])) } : {}),
  }));
}

/** Adds components to `<target>.sbom.cdx.json`, keeping those already there (a later one with the same bom-ref is dropped). */
export function appendSbom(layersDir: string, target: string, components: SbomComponent[]): string {
  const file = path.join(layersDir, `${target}.sbom.cdx.json`);
  return writeSbom(layersDir, target, [...readComponents(file), ...components]);
}

/** `target` is a layer name, or `launch` / `build` for the buildpack-wide SBOMs. */
export function writeSbom(layersDir: string, target: string, components: SbomComponent[]): string {
  fs.mkdirSync(layersDir, { recursive: true });
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
    if (!types.includes(type))
      throw new Error(`validating SBOM file '${file}': undeclared SBOM media type: '${type}' (add it to sbom-formats in buildpack.toml)`);
  }
}
