/**
 * What an app depends on, as SBOM components: the packages installed in a node_modules tree (any
 * package manager that makes one: npm, pnpm, Yarn's node-modules linker, Bun), with the lock file's
 * integrity digests when package-lock.json has them (Yarn Plug'n'Play: its lock file), and Composer's vendor/ from
 * vendor/composer/installed.json. Read from what was installed, not from the manifest, so the SBOM
 * says what runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readJsonIfAny as readJson } from '../fsx.ts';
import type { SbomComponent } from './sbom.ts';

interface PackageJsonLike {
  name?: string;
  version?: string;
  license?: string | { type?: string };
  licenses?: { type?: string }[];
}

/** `pkg:npm/%40scope/name@1.0.0` (purl-spec: the scope's @ is encoded). */
export function npmPurl(name: string, version: string): string {
  const [scope, bare] = name.startsWith('@') ? name.split('/', 2) : [undefined, name];
  return `pkg:npm/${scope ? `${encodeURIComponent(scope)}/` : ''}${encodeURIComponent(bare)}@${encodeURIComponent(version)}`;
}

/** An npm package as a component: `@scope/name` has the group `@scope`. */
function npmComponent(name: string, version: string): SbomComponent {
  const slash = name.startsWith('@') ? name.indexOf('/') : -1;
  return { type: 'library', ...(slash > 0 ? { group: name.slice(0, slash) } : {}), name: name.slice(slash + 1), version, purl: npmPurl(name, version) };
}

/** An SRI integrity (`sha512-<base64>`) as a CycloneDX hash. */
function sriHash(integrity: string | undefined): SbomComponent['hashes'] {
  const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=]+)/.exec(integrity ?? '');
  if (!m) return undefined;
  const alg = ({ sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' } as const)[m[1] as 'sha1'];
  return [{ alg, content: Buffer.from(m[2]!, 'base64').toString('hex') }];
}

function licensesOf(p: PackageJsonLike): string[] | undefined {
  if (typeof p.license === 'string' && p.license) return [p.license];
  if (p.license && typeof p.license === 'object' && p.license.type) return [p.license.type];
  const old = (p.licenses ?? []).map((l) => l.type).filter((t): t is string => Boolean(t));
  return old.length ? old : undefined;
}

/** Package directories under one node_modules: `name/` and `@scope/name/`, plus pnpm's `.pnpm/*\/node_modules/`. */
function packageDirs(nodeModules: string, out: string[], seenDirs: Set<string>): void {
  let real: string;
  try {
    real = fs.realpathSync(nodeModules);
  } catch {
    return;
  }
  if (seenDirs.has(real)) return;
  seenDirs.add(real);
  for (const name of safeReaddir(nodeModules)) {
    const p = path.join(nodeModules, name);
    if (name === '.pnpm') {
      for (const store of safeReaddir(p)) packageDirs(path.join(p, store, 'node_modules'), out, seenDirs);
      continue;
    }
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const n of safeReaddir(p)) addPackage(path.join(p, n), out, seenDirs);
      continue;
    }
    addPackage(p, out, seenDirs);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function addPackage(dir: string, out: string[], seenDirs: Set<string>): void {
  out.push(dir);
  packageDirs(path.join(dir, 'node_modules'), out, seenDirs);
}

/**
 * The packages installed under `nodeModules`, one component per name@version. `lockFile`
 * (package-lock.json or npm-shrinkwrap.json, v2/v3) adds integrity digests.
 */
export function nodeModulesComponents(nodeModules: string, lockFile?: string): SbomComponent[] {
  const integrity = new Map<string, string>();
  const lock = lockFile ? readJson<{ packages?: Record<string, { name?: string; version?: string; integrity?: string }> }>(lockFile) : undefined;
  for (const [key, p] of Object.entries(lock?.packages ?? {})) {
    const name = p.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (key && p.version && p.integrity) integrity.set(`${name}@${p.version}`, p.integrity);
  }
  const dirs: string[] = [];
  packageDirs(nodeModules, dirs, new Set());
  const byRef = new Map<string, SbomComponent>();
  for (const dir of dirs) {
    const p = readJson<PackageJsonLike>(path.join(dir, 'package.json'));
    if (!p?.name || !p.version) continue;
    const ref = `${p.name}@${p.version}`;
    if (byRef.has(ref)) continue;
    const hashes = sriHash(integrity.get(ref));
    const licenses = licensesOf(p);
    byRef.set(ref, { ...npmComponent(p.name, p.version), ...(hashes ? { hashes } : {}), ...(licenses ? { licenses } : {}) });
  }
  return [...byRef.values()].sort((a, b) => (a.purl! < b.purl! ? -1 : 1));
}

interface ComposerInstalled {
  name?: string;
  version?: string;
  version_normalized?: string;
  license?: string[];
  type?: string;
  dist?: { shasum?: string };
}

/** The packages Composer installed in `vendorDir` (Composer 2's `{packages: []}` or Composer 1's array). */
export function composerComponents(vendorDir: string): SbomComponent[] {
  const doc = readJson<{ packages?: ComposerInstalled[] } | ComposerInstalled[]>(path.join(vendorDir, 'composer', 'installed.json'));
  const list = Array.isArray(doc) ? doc : (doc?.packages ?? []);
  return list
    .filter((p): p is ComposerInstalled & { name: string; version: string } => Boolean(p.name && p.version))
    .map((p) => {
      const [vendor, name] = p.name.includes('/') ? (p.name.split('/', 2) as [string, string]) : [undefined, p.name];
      const sha1 = p.dist?.shasum && /^[0-9a-f]{40}$/i.test(p.dist.shasum) ? p.dist.shasum.toLowerCase() : undefined;
      return {
        type: p.type === 'project' ? 'application' : 'library',
        ...(vendor ? { group: vendor } : {}),
        name,
        version: p.version,
        purl: `pkg:composer/${vendor ? `${encodeURIComponent(vendor)}/` : ''}${encodeURIComponent(name)}@${encodeURIComponent(p.version)}`,
        ...(sha1 ? { hashes: [{ alg: 'SHA-1' as const, content: sha1 }] } : {}),
        ...(p.license?.length ? { licenses: p.license } : {}),
      } satisfies SbomComponent;
    })
    .sort((a, b) => (a.purl < b.purl ? -1 : 1));
}

/**
 * The packages a Yarn Berry lock file resolves from the npm registry (`name@npm:1.2.3`): for
 * Plug'n'Play installs, which leave no node_modules tree to read. Workspaces, patches and other
 * protocols are not packages of the registry and are left out; Yarn's checksum is of its own zip
 * archive, not of the package, so no hash is given.
 */
export function yarnBerryLockComponents(lockFile: string): SbomComponent[] {
  // An empty file parses to null, an entry without fields to null.
  let doc: Record<string, { resolution?: string } | null> | null;
  try {
    doc = parseYaml(fs.readFileSync(lockFile, 'utf8')) as typeof doc;
  } catch {
    return [];
  }
  const byRef = new Map<string, SbomComponent>();
  for (const [key, entry] of Object.entries(doc ?? {})) {
    if (key === '__metadata') continue;
    const m = /^(@?[^@]+)@npm:(.+)$/.exec(entry?.resolution ?? '');
    if (!m) continue;
    const c = npmComponent(m[1]!, m[2]!);
    byRef.set(c.purl!, c);
  }
  return [...byRef.values()].sort((a, b) => (a.purl! < b.purl! ? -1 : 1));
}
