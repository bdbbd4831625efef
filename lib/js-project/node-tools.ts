/**
 * Installing the runtime and the package manager programs into cached layers through lib/deps, for
 * the node buildpack and for the static buildpack's JavaScript generators (the same Node.js and npm
 * a node app of the project would get), all from npm packages of the registry (package-managers.ts).
 * Every download is checked against the registry's integrity (or the packageManager hash). A layer
 * whose metadata already names the wanted exact version is reused without asking the registry.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import type { Layers } from '../cnb/layers.ts';
import { ociArch } from '../cnb/descriptor.ts';
import type { DependencySpec } from '../deps/catalog.ts';
import { checksumFromHex, formatChecksum, type Checksum } from '../deps/checksum.ts';
import { installTool, type InstalledTool, type InstallToolOptions } from '../deps/install.ts';
import { nodePackage, NpmRegistryClient, npmRegistrySource, toolRegistry, withRegistryCredentials, type Packument } from '../deps/npm.ts';
import { operatorVariable } from '../deps/operator.ts';
import { pickVersion, type ConstraintOrigin } from '../deps/resolve.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { bundledNpmVersion } from './npm-version.ts';
import { isSet } from '../config/read.ts';
import { writeSbom } from '../cnb/sbom.ts';
import { PACKAGE_MANAGERS, toolOf, type CheckedInYarn, type ToolId, type ToolPackage } from './package-managers.ts';

export interface ToolEnv {
  layers: Layers;
  env: Record<string, string | undefined>;
  log: Logger;
  /** The registry tool packages come from (RBP_NPM_REGISTRY, else the public one); it keeps each document for the build. */
  npm: NpmRegistryClient;
  /** Node.js's and npm's layers: on PATH at build and launch (a node app), or at build only (a site generator). */
  types?: { build: boolean; launch: boolean };
}

/** The registry client of a build: RBP_NPM_REGISTRY (operator), else the public registry. */
export function toolRegistryClient(env: Record<string, string | undefined>, log: Logger): NpmRegistryClient {
  const registry = toolRegistry(env);
  return new NpmRegistryClient({ ...(registry ? { registry } : {}), log, memo: true });
}

/** The DependencySpec of `pkg@version` from its document; `pinned` (a packageManager hash) must agree with the registry. */
export function specOf(t: ToolEnv, doc: Packument, pkg: string, id: string, version: string, bin: string, pinned?: Checksum): DependencySpec {
  const spec = t.npm.spec(doc, pkg, version, { id, bin });
  const registry = spec.checksum;
  if (pinned && pinned.algorithm === registry?.algorithm && pinned.hex !== registry.hex) {
    throw new UserError({
      id: 'node/package-manager/hash-mismatch',
      title: `The packageManager hash does not match ${pkg}@${version}`,
      seen: { what: 'packageManager', value: `${id}@${version}+${pinned.algorithm}.${pinned.hex.slice(0, 16)}…`, where: 'package.json' },
      rule: 'the hash after + in packageManager is the digest of the package the registry serves',
      fix: `check the field (corepack use ${id}@${version} writes it), or remove the hash`,
      details: [`registry: ${formatChecksum(registry)}`],
    });
  }
  return { ...spec, checksum: pinned ?? registry! };
}

/** A spec rebuilt from a restored layer's metadata, when it already holds `version` (no registry round trip). */
function cachedSpec(t: ToolEnv, layer: string, id: string, bin: string, accept: (md: Record<string, unknown>) => boolean): DependencySpec | undefined {
  const md = t.layers.restored(layer).metadata;
  if (md?.id !== id || typeof md.version !== 'string' || typeof md.uri !== 'string' || typeof md.sha !== 'string' || !accept(md)) return undefined;
  const [algo, hex] = md.sha.split(':');
  const checksum = checksumFromHex(hex ?? '', algo as Checksum['algorithm']);
  if (!checksum) return undefined;
  // The metadata's uri has its credentials redacted: the registry's are put back.
  return {
    id,
    version: md.version,
    uri: withRegistryCredentials(md.uri, t.npm.registry),
    checksum,
    archive: 'tar.gz',
    stripComponents: 1,
    bin,
    arch: typeof md.arch === 'string' ? md.arch : ociArch(),
  };
}

export interface Installed {
  version: string;
  /** The directory holding the command (on PATH for the build's commands). */
  binDir: string;
  tool: InstalledTool;
}

function result(tool: InstalledTool, version: string): Installed {
  return { version: tool.version ?? version, binDir: path.dirname(tool.path), tool };
}

/** installTool into the layer `layerName`, run as `command`: at build and launch unless `types` says otherwise. */
function install(t: ToolEnv, layerName: string, command: string, o: Pick<InstallToolOptions, 'spec' | 'source' | 'constraint' | 'origin' | 'types'>) {
  return installTool({ layers: t.layers, layerName, command, env: t.env, log: t.log, types: t.types ?? { build: true, launch: true }, ...o });
}

/**
 * The operator's own binary (RBP_TOOL_<ID>): lib/deps uses it as is and warns when its version is not
 * the one asked for. Nothing is resolved first, so an image that carries its tools builds offline.
 */
async function operatorTool(t: ToolEnv, id: string, pkg: string, bin: string, constraint: string, origin?: ConstraintOrigin): Promise<Installed | undefined> {
  if (!isSet(t.env, operatorVariable(id))) return undefined;
  const source = npmRegistrySource({ pkg, id, bin, registry: t.npm.registry, log: t.log });
  const tool = await install(t, id, id, { source, constraint, ...(origin ? { origin } : {}) });
  return result(tool, tool.version ?? constraint);
}

/** Node.js itself: launch and build, cached per version. */
export async function installNode(t: ToolEnv, constraint: string, origin: ConstraintOrigin, onVersion?: (version: string) => void): Promise<Installed> {
  const pkg = nodePackage();
  const own = await operatorTool(t, 'node', pkg, 'bin/node', constraint, origin);
  if (own) {
    onVersion?.(own.version);
    return own;
  }
  const exact = semver.valid(constraint) ?? undefined;
  let spec = exact ? cachedSpec(t, 'node', 'node', 'bin/node', (md) => md.version === exact) : undefined;
  if (!spec) {
    // The full document: npm's choice needs its publication dates (installNpm asks for it again).
    const doc = await t.log.step(`resolve Node.js "${constraint}" from the registry (${pkg})`, () => t.npm.document(pkg, { full: true }));
    const version = pickVersion(Object.keys(doc.versions), constraint, 'node', origin);
    spec = specOf(t, doc, pkg, 'node', version, 'bin/node');
  }
  // The version is known before the download: what depends on it alone (npm) need not wait.
  onVersion?.(spec.version);
  const tool = await install(t, 'node', 'node', { spec });
  return result(tool, spec.version);
}

/** The npm Node.js ships with; its layer remembers which Node it was chosen for. */
export async function installNpm(t: ToolEnv, nodeVersion: string): Promise<Installed> {
  const npm = PACKAGE_MANAGERS.npm.tool!;
  const own = await operatorTool(t, npm.id, npm.pkg(), npm.bin(nodeVersion), '*');
  if (own) return own;
  const restored = t.layers.restored(npm.layer).metadata;
  let spec = restored?.node === nodeVersion ? cachedSpec(t, npm.layer, npm.id, npm.bin(nodeVersion), () => true) : undefined;
  if (restored && 'node' in restored) {
    // `node` is ours, not lib/deps': without it the restored metadata is what installTool compares.
    const { node: _node, ...rest } = restored;
    t.layers.writeToml(npm.layer, {}, rest);
  }
  if (!spec) {
    const [npmDoc, nodeDoc] = await t.log.step(`find the npm bundled with Node.js ${nodeVersion}`, () =>
      Promise.all([t.npm.document(npm.pkg(), { full: true }), t.npm.document(nodePackage(), { full: true })]),
    );
    const released = nodeDoc.time?.[nodeVersion];
    const version = bundledNpmVersion(nodeVersion, npmDoc, released ? new Date(released) : undefined);
    if (!version) {
      throw new UserError({
        id: 'node/npm/none-for-node',
        title: `No npm for Node.js ${nodeVersion}`,
        seen: { what: 'Node.js version', value: nodeVersion, where: t.npm.shown },
        rule: 'The npm installed with Node.js is the newest of the line that Node.js release bundles, published before it, whose engines accept it.',
        fix: 'Pick another Node.js version (engines.node or CC_NODE_VERSION), or check that RBP_NPM_REGISTRY carries the npm package.',
      });
    }
    spec = specOf(t, npmDoc, npm.pkg(), npm.id, version, npm.bin(version));
  }
  const tool = await install(t, npm.layer, npm.command, { spec });
  // The layer's metadata says which Node.js this npm was chosen for, so the next build need not ask again.
  if (tool.layer) t.layers.writeToml(npm.layer, tool.layer.types, { ...tool.layer.metadata, node: nodeVersion });
  return result(tool, spec.version);
}

/** An engines range's field (`engines.pnpm`) and the manager's line in messages (`Yarn 1`). */
type EnginesRange = { field: string; label: string };

export interface ManagerRequest {
  /** A manager of the table (package-managers.ts) or one of its OTHER_TOOLS (Deno). */
  id: ToolId;
  constraint: string;
  origin: ConstraintOrigin;
  hash?: { algorithm: string; hex: string };
  /** Default build and launch; a tool only the build's commands use (Yarn beside npm) is build-only. */
  types?: { build?: boolean; launch?: boolean };
  /** The constraint is the app's engines range (`engines.pnpm`): the releases it may pick, and an error of its own when none fits. */
  engines?: { field: string; label: string; accept?: (version: string) => boolean };
}

/** The version a request picks from the registry's: the newest that satisfies it (of the engines range's line). */
function pickManagerVersion(versions: string[], req: Pick<ManagerRequest, 'id' | 'constraint' | 'origin' | 'engines'>): string {
  if (!req.engines) return pickVersion(versions, req.constraint, req.id, req.origin);
  const line = versions.filter((v) => semver.valid(v) && !semver.prerelease(v) && (req.engines!.accept?.(v) ?? true));
  const range = semver.validRange(req.constraint);
  const best = range ? semver.maxSatisfying(line, range) : null;
  if (!best) throw enginesUnsatisfied(req.engines, req.constraint, toolOf(req.id).id, semver.rsort(line)[0], req.origin.where);
  return best;
}

/** No release of the manager's line satisfies the app's engines range (or it is no range). */
export function enginesUnsatisfied({ field, label }: EnginesRange, range: string, tool: string, newest: string | undefined, where = 'package.json'): UserError {
  return new UserError({
    id: 'node/package-manager/engines-unsatisfied',
    title: `No ${label} release satisfies ${field} "${range}"`,
    seen: { what: field, value: range, where },
    rule: `Without packageManager, the ${label} the build installs is the newest release that satisfies ${field}, a semver range (contract, node rule 7: versions come from packageManager).`,
    fix: `Write a range that a published ${label} satisfies${newest ? ` (the newest is ${newest})` : ''}, or name one exactly: "packageManager": "${tool}@${newest ?? '<version>'}" in package.json.`,
  });
}

/**
 * The exact version installManager would install for a constraint, from the registry's document
 * (kept for the build: the install asks for it again for free). For a check that must come before
 * any download (a yarn.lock the default Yarn would rewrite).
 */
export async function resolveManagerVersion(t: ToolEnv, req: Pick<ManagerRequest, 'id' | 'constraint' | 'origin' | 'engines'>): Promise<string> {
  const exact = semver.valid(req.constraint);
  if (exact && !req.engines) return exact;
  const pkg = toolOf(req.id).pkg();
  const doc = await t.log.step(`resolve ${req.id} "${req.constraint}" from the registry (${pkg})`, () => t.npm.document(pkg));
  return pickManagerVersion(Object.keys(doc.versions), req);
}

/** pnpm, Yarn, Bun or Deno, at the version packageManager (or mise.toml) asks for, else the default. */
export async function installManager(t: ToolEnv, req: ManagerRequest): Promise<Installed> {
  const p = toolOf(req.id);
  const pkg = p.pkg();
  // An engines range that is one version is still checked against the registry (and its line).
  const exact = req.engines ? undefined : (semver.valid(req.constraint) ?? undefined);
  // A packageManager hash of the package tarball is checked by the download; one of a single file of it (Yarn ≥ 2's yarn.js) once installed.
  const hashChecksum = req.hash && !p.hashedFile ? checksumFromHex(req.hash.hex, req.hash.algorithm as Checksum['algorithm']) : undefined;
  let spec = exact && !req.hash ? cachedSpec(t, p.layer, p.id, p.bin(exact), (md) => md.version === exact && String(md.uri).includes(`/${pkg}/-/`)) : undefined;
  if (!spec) {
    const doc = await t.log.step(`resolve ${req.id} "${req.constraint}" from the registry (${pkg})`, () => t.npm.document(pkg));
    const version = pickManagerVersion(Object.keys(doc.versions), req);
    spec = specOf(t, doc, pkg, p.id, version, p.bin(version), hashChecksum);
    if (req.hash && !hashChecksum && !p.hashedFile && req.hash.algorithm === 'sha1' && doc.versions[version]?.dist?.shasum !== req.hash.hex) {
      throw hashMismatch(req, version, `registry sha1 ${doc.versions[version]?.dist?.shasum}`);
    }
  }
  const tool = await install(t, p.layer, p.command, { spec, types: req.types ?? { build: true, launch: true } });
  if (p.hashedFile && req.hash && tool.layer) {
    const file = path.join(tool.layer.path, p.hashedFile);
    const got = crypto.createHash(req.hash.algorithm).update(fs.readFileSync(file)).digest('hex');
    if (got !== req.hash.hex) {
      t.layers.remove(p.layer);
      throw hashMismatch(req, spec.version, `${path.basename(p.hashedFile)} ${req.hash.algorithm} ${got}`);
    }
    t.log.detail(`verified ${path.basename(p.hashedFile)} against the packageManager hash (${req.hash.algorithm})`);
  }
  return result(tool, spec.version);
}

export function hashMismatch(req: ManagerRequest, version: string, actual: string): UserError {
  return new UserError({
    id: 'node/package-manager/hash-mismatch',
    title: `The packageManager hash does not match ${req.id} ${version}`,
    seen: { what: 'packageManager', value: `${req.id}@${version}+${req.hash!.algorithm}.${req.hash!.hex.slice(0, 16)}…`, where: 'package.json' },
    rule: 'the hash after + in packageManager is the digest of what the registry serves for that version',
    fix: `check the field (corepack use ${toolOf(req.id).id}@${version} writes it), or remove the hash`,
    details: [`actual: ${actual}`],
  });
}

/**
 * Yarn Berry from the release checked in at yarnPath: nothing is downloaded. The
 * `yarn` layer holds a `yarn` that starts that release with the Node.js on PATH, as any Yarn would
 * after reading yarnPath; its metadata records the release and its digest (SBOM, reuse).
 */
export function installCheckedInYarn(t: ToolEnv, release: CheckedInYarn, yarn: ToolPackage): Installed {
  const sha256 = crypto.createHash('sha256').update(fs.readFileSync(release.abs)).digest('hex');
  const layer = t.layers.fresh(
    yarn.layer,
    { build: true, launch: true },
    { id: yarn.id, version: release.version, release: release.file, sha: `sha256:${sha256}`, source: 'yarnPath' },
  );
  const bin = path.join(layer.path, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const shim = path.join(bin, yarn.command);
  fs.writeFileSync(
    shim,
    `#!/bin/sh\n# yarnPath in .yarnrc.yml: the release checked in with the app is the Yarn that runs.\nexec node ${shellQuote(release.abs)} "$@"\n`,
    { mode: 0o755 },
  );
  writeSbom(t.layers.dir, yarn.layer, [{ name: yarn.id, version: release.version, sha256 }]);
  return { version: release.version, binDir: bin, tool: { id: yarn.id, path: shim, version: release.version, source: 'app', layer: undefined } };
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
