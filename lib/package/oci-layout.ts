/**
 * OCI image layouts (https://github.com/opencontainers/image-spec/blob/main/image-layout.md): write
 * one image (layers from folders, a config with labels, a manifest, index.json) into a folder, pack
 * that folder into an uncompressed tar archive (the `.cnb` form of a buildpackage), and read one
 * back. Layers are reproducible: entries sorted, mtimes fixed, owners 0 — the same input gives the
 * same digests, so a platform that already has a layer does not fetch it again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import * as tar from 'tar';
import type { WriteEntry } from 'tar';

/**
 * The media types of one image: its manifest, config and layers are all of one family, OCI or
 * Docker's, for containers/image (podman, CRI-O, skopeo) refuses a Docker v2s2 manifest that names
 * OCI layers ("unsupported docker v2s2 media type"). The same blobs make an image of either family.
 * An OCI layout holds OCI manifests (containers/image reads no other from one); a registry gets
 * the family its push asks for (registry.ts).
 */
export interface MediaFamily {
  manifest: string;
  config: string;
  layerGzip: string;
}
export const OCI: MediaFamily = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
};
/**
 * Docker's v2s2 family: that of the images the reference lifecycle writes from a base of this
 * family. Its exporter appends layers typed as go-containerregistry types a tarball layer (Docker's)
 * under the base's manifest type, and its rebaser (go-containerregistry's mutate.Rebase) starts from
 * an empty Docker v2s2 manifest and keeps each layer's type: only a run image of this family gives
 * app images that stay of one family when exported and rebased (google/go-containerregistry#2101).
 */
export const DOCKER: MediaFamily = {
  manifest: 'application/vnd.docker.distribution.manifest.v2+json',
  config: 'application/vnd.docker.container.image.v1+json',
  layerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
};

/** The manifest of the same image in `family`: its gzip layers retyped, any other layer as it is. */
export function retype(m: Manifest, family: MediaFamily): Manifest {
  const layer = (t: string) => (t === OCI.layerGzip || t === DOCKER.layerGzip ? family.layerGzip : t);
  return {
    schemaVersion: 2,
    mediaType: family.manifest,
    config: { ...m.config, mediaType: family.config },
    layers: m.layers.map((l) => ({ ...l, mediaType: layer(l.mediaType) })),
  };
}

/** The date every layer entry and the image carry, as pack does for reproducible buildpackages. */
export const REPRODUCIBLE_DATE = new Date('1980-01-01T00:00:01Z');

/** A date as go-containerregistry writes an image's (RFC 3339, no fraction of a second when there is none). */
export const imageTime = (d: Date) => d.toISOString().replace('.000Z', 'Z');

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { os: string; architecture: string };
}

export interface Layer extends Descriptor {
  /** sha256 of the uncompressed tar, the config's rootfs.diff_ids entry. */
  diffID: string;
  /** Whether the layer's bytes (its files and link targets) hold LayerOptions.find. */
  found?: boolean;
}

export interface ImageConfig {
  architecture: string;
  os: string;
  created?: string;
  /** Optional in the OCI image spec: an image read from a layout may have none. */
  config?: { Labels?: Record<string, string>; Env?: string[]; Entrypoint?: string[]; Cmd?: string[]; WorkingDir?: string; User?: string };
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: History[];
}

export interface Manifest {
  schemaVersion: 2;
  /** Optional in the OCI image spec (a SHOULD): a manifest read from a layout may have none. */
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
}

export interface LayerOptions {
  /** The owner of an entry (its path relative to the layer root, without prefix); default root (0:0). */
  owner?: (rel: string) => { uid: number; gid: number } | undefined;
  /**
   * As pack writes buildpacks and builders: folders 0755, files 0755 when anyone may execute them,
   * else 0644, whatever the modes on disk (a folder made by mkdtemp is 0700).
   */
  normalizeModes?: boolean;
  /** Only these names of `root` (each with what it holds), rather than all it holds. */
  entries?: string[];
  /** Text to look for in the layer's bytes as they are written (Layer.found). */
  find?: string;
}

/** A link cache that never finds a link: every file is written whole. */
const NO_HARD_LINKS = {
  get: () => undefined,
  set() {
    return this;
  },
  has: () => false,
} as unknown as Map<`${number}:${number}`, string>;

/** node-tar's options for a reproducible archive of `cwd`: sorted paths given, no hard links, no pax headers. */
const tarOptions = (cwd: string, opts: LayerOptions) => ({
  cwd,
  portable: false,
  mtime: REPRODUCIBLE_DATE,
  noDirRecurse: true,
  noPax: true,
  linkCache: NO_HARD_LINKS,
  onWriteEntry: (entry: WriteEntry) => normalizeEntry(entry, opts),
});

/** A stream stage that hands each chunk to `see` and passes it on. */
const tap = (see: (c: Buffer) => unknown) =>
  new Transform({
    transform: (c: Buffer, _e, cb) => {
      see(c);
      cb(null, c);
    },
  });

function normalizeEntry(entry: WriteEntry, opts: LayerOptions): void {
  const st = entry.stat;
  if (!st) return;
  const owner = opts.owner?.(entry.path.replace(/\/$/, '')) ?? { uid: 0, gid: 0 };
  st.uid = owner.uid;
  st.gid = owner.gid;
  // node-tar writes atime and ctime in the header when it keeps owners: fixed, like mtime.
  st.atime = st.ctime = st.mtime = REPRODUCIBLE_DATE;
  // No user name from this machine's environment in the header: the same input, the same bytes.
  (entry as unknown as { myuid: number }).myuid = -1;
  if (opts.normalizeModes && !st.isSymbolicLink()) st.mode = (st.mode & ~0o7777) | (st.isDirectory() || st.mode & 0o111 ? 0o755 : 0o644);
}

export interface History {
  created?: string;
  created_by?: string;
  comment?: string;
  empty_layer?: boolean;
}

/**
 * The history of an image built on `base`: one entry per layer, as image builders write it (podman
 * and buildah refuse `FROM` an image whose history does not match its layers). The base's own history
 * is kept when it matches its layers; `added` says what made each new layer. Every entry is dated
 * `created`, as the lifecycle's exporter dates them all with the image.
 */
export function historyFor(base: ImageConfig | undefined, baseLayers: number, added: string[], created = REPRODUCIBLE_DATE): History[] {
  const at = imageTime(created);
  const own = base?.history ?? [];
  const kept =
    own.filter((h) => !h.empty_layer).length === baseLayers
      ? own.map((h) => ({ ...h, created: at }))
      : Array.from({ length: baseLayers }, (_, i) => ({ created: at, created_by: `base layer ${i + 1}` }));
  return [...kept, ...added.map((what) => ({ created: at, created_by: what }))];
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** An image's PATH (its config Env), and the rest of its Env: images built on it extend both. */
export function imageEnv(config: ImageConfig): { path: string; rest: string[] } {
  const env = config.config?.Env ?? [];
  return { path: env.find((e) => e.startsWith('PATH='))?.slice('PATH='.length) ?? DEFAULT_PATH, rest: env.filter((e) => !e.startsWith('PATH=')) };
}

/** Looks for `needle` in a stream's chunks, across their boundaries; called without a chunk, says whether it was seen. */
function finder(needle: Buffer): (chunk?: Buffer) => boolean {
  let seen = false;
  let tail: Buffer = Buffer.alloc(0);
  return (chunk) => {
    if (!chunk || seen) return seen;
    seen = Buffer.concat([tail, chunk.subarray(0, needle.length - 1)]).includes(needle) || chunk.includes(needle);
    tail = chunk.subarray(Math.max(0, chunk.length - needle.length + 1));
    return seen;
  };
}

export const blobPath = (layoutDir: string, digest: string) => path.join(layoutDir, 'blobs', ...digest.split(':'));

const sha256 = (data: Buffer | string) => `sha256:${crypto.createHash('sha256').update(data).digest('hex')}`;

/** Every path under `dir` (relative, folders before their contents), sorted bytewise. */
function walkSorted(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    out.push(p);
    const st = fs.lstatSync(path.join(dir, p));
    if (st.isDirectory()) out.push(...walkSorted(dir, p));
  }
  return out;
}

export class OciLayoutWriter {
  readonly blobs: string;

  constructor(readonly dir: string) {
    this.blobs = path.join(dir, 'blobs', 'sha256');
    fs.mkdirSync(this.blobs, { recursive: true });
    fs.writeFileSync(path.join(dir, 'oci-layout'), `${JSON.stringify({ imageLayoutVersion: '1.0.0' })}\n`);
  }

  writeBlob(data: Buffer | string, mediaType: string): Descriptor {
    const digest = sha256(data);
    fs.writeFileSync(path.join(this.blobs, digest.slice('sha256:'.length)), data);
    return { mediaType, digest, size: Buffer.byteLength(data) };
  }

  /**
   * A gzip layer holding everything under `root` (paths in the layer are relative to `root`, so
   * `root/cnb/...` becomes `/cnb/...` in the image), under `prefix` when given (`layers/rbp_node`).
   * Every entry is owned by root (or `opts.owner`'s choice), dated REPRODUCIBLE_DATE, written without
   * hard-link entries (which depend on how the files happen to be linked on disk), so the same files
   * give the same digests whatever build wrote them.
   */
  async addLayer(root: string, prefix?: string, opts: LayerOptions = {}): Promise<Layer> {
    const tmp = fs.mkdtempSync(path.join(this.dir, '.rbp-layer-'));
    try {
      const gz = path.join(tmp, 'layer.tar.gz');
      const raw = crypto.createHash('sha256');
      const packed = crypto.createHash('sha256');
      const stream = tar.c(
        { ...tarOptions(root, opts), ...(prefix ? { prefix } : {}) },
        opts.entries
          ? [...opts.entries].sort().flatMap((e) => [e, ...(fs.lstatSync(path.join(root, e)).isDirectory() ? walkSorted(root, e) : [])])
          : walkSorted(root),
      );
      // One pass: the tar's digest (the diffID) and the gzip's (the blob) as the bytes go by. A fixed
      // level (gzip's fastest, as go-containerregistry writes layers) and mtime 0 in the gzip header
      // keep the compressed digest reproducible too.
      const gzip = zlib.createGzip({ level: 1 });
      const seek = opts.find ? finder(Buffer.from(opts.find)) : undefined;
      await Promise.all([
        pipeline(
          stream as unknown as NodeJS.ReadableStream,
          tap((c) => {
            raw.update(c);
            seek?.(c);
          }),
          gzip,
        ),
        pipeline(
          gzip,
          tap((c) => packed.update(c)),
          fs.createWriteStream(gz),
        ),
      ]);
      const digest = `sha256:${packed.digest('hex')}`;
      const size = fs.statSync(gz).size;
      fs.renameSync(gz, path.join(this.blobs, digest.slice('sha256:'.length)));
      return { mediaType: OCI.layerGzip, digest, size, diffID: `sha256:${raw.digest('hex')}`, ...(seek ? { found: seek() } : {}) };
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** Takes a layer blob of another layout as is (a hard link, or a copy across file systems). */
  adoptBlob(fromLayout: string, d: Descriptor): void {
    const src = blobPath(fromLayout, d.digest);
    const dst = blobPath(this.dir, d.digest);
    if (fs.existsSync(dst)) return;
    try {
      fs.linkSync(src, dst);
    } catch {
      fs.copyFileSync(src, dst);
    }
  }

  private readonly images: Descriptor[] = [];

  private addToIndex(m: Descriptor, refName: string, config: ImageConfig): void {
    this.images.push({ ...m, annotations: { 'org.opencontainers.image.ref.name': refName }, platform: { os: config.os, architecture: config.architecture } });
    fs.writeFileSync(
      path.join(this.dir, 'index.json'),
      JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: this.images }),
    );
  }

  /** Writes the config and the manifest (OCI's media types), and lists the image in index.json, once per ref name (`latest` by default). */
  finish(config: ImageConfig, layers: Descriptor[], refName: string | string[] = 'latest'): { manifest: Descriptor; config: Descriptor } {
    const cfg = this.writeBlob(JSON.stringify(config), OCI.config);
    const manifest = retype({ schemaVersion: 2, config: cfg, layers: layers.map(({ mediaType, digest, size }) => ({ mediaType, digest, size })) }, OCI);
    const m = this.writeBlob(JSON.stringify(manifest), OCI.manifest);
    for (const name of typeof refName === 'string' ? [refName] : refName) this.addToIndex(m, name, config);
    return { manifest: m, config: cfg };
  }
}

/** Packs a layout folder into an uncompressed tar archive (`.cnb`), written aside then renamed. */
export async function archiveLayout(layoutDir: string, file: string): Promise<void> {
  const tmp = `${file}.partial-${process.pid}`;
  try {
    await tar.c(
      { ...tarOptions(layoutDir, { normalizeModes: true }), file: tmp },
      walkSorted(layoutDir).filter((p) => !p.startsWith('.rbp-layer-')),
    );
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export interface ReadImage {
  manifestDigest: string;
  manifest: Manifest;
  config: ImageConfig;
  /** Blob path of each layer, in manifest order. */
  layerFiles: string[];
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/**
 * Reads an image of a layout folder: the one tagged `refName`, else the first. Throws a plain
 * Error on a malformed layout.
 */
export function readLayout(layoutDir: string, refName?: string): ReadImage {
  const index = readJson<{ manifests?: Descriptor[] }>(path.join(layoutDir, 'index.json'));
  const first = (refName ? index.manifests?.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === refName) : undefined) ?? index.manifests?.[0];
  if (!first) throw new Error('index.json lists no image');
  let digest = first.digest;
  let manifest = readJson<Manifest & { manifests?: Descriptor[] }>(blobPath(layoutDir, digest));
  // A nested index (one image per platform): take the first image.
  if (manifest.manifests?.[0]) {
    digest = manifest.manifests[0].digest;
    manifest = readJson<Manifest>(blobPath(layoutDir, digest));
  }
  const config = readJson<ImageConfig>(blobPath(layoutDir, manifest.config.digest));
  return { manifestDigest: digest, manifest, config, layerFiles: manifest.layers.map((l) => blobPath(layoutDir, l.digest)) };
}

/** Extracts a layout archive (`.cnb`) into `dir`. */
export async function extractArchive(file: string, dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  await tar.x({ file, cwd: dir, preserveOwner: false });
}
