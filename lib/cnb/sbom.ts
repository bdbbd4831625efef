/** SBOM files (cnb-spec.md §7): `<layer>.sbom.<ext>`, `launch.sbom.<ext>`, `build.sbom.<ext>`, in CycloneDX and SPDX. */
import crypto from 'node:crypto';
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
  if (/\s/.test(t.replace(/[()]/g, ' ').trim()) && isSpdxExpression(t)) return { expression: t };
  return { license: { name: t } };
}

/** Whether a license text is an SPDX id or expression (`MIT OR Apache-2.0`, `(GPL-2.0+ WITH Classpath-exception-2.0)`). */
function isSpdxExpression(t: string): boolean {
  const parts = t.replace(/[()]/g, ' ').split(/\s+/).filter(Boolean);
  return parts.length > 0 && parts.every((w) => SPDX_IDS.has(w.replace(/\+$/, '')) || /^(AND|OR|WITH)$/.test(w) || /-exception|exception-/i.test(w));
}

function componentJson(c: SbomComponent): object {
  const hashes = [...(c.sha256 ? [{ alg: 'SHA-256', content: c.sha256 }] : []), ...(c.hashes ?? [])];
  const licenses = (c.licenses ?? []).map(licenseChoice);
  // CycloneDX: either one expression, or any number of licenses.
  const expr = licenses.find((l) => 'expression' in l);
  return {
    type: c.type ?? 'application',
    'bom-ref': bomRef(c),
    ...(c.group ? { group: c.group } : {}),
    name: c.name,
    ...(c.version !== undefined ? { version: c.version } : {}),
    ...(c.purl ? { purl: c.purl } : {}),
    ...(hashes.length ? { hashes } : {}),
    ...(licenses.length ? { licenses: expr ? [expr] : licenses } : {}),
    ...(c.properties ? { properties: Object.entries(c.properties).map(([name, value]) => ({ name, value })) } : {}),
  };
}

/** One component per bom-ref (CycloneDX requires them unique), the first of each. */
function unique(components: SbomComponent[]): SbomComponent[] {
  const seen = new Map<string, SbomComponent>();
  for (const c of components) {
    const ref = bomRef(c);
    if (!seen.has(ref)) seen.set(ref, c);
  }
  return [...seen.values()];
}

const bomRef = (c: SbomComponent) => c.purl ?? `${c.group ? `${c.group}/` : ''}${c.name}@${c.version ?? ''}`;

export function cycloneDx(components: SbomComponent[]): object {
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.4',
    version: 1,
    components: unique(components).map(componentJson),
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

export const SPDX_MEDIA_TYPE = 'application/spdx+json';

/*
 * SPDX 2.3 JSON (`<target>.sbom.spdx.json`) of the same components as the CycloneDX file beside it:
 * one package per component, described by the document. The document is the same for the same
 * components (its namespace is their digest, its date fixed), so an image's SBOM layer is reproducible.
 */

/** The date SPDX requires of a document: the one every layer entry carries (1980-01-01T00:00:01Z). */
const CREATED = '1980-01-01T00:00:01Z';
const ALGORITHMS = { 'SHA-1': 'SHA1', 'SHA-256': 'SHA256', 'SHA-384': 'SHA384', 'SHA-512': 'SHA512' } as const;

/** A license text as an SPDX expression: SPDX ids and expressions as they are, anything else as a LicenseRef. */
function licenseExpression(text: string, refs: Map<string, string>): string {
  const t = text.trim();
  if (isSpdxExpression(t)) return t;
  const id = refs.get(t) ?? `LicenseRef-${refs.size + 1}`;
  refs.set(t, id);
  return id;
}

export function spdx(name: string, components: SbomComponent[]): object {
  const refs = new Map<string, string>();
  const packages = components.map((c, i) => {
    const licenses = (c.licenses ?? []).map((l) => licenseExpression(l, refs));
    const checksums = [...(c.sha256 ? [{ alg: 'SHA-256' as const, content: c.sha256 }] : []), ...(c.hashes ?? [])];
    const props = Object.entries(c.properties ?? {});
    return {
      SPDXID: `SPDXRef-Package-${i + 1}-${c.name.replace(/[^A-Za-z0-9.-]+/g, '-')}`,
      name: c.group ? `${c.group}/${c.name}` : c.name,
      ...(c.version !== undefined ? { versionInfo: c.version } : {}),
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      licenseConcluded: 'NOASSERTION',
      licenseDeclared: licenses.length ? licenses.map((l) => (licenses.length > 1 && l.includes(' ') ? `(${l})` : l)).join(' OR ') : 'NOASSERTION',
      copyrightText: 'NOASSERTION',
      ...(checksums.length ? { checksums: checksums.map((h) => ({ algorithm: ALGORITHMS[h.alg], checksumValue: h.content })) } : {}),
      ...(c.purl ? { externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: c.purl }] } : {}),
      ...(props.length ? { comment: props.map(([k, v]) => `${k}=${v}`).join('\n') } : {}),
    };
  });
  const digest = crypto
    .createHash('sha256')
    .update(JSON.stringify([name, packages]))
    .digest('hex');
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name,
    documentNamespace: `urn:runtime-buildpacks:sbom:${digest}`,
    creationInfo: { created: CREATED, creators: ['Tool: runtime-buildpacks'] },
    packages,
    relationships: packages.map((p) => ({ spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: p.SPDXID })),
    ...(refs.size ? { hasExtractedLicensingInfos: [...refs].map(([text, licenseId]) => ({ licenseId, extractedText: text, name: text })) } : {}),
  };
}

/** The components of `<target>.sbom.cdx.json` as this module wrote them; undefined when there is none. */
export function readSbom(layersDir: string, target: string): SbomComponent[] | undefined {
  let doc: { components?: WrittenComponent[] };
  try {
    doc = JSON.parse(fs.readFileSync(path.join(layersDir, `${target}.sbom.cdx.json`), 'utf8')) as typeof doc;
  } catch {
    return undefined;
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

/** Adds components to `<target>`'s SBOM files, keeping those already there (a later one with the same bom-ref is dropped). */
export function appendSbom(layersDir: string, target: string, components: SbomComponent[]): string {
  return writeSbom(layersDir, target, [...(readSbom(layersDir, target) ?? []), ...components]);
}

/**
 * `target` is a layer name, or `launch` / `build` for the buildpack-wide SBOMs: its components in
 * CycloneDX (`<target>.sbom.cdx.json`) and SPDX (`<target>.sbom.spdx.json`), as Paketo's buildpacks
 * write both. Returns the CycloneDX file.
 */
export function writeSbom(layersDir: string, target: string, components: SbomComponent[]): string {
  fs.mkdirSync(layersDir, { recursive: true });
  const file = path.join(layersDir, `${target}.sbom.cdx.json`);
  const all = unique(components);
  fs.writeFileSync(file, `${JSON.stringify(cycloneDx(all), null, 2)}\n`);
  fs.writeFileSync(path.join(layersDir, `${target}.sbom.spdx.json`), `${JSON.stringify(spdx(`${path.basename(layersDir)}/${target}`, all), null, 2)}\n`);
  return file;
}

/** The media type of an SBOM file by its name, as the lifecycle maps it; undefined for other formats. */
export function sbomMediaType(fileName: string): string | undefined {
  if (fileName.endsWith('.sbom.cdx.json')) return CYCLONEDX_MEDIA_TYPE;
  if (fileName.endsWith('.sbom.spdx.json')) return SPDX_MEDIA_TYPE;
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
