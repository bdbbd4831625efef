/**
 * Installing one tool into a cache layer: the operator's own binary if RBP_TOOL_<NAME> names one,
 * else the cached layer when its metadata (id, version, checksum, arch, uri) is unchanged, else a
 * download from the mirror or upstream, verified against a checksum before anything is unpacked.
 * A tool whose upstream publishes no checksum (and none is pinned or mirrored) is downloaded only
 * over HTTPS from its release URL: its sha256 is logged with a warning and recorded in the SBOM.
 * RBP_REQUIRE_CHECKSUMS=1 refuses such a download instead.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ociArch } from '../cnb/descriptor.ts';
import type { Layer, Layers } from '../cnb/layers.ts';
import { readSbom, writeSbom } from '../cnb/sbom.ts';
import { read } from '../config/read.ts';
import { UserError } from '../errors.ts';
import { expandTemplate, type DependencySpec } from './catalog.ts';
import { formatChecksum, parseChecksumFile, sameChecksum, verifyDigests, type Checksum } from './checksum.ts';
import { downloadFile, fetchText, type NetworkOptions } from './download.ts';
import { downloadCacheRoot, installShared } from './download-cache.ts';
import { MIRROR_VARIABLE, mirrorChecksum, mirrorFromEnv, mirrorRef, type Mirror } from './mirror.ts';
import { findOperatorTool, operatorVariable } from './operator.ts';
import { copyOperatorTool, operatorToolPlacement } from './operator-copy.ts';
import type { ConstraintOrigin, DependencySource } from './resolve.ts';
import { unpack } from './unpack.ts';
import { fileNameOf, redact, withSuffix } from './url.ts';
import { isExecutableFile } from '../fsx.ts';
import { writeFailure, type WriteTarget } from '../disk.ts';
import { formatBytes, type Logger } from '../log.ts';

export interface InstallToolOptions {
  layers: Layers;
  layerName: string;
  /** A resolved spec (`resolveVersion`)… */
  spec?: DependencySpec;
  /** …or a source and a constraint to resolve (`npmRegistrySource`, `catalogSource`). */
  source?: DependencySource;
  constraint?: string;
  /** Who asked for `constraint`, for error messages (`CC_NODE_VERSION`). */
  origin?: ConstraintOrigin;
  /** OCI arch; default this machine's. */
  arch?: string;
  /** The layer is always cached; these say whether it is also on PATH at build and/or launch. */
  types?: { build?: boolean; launch?: boolean };
  /** Where RBP_TOOL_<NAME> and RBP_DEPENDENCY_MIRROR are read; default process.env. */
  env?: Record<string, string | undefined>;
  log: Logger;
  /** Arguments that make an operator-provided tool print its version; default `['--version']`. */
  versionArgs?: string[];
  versionPattern?: RegExp;
  /** The command's name in `<layer>/bin`; default the executable's file name. */
  command?: string;
  network?: NetworkOptions;
}

/** Where a tool came from; `app`: the application carries it (Yarn's release at yarnPath). */
export type ToolOrigin = 'download' | 'cache' | 'mirror' | 'operator' | 'app';

const REQUIRE_CHECKSUMS_VARIABLE = 'RBP_REQUIRE_CHECKSUMS';

/** What decides whether a cached install can be reused. Never holds credentials. */
export type ToolLayerMetadata = {
  id: string;
  version: string;
  arch: string;
  uri: string;
  sha?: string;
};

export interface InstalledTool {
  id: string;
  /** The executable: `<layer>/bin/<command>`, or the operator's path. */
  path: string;
  /** Undefined only for an operator's tool that printed no version. */
  version: string | undefined;
  source: ToolOrigin;
  /** Undefined for an operator's tool: nothing is installed. */
  layer: Layer<ToolLayerMetadata> | undefined;
}

export async function installTool(o: InstallToolOptions): Promise<InstalledTool> {
  const env = o.env ?? process.env;
  const { log } = o;
  const id = o.spec?.id ?? o.source?.id;
  if (!id) throw new Error('installTool needs a spec, or a source and a constraint');

  const operator = await findOperatorTool({
    id,
    env,
    log,
    versionArgs: o.versionArgs ?? ['--version'],
    ...(o.versionPattern ? { versionPattern: o.versionPattern } : {}),
    ...((o.spec?.version ?? o.constraint) ? { expected: o.spec?.version ?? o.constraint } : {}),
    sbom: { layersDir: o.layers.dir, target: o.types?.launch ? 'launch' : 'build' },
  });
  if (operator) {
    // Run at launch: the image must hold it (operator-copy.ts), unless the operator says the run
    // environment has it at the same path (rbp's builds without an image say so).
    if (o.types?.launch && operatorToolPlacement(env) === 'copy') {
      const copy = await copyOperatorTool({
        layers: o.layers,
        layerName: o.layerName,
        tool: operator,
        id,
        command: o.command ?? path.basename(operator.path),
        types: o.types,
        log,
        place: layerPlace(path.join(o.layers.dir, o.layerName), o.layerName, `${operator.variable}=${operator.path}`),
      });
      return { id, path: copy.path, version: operator.version, source: 'operator', layer: undefined };
    }
    // A layer left by an earlier build would be cached and exported for nothing.
    if (fs.existsSync(o.layers.dir)) o.layers.remove(o.layerName);
    return { id, path: operator.path, version: operator.version, source: 'operator', layer: undefined };
  }

  const arch = o.arch ?? ociArch();
  const mirror = mirrorFromEnv(env);
  const spec = await resolveSpec(o, arch);
  const metadata: ToolLayerMetadata = {
    id,
    version: spec.version,
    arch: spec.arch ?? arch,
    uri: redact(spec.uri),
    ...(spec.checksum ? { sha: formatChecksum(spec.checksum) } : {}),
  };
  const command = o.command ?? path.basename(spec.bin);
  const before = o.layers.restored(o.layerName).metadata;
  const layer = o.layers.get(o.layerName, { cache: true, build: Boolean(o.types?.build), launch: Boolean(o.types?.launch) }, metadata);
  const exe = path.join(layer.path, 'bin', command);
  if (layer.state === 'reused') {
    if (isExecutableFile(exe)) {
      log.info(`reused ${id} ${spec.version} (cached)`);
      writeToolSbom(o, spec, metadata, readObserved(o));
      return { id, path: exe, version: spec.version, source: 'cache', layer };
    }
    // Same metadata but no executable: an install that was interrupted. Start again.
    fs.rmSync(layer.path, { recursive: true, force: true });
    fs.mkdirSync(layer.path, { recursive: true });
    log.info(`installing ${id} ${spec.version} (cached layer is incomplete)`);
  } else {
    // A new version also changes the uri and checksum: name only the change that explains the others.
    const was = before?.version;
    const reason = typeof was === 'string' && was !== spec.version ? `version changed (${was} → ${spec.version})` : layer.reason;
    log.info(`installing ${id} ${spec.version} (${reason})`);
  }

  let observed: string | undefined;
  const shared = downloadCacheRoot(env);
  const place = layerPlace(layer.path, o.layerName, `${id} ${spec.version}`);
  try {
    const job: Job = { spec, mirror, from: mirror ? mirrorRef(mirror, spec) : spec.uri, o };
    observed = shared ? await viaDownloadCache(job, shared, metadata.arch, place) : await download(job, layer.path, place);
    linkExecutable(layer.path, spec.bin, command);
  } catch (e) {
    // Never leave metadata that would let a later build reuse half an install.
    o.layers.remove(o.layerName);
    throw writeFailure(e, place) ?? e;
  }
  writeToolSbom(o, spec, metadata, observed);
  return { id, path: exe, version: spec.version, source: mirror ? 'mirror' : 'download', layer };
}

/**
 * The sha256 seen when a tool without a published checksum was downloaded: a build that reuses the
 * layer takes it from the layer's SBOM, restored with the layer, and records it again.
 */
function readObserved(o: InstallToolOptions): string | undefined {
  return readSbom(o.layers.dir, o.layerName)?.[0]?.hashes?.find((h) => h.alg === 'SHA-256')?.content;
}

/**
 * `<layer>.sbom.cdx.json`: what the layer holds, where it came from, and its checksum: the pinned
 * sha256, or the one seen at download when upstream publishes none.
 */
function writeToolSbom(o: InstallToolOptions, spec: DependencySpec, metadata: ToolLayerMetadata, observed?: string): void {
  const sha256 = spec.checksum?.algorithm === 'sha256' ? spec.checksum.hex : observed;
  writeSbom(o.layers.dir, o.layerName, [
    {
      name: metadata.id,
      version: metadata.version,
      purl: `pkg:generic/${encodeURIComponent(metadata.id)}@${encodeURIComponent(metadata.version)}?download_url=${encodeURIComponent(metadata.uri)}`,
      ...(sha256 ? { sha256 } : {}),
    },
  ]);
}

async function resolveSpec(o: InstallToolOptions, arch: string): Promise<DependencySpec> {
  if (o.spec) {
    const vars = { version: o.spec.version, arch: o.spec.arch ?? arch };
    return {
      ...o.spec,
      uri: expandTemplate(o.spec.uri, vars),
      ...(o.spec.checksumUri ? { checksumUri: expandTemplate(o.spec.checksumUri, vars) } : {}),
    };
  }
  const { source } = o;
  if (!source || o.constraint === undefined) throw new Error('installTool needs a spec, or a source and a constraint');
  return o.log.step(`resolve ${source.id} "${o.constraint}" from ${source.description}`, () => source.resolve(o.constraint!, arch, o.origin));
}

/** `sha512:1b7e4446…5975 (npm registry dist.integrity)`: a checksum a reader can match, not a screenful. */
function shortChecksum(v: string): string {
  return v.replace(/\b(sha\d+):([0-9a-f]{8})[0-9a-f]+([0-9a-f]{4})\b/, '$1:$2…$3');
}

/** How a write failure names a tool's layer (lib/disk.ts). */
function layerPlace(folder: string, name: string, writing: string): WriteTarget {
  return {
    folder,
    what: `the layer ${name}`,
    writing,
    elsewhere: 'build where the layers have room (rbp build: an --out folder on a larger file system; a platform: a larger volume for CNB_LAYERS_DIR)',
  };
}

/** The tool cannot be shared: nothing verifies its download. */
class Unverifiable extends Error {}

/** One download: the spec, the mirror it comes from if any, and `from`, the URL or path read. */
interface Job {
  spec: DependencySpec;
  mirror: Mirror | undefined;
  from: string;
  o: InstallToolOptions;
}

/**
 * The tool from the shared download cache (download-cache.ts): linked from its entry, or
 * downloaded, verified and unpacked into a new entry first. A tool no checksum verifies is not
 * shared: it is downloaded into the layer as before. Returns the sha256 seen in that case.
 */
async function viaDownloadCache(job: Job, root: string, arch: string, layer: WriteTarget): Promise<string | undefined> {
  const { spec, mirror, from, o } = job;
  try {
    const r = await installShared({
      root,
      spec,
      arch,
      origin: mirror ? `mirror ${from.slice(0, from.length - fileNameOf(from).length)}` : 'upstream',
      target: layer.folder,
      targetPlace: layer,
      log: o.log,
      fill: async (dir, cache) => {
        const expected = await expectedChecksums(job);
        if (expected.length === 0) throw new Unverifiable();
        await download(job, dir, cache, expected);
        // Executable before the entry is recorded: linkExecutable then changes nothing it shares.
        const bin = path.join(dir, spec.bin);
        const st = fs.statSync(bin, { throwIfNoEntry: false });
        if (st?.isFile()) fs.chmodSync(bin, st.mode | 0o111);
        return expected;
      },
    });
    if (r.how === 'linked')
      o.log.detail(`linked from the download cache ${root} (verified when downloaded: ${r.record.verified.map(shortChecksum).join(', ')})`);
    return undefined;
  } catch (e) {
    if (!(e instanceof Unverifiable)) throw e;
    fs.mkdirSync(layer.folder, { recursive: true });
    return download(job, layer.folder, layer);
  }
}

/**
 * Downloads, verifies, then unpacks into `dir`. The download sits in `dir` only until unpacked.
 * Without a checksum to verify against (an HTTPS release URL), its sha256 is logged with a warning
 * and returned. A write that fails there is the user error that names `place` (lib/disk.ts).
 */
async function download(job: Job, dir: string, place: WriteTarget, known?: Checksum[]): Promise<string | undefined> {
  const { spec, mirror, from, o } = job;
  const expected = known ?? (await expectedChecksums(job));
  const tmp = path.join(dir, `.download-${crypto.randomBytes(4).toString('hex')}-${fileNameOf(from)}`);
  const fix = mirror ? `check that the mirror holds ${spec.id}/${spec.version}/${fileNameOf(spec.uri)} (${MIRROR_VARIABLE})` : undefined;
  let got: { digests: Checksum[]; bytes: number } | undefined;
  try {
    const algorithms = expected.length ? expected.map((c) => c.algorithm) : (['sha256'] as const);
    got = await o.log.step(`download ${redact(from)}`, () =>
      downloadFile(from, tmp, { ...o.network, log: o.log, what: `${spec.id} ${spec.version}`, algorithms, ...(fix ? { fix } : {}) }),
    );
    let observed: string | undefined;
    const mismatch = verifyDigests(expected, got.digests);
    if (mismatch) throw checksumMismatch(spec, from, mismatch.expected, mismatch.actual);
    if (expected.length) o.log.detail(`verified ${expected.map((c) => `${c.algorithm} (${c.source ?? 'pinned'})`).join(', ')}, ${got.bytes} bytes`);
    else {
      observed = got.digests.find((d) => d.algorithm === 'sha256')!.hex;
      o.log.warn(
        `${spec.id} ${spec.version}: no checksum is published or pinned, so the download was not verified; ` +
          `it came over HTTPS from ${redact(from)}, sha256:${observed} (${got.bytes} bytes, recorded in the SBOM). ` +
          `Set ${REQUIRE_CHECKSUMS_VARIABLE}=1 to refuse such downloads.`,
      );
    }
    await o.log.step(`unpack ${spec.archive === 'none' ? 'binary' : spec.archive}`, () => unpack(tmp, dir, spec));
    return observed;
  } catch (e) {
    const needed = roomFor(spec, got?.bytes ?? (e as { total?: number }).total);
    throw writeFailure(e, { ...place, ...(needed ? { needed } : {}) }) ?? e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** What a download of each kind takes unpacked, about (Node.js's .tgz: 3.6 times its size). */
const UNPACKED_RATIO = { 'tar.gz': 3.5, 'tar.xz': 5, zip: 3, none: 1 } as const;

/** The room a download of `bytes` needs where it is unpacked: the archive and its files side by side. */
function roomFor(spec: DependencySpec, bytes: number | undefined): WriteTarget['needed'] {
  if (!bytes) return undefined;
  const unpacked = Math.round(bytes * UNPACKED_RATIO[spec.archive]);
  return { bytes: bytes + unpacked, how: `a ${formatBytes(bytes)} download and about ${formatBytes(unpacked)} unpacked` };
}

/**
 * Every checksum the download must match: the pinned one, the mirror's (which must agree with a
 * pinned one of the same algorithm), else the upstream checksum file. None at all is refused.
 */
async function expectedChecksums({ spec, mirror, from, o }: Job): Promise<Checksum[]> {
  const net = { ...o.network, log: o.log };
  const out: Checksum[] = spec.checksum ? [spec.checksum] : [];
  if (mirror) {
    const m = await mirrorChecksum(from, net);
    const pinned = m && out.find((c) => c.algorithm === m.algorithm);
    if (m && pinned && !sameChecksum(pinned, m)) {
      throw new UserError({
        id: 'deps/mirror-checksum-conflict',
        title: `The mirror's checksum for ${spec.id} ${spec.version} differs from the one the buildpack pins`,
        seen: { what: 'checksum file', value: redact(withSuffix(from, '.sha256')), where: MIRROR_VARIABLE },
        rule: 'when the buildpack and the mirror both give a checksum, they must agree',
        fix: `put the release the buildpack pins in the mirror, with its checksum`,
        details: [`pinned (${pinned.source ?? 'buildpack'}): ${formatChecksum(pinned)}`, `mirror: ${formatChecksum(m)}`],
      });
    }
    if (m && !pinned) out.push(m);
  }
  if (out.length === 0 && spec.checksumUri) {
    const sumUri = spec.checksumUri;
    const text = await o.log.step(`checksum from ${redact(sumUri)}`, () =>
      fetchText(sumUri, { ...net, what: `the checksum file of ${spec.id} ${spec.version}` }),
    );
    const c = parseChecksumFile(text ?? '', fileNameOf(spec.uri), redact(sumUri));
    if (!c) {
      throw new UserError({
        id: 'deps/checksum-not-listed',
        title: `The checksum file of ${spec.id} ${spec.version} does not list ${fileNameOf(spec.uri)}`,
        seen: { what: 'checksum file', value: redact(sumUri) },
        rule: 'a checksum file lists `<sha256 or sha512 hex>  <file name>` for the downloaded file',
        fix: `pin a sha256 for ${spec.id} ${spec.version} in buildpack.toml`,
      });
    }
    out.push(c);
  }
  if (out.length === 0) {
    const required = read<boolean>(o.env ?? process.env, REQUIRE_CHECKSUMS_VARIABLE)?.value ?? false;
    // Without a checksum only the upstream release URL over HTTPS is trusted, and only when the
    // operator did not ask for checksums: a mirror can always keep a `.sha256` beside its files.
    if (!required && !mirror && /^https:\/\//i.test(from)) return [];
    throw new UserError({
      id: 'deps/no-checksum',
      title: `${spec.id} ${spec.version} has no checksum to verify its download`,
      seen: { what: 'URL', value: redact(from) },
      rule: required
        ? `${REQUIRE_CHECKSUMS_VARIABLE}=1: every download is verified against a checksum pinned in buildpack.toml, published upstream, or kept by the mirror; none is ever invented`
        : 'no checksum is ever invented: a download is verified against a checksum pinned in buildpack.toml, published upstream, or kept by the mirror; only a release URL over HTTPS may be used without one',
      fix: `pin a sha256 for ${spec.id} ${spec.version} in buildpack.toml, put ${fileNameOf(from)}.sha256 beside the file in the mirror (${MIRROR_VARIABLE}), or provide the tool with ${operatorVariable(spec.id)}=<path>${required ? `; or unset ${REQUIRE_CHECKSUMS_VARIABLE} to accept a release URL over HTTPS without one` : ''}`,
    });
  }
  return out;
}

function checksumMismatch(spec: DependencySpec, from: string, expected: Checksum, actual: Checksum): UserError {
  return new UserError({
    id: 'deps/checksum-mismatch',
    title: `The download of ${spec.id} ${spec.version} does not match its checksum`,
    seen: { what: 'URL', value: redact(from) },
    rule: 'a downloaded tool is used only when it matches its checksum; the file was deleted',
    fix: 'retry the build; if it fails again the file at that URL has changed: check the mirror, or report it to the buildpack maintainers',
    details: [`expected ${formatChecksum(expected)} (${expected.source ?? 'pinned'})`, `actual   ${formatChecksum(actual)}`],
  });
}

/**
 * Makes `<layer>/bin/<command>` the executable, so the lifecycle's PATH (which holds each layer's
 * bin/) finds it whatever the archive's layout; a relative symlink survives the layer being moved.
 */
function linkExecutable(layerPath: string, bin: string, command: string): void {
  const target = path.join(layerPath, bin);
  if (!fs.statSync(target, { throwIfNoEntry: false })?.isFile()) {
    const top = fs.readdirSync(layerPath).filter((n) => !n.startsWith('.download-'));
    throw new Error(`the unpacked archive has no file "${bin}" (bin in buildpack.toml); it holds: ${top.join(', ') || 'nothing'}`);
  }
  // npm tarballs do not always keep the executable bit.
  fs.chmodSync(target, fs.statSync(target).mode | 0o111);
  const link = path.join(layerPath, 'bin', command);
  if (path.resolve(link) === path.resolve(target)) return;
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.rmSync(link, { force: true });
  fs.symlinkSync(path.relative(path.dirname(link), target), link);
}
