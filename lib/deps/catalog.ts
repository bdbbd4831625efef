/**
 * The tools a buildpack may install, as declared in its buildpack.toml:
 *
 *   [[metadata.dependencies]]
 *   id = "caddy"
 *   version = "2.11.2"
 *   uri = "https://github.com/caddyserver/caddy/releases/download/v{version}/caddy_{version}_linux_{arch}.tar.gz"
 *   sha256 = "…"            # or checksum-uri = "…_checksums.txt"
 *   arch = "amd64"          # OCI arch; omitted = any
 *   archive = "tar.gz"      # tar.gz | tar.xz | zip | none (a single binary)
 *   strip-components = 0
 *   bin = "caddy"           # the executable inside the unpacked tree
 *
 * A wrong entry is a bug in the buildpack, not in the user's app: it is a plain Error naming the field.
 */
import path from 'node:path';
import semver from 'semver';
import type { BuildpackDescriptor } from '../cnb/descriptor.ts';
import { checksumFromHex, type Checksum } from './checksum.ts';
import { parseLocation } from './url.ts';

export type ArchiveKind = 'tar.gz' | 'tar.xz' | 'zip' | 'none';
export const ARCHIVE_KINDS: readonly ArchiveKind[] = ['tar.gz', 'tar.xz', 'zip', 'none'];

export interface DependencySpec {
  id: string;
  /** Exact semver. */
  version: string;
  /** Where to download it; `{version}` and `{arch}` are filled in by `resolveVersion`. */
  uri: string;
  /** A pinned checksum; absent when it comes from `checksumUri`, the mirror or nowhere. */
  checksum?: Checksum;
  /** An upstream checksum file (`<hex>  <file name>` lines) listing the artifact. */
  checksumUri?: string;
  /** OCI arch (`amd64`, `arm64`); undefined = any arch. */
  arch?: string;
  stripComponents: number;
  archive: ArchiveKind;
  /** Relative path of the executable inside the unpacked tree (`caddy`, `bin/node`). */
  bin: string;
}

const ID_RE = /^[a-z0-9][a-z0-9._-]*$/i;

/** Guesses the archive kind from the file name, for entries that leave `archive` out. */
function archiveFromUri(uri: string): ArchiveKind | undefined {
  const name = uri.split(/[?#]/)[0]!.toLowerCase();
  if (name.endsWith('.tar.gz') || name.endsWith('.tgz')) return 'tar.gz';
  if (name.endsWith('.tar.xz') || name.endsWith('.txz')) return 'tar.xz';
  if (name.endsWith('.zip')) return 'zip';
  return undefined;
}

/** Parses `[[metadata.dependencies]]` (the array itself). Unknown keys (cpe, purl, licenses…) are ignored. */
export function parseDependencies(raw: unknown, file = 'buildpack.toml'): DependencySpec[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new Error(`${file}: [metadata] dependencies must be an array of tables ([[metadata.dependencies]])`);
  const specs = raw.map((entry, i) => parseEntry(entry, i, file));
  const seen = new Set<string>();
  for (const s of specs) {
    const key = `${s.id} ${s.version} ${s.arch ?? '*'}`;
    if (seen.has(key)) throw new Error(`${file}: [[metadata.dependencies]] lists ${s.id} ${s.version} for arch ${s.arch ?? 'any'} twice`);
    seen.add(key);
  }
  return specs;
}

function parseEntry(entry: unknown, index: number, file: string): DependencySpec {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new Error(`${file}: [[metadata.dependencies]] entry ${index + 1} is not a table`);
  }
  const e = entry as Record<string, unknown>;
  const label = `${file}: [[metadata.dependencies]] entry ${index + 1}${typeof e.id === 'string' ? ` (${e.id}${typeof e.version === 'string' ? ` ${e.version}` : ''})` : ''}`;
  const fail = (field: string, problem: string): never => {
    throw new Error(`${label}: "${field}" ${problem}, got ${JSON.stringify(e[field])}`);
  };
  const str = (field: string, required: boolean): string | undefined => {
    const v = e[field];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v.trim() === '') return fail(field, 'must be a non-empty string');
    return v.trim();
  };

  const id = str('id', true)!;
  if (!ID_RE.test(id)) fail('id', 'must be letters, digits, ".", "_" or "-"');
  const version = str('version', true)!;
  if (semver.valid(version) !== version) fail('version', 'must be an exact semver version such as "2.11.2"');
  const uri = str('uri', true)!;
  try {
    parseLocation(uri.replaceAll('{version}', version).replaceAll('{arch}', 'amd64'));
  } catch {
    fail('uri', 'must be an https://, http:// or file:// URL or a path');
  }

  let checksum: Checksum | undefined;
  const sha = str('sha256', false);
  if (sha !== undefined) checksum = checksumFromHex(sha, 'sha256', 'buildpack.toml') ?? fail('sha256', 'must be 64 hex characters');
  const checksumUri = str('checksum-uri', false);

  const arch = str('arch', false);
  if (arch !== undefined && !/^[a-z0-9_]+$/.test(arch)) fail('arch', 'must be an OCI architecture such as "amd64" or "arm64"');

  const strip = e['strip-components'] ?? 0;
  if (typeof strip !== 'number' || !Number.isInteger(strip) || strip < 0) fail('strip-components', 'must be a whole number ≥ 0');

  const archiveRaw = e.archive ?? archiveFromUri(uri);
  if (archiveRaw === undefined) fail('archive', `must be one of ${ARCHIVE_KINDS.join(', ')} (it cannot be told from the uri)`);
  if (!ARCHIVE_KINDS.includes(archiveRaw as ArchiveKind)) fail('archive', `must be one of ${ARCHIVE_KINDS.join(', ')}`);

  const bin = str('bin', false) ?? id;
  if (path.isAbsolute(bin) || path.normalize(bin).split(path.sep).includes('..')) fail('bin', 'must be a relative path inside the unpacked tree');

  return {
    id,
    version,
    uri,
    ...(checksum ? { checksum } : {}),
    ...(checksumUri ? { checksumUri } : {}),
    ...(arch ? { arch } : {}),
    stripComponents: strip as number,
    archive: archiveRaw as ArchiveKind,
    bin: path.normalize(bin),
  };
}

/** The dependencies of a buildpack descriptor already read. */
export function dependenciesOf(descriptor: BuildpackDescriptor, file = 'buildpack.toml'): DependencySpec[] {
  return parseDependencies(descriptor.metadata?.dependencies, file);
}

/** Fills `{version}` and `{arch}` in a uri template. */
export function expandTemplate(template: string, vars: { version: string; arch: string }): string {
  return template.replaceAll('{version}', vars.version).replaceAll('{arch}', vars.arch);
}
