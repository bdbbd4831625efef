/**
 * `rbp build APP --out OUT --image DIR`: the built app as an OCI image layout, shaped as the
 * reference lifecycle's exporter shapes an app image, so podman can run it or skopeo push it:
 *   - the run image's layers, as they are;
 *   - one layer per launch layer, at /layers/<escaped buildpack id>/<layer>/ (its .toml is not in
 *     the image: the lifecycle keeps layer metadata in the io.buildpacks.lifecycle.metadata label);
 *   - the launch SBOMs at /layers/sbom/launch/ (the label's `sbom`, which `pack sbom download` reads);
 *   - the app at /workspace;
 *   - the launcher (the reference lifecycle's cmd/launcher) at /cnb/lifecycle/launcher and one
 *     /cnb/process/<type> link per process, the entrypoint being the default process's link;
 *   - /layers/config/metadata.toml;
 *   - Env CNB_LAYERS_DIR=/layers, CNB_APP_DIR=/workspace, CNB_PLATFORM_API, PATH with /cnb/process
 *     first; the lifecycle's labels (io.buildpacks.lifecycle.metadata, io.buildpacks.build.metadata,
 *     io.buildpacks.project.metadata); `created` and the history dated by SOURCE_DATE_EPOCH.
 * rbp builds at OUT's own path. The image holds nothing of that path unless a buildpack wrote it
 * into a launch layer, the app or a process (a third-party buildpack that names its layers by their
 * absolute paths): only then does it get links OUT/layers → /layers and OUT/workspace → /workspace,
 * which keep those paths true, with a warning, rather than rewriting files it does not own.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { escapeId } from '../cnb/descriptor.ts';
import { value } from '../config/read.ts';
import { UserError } from '../errors.ts';
import { readJsonIfAny } from '../fsx.ts';
import { formatDuration, type Logger } from '../log.ts';
import { launchLayers } from '../cnb/layers.ts';
import { readLaunchMetadata, type LaunchMetadata } from '../cnb/metadata.ts';
import { blobPath, historyFor, imageEnv, imageTime, OciLayoutWriter, readLayout, REPRODUCIBLE_DATE, type Layer, type ReadImage } from './oci-layout.ts';
import { CNB_USER } from './stack-user.ts';

export const LAYERS_DIR = '/layers';
export const APP_DIR = '/workspace';
export const PLATFORM_API = '0.13';

const toolCache = () => value(process.env, 'RBP_TOOLS_CACHE')!;

/** The run image: --run-image, else RBP_RUN_IMAGE, else the one scripts/tools/run-image.sh made. */
export function runImageLayout(given?: string): string {
  const p = given ?? value(process.env, 'RBP_RUN_IMAGE') ?? path.join(toolCache(), 'run-image', 'bookworm-r2', 'layout');
  // run-image.sh prints the layout's `oci-layout` file, as the other tool scripts print an executable.
  return path.basename(p) === 'oci-layout' ? path.dirname(p) : p;
}

/** The reference launcher: beside RBP_TOOL_LIFECYCLE, else the one scripts/tools/lifecycle.sh made. */
export function referenceLauncher(): string {
  const lc = value(process.env, 'RBP_TOOL_LIFECYCLE');
  return lc ? path.join(path.dirname(lc), 'launcher') : path.join(toolCache(), 'lifecycle', '0.20.8', 'launcher');
}

export interface AppImageOptions {
  /** OUT: the path the app's own files name (the image links it to /layers and /workspace). */
  out: string;
  image: string;
  /** An OCI layout folder. */
  runImage: string;
  launcher: string;
  /** Ref names in the layout (`--tag`); default `latest`. */
  tags?: string[];
  log: Logger;
}

function imageError(what: string, value: string, rule: string, fix: string): UserError {
  return new UserError({ id: 'platform/image/input', title: 'Cannot write the app image', seen: { what, value }, rule, fix });
}

/** A disk that filled up while the image was written: one clear error, nothing half-written left. */
function diskFull(image: string, e: NodeJS.ErrnoException): UserError {
  return new UserError({
    id: 'platform/image/disk-full',
    title: 'No space left to write the app image',
    seen: { what: '--image', value: image },
    rule: `The image is written beside its folder and then moved into place; the disk filled up (${e.code}: ${e.message}). The previous image and OUT are as they were.`,
    fix: 'Free some space on that disk (or give --image a folder on another one), then build again.',
  });
}

/**
 * What an earlier export wrote, kept in the image folder: for each layer, a fingerprint of the files
 * it was made from (paths, sizes, modes, mtimes, inodes) and the blob it gave. A layer whose files
 * have the same fingerprint is taken as it is: a warm build rewrites only what changed.
 */
const EXPORT_RECORD = 'rbp-export.json';
interface ExportRecord {
  version: 1;
  layers: Record<string, { fingerprint: string; layer: Layer }>;
}

function readRecord(image: string): ExportRecord['layers'] {
  const r = readJsonIfAny<Omit<ExportRecord, 'version'> & { version: unknown }>(path.join(image, EXPORT_RECORD));
  return r?.version === 1 ? r.layers : {};
}

/** Up to this many bytes, a layer is fingerprinted by its content: reading it costs less than writing it. */
const CONTENT_FINGERPRINT_MAX = 16 * 2 ** 20;

/**
 * A fingerprint of a file tree and of `extra` (what else decides the layer): names, modes, link
 * targets, and the files' bytes when the tree is small (up to 16 MiB), else each file's size, mtime
 * and inode as stat sees them. Folders count by what they hold only: rbp makes a reused layer's
 * folders anew around the same files (hard links keep their inodes). The inode matters: npm dates
 * every file it unpacks 1985-10-26, so two versions of a package can have the same sizes and mtimes,
 * but never the same inodes. A tree that is copied at every build (the app: OUT/workspace) gets new
 * inodes every time: `content` fingerprints it by its bytes whatever its size.
 */
export function treeFingerprint(roots: string[], extra = '', opts: { content?: boolean } = {}): string {
  const files: { p: string; rel: string; st: fs.BigIntStats }[] = [];
  const visit = (p: string, rel: string) => {
    const st = fs.lstatSync(p, { bigint: true });
    files.push({ p, rel, st });
    if (st.isDirectory()) for (const n of fs.readdirSync(p).sort()) visit(path.join(p, n), `${rel}/${n}`);
  };
  for (const r of roots) visit(r, path.basename(r));
  const bytes = files.reduce((n, f) => (f.st.isFile() ? n + Number(f.st.size) : n), 0);
  const content = opts.content || bytes <= CONTENT_FINGERPRINT_MAX;
  const h = crypto.createHash('sha256').update(`${extra}\0${content ? 'content' : 'stat'}\0`);
  for (const { p, rel, st } of files) {
    h.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) h.update(fs.readlinkSync(p));
    else if (st.isFile()) h.update(content ? fs.readFileSync(p) : `${st.size}\0${st.mtimeNs}\0${st.ino}\0`);
  }
  return h.digest('hex');
}

/** The CNB user owns what the buildpacks and the app wrote, as in an image the lifecycle exports. */
const cnbOwned = () => ({ uid: CNB_USER.uid, gid: CNB_USER.gid });

export interface PreparedImage {
  layers: number;
  digest: string;
  /** Where the layout was written, until commit() moves it into place (the previous one goes); abort() removes it. */
  staged: string;
  commit(): void;
  abort(): void;
}

/** What an app image is made of, each checked: the build's metadata, the run image, the launcher. */
function readInputs(o: AppImageOptions): { src: string; md: LaunchMetadata; runLayout: string; run: ReadImage } {
  const src = path.resolve(o.out);
  const md = readLaunchMetadata(src);
  if (!md) throw imageError('OUT', o.out, 'An app image is made from a finished build (OUT/layers/config/metadata.toml).', 'Run rbp build first.');
  const runLayout = runImageLayout(o.runImage);
  let run: ReadImage;
  try {
    run = readLayout(runLayout);
  } catch (e) {
    throw imageError(
      '--run-image',
      o.runImage,
      `The run image is an OCI image layout folder (${(e as Error).message}).`,
      'Make one with scripts/tools/run-image.sh, or give another with --run-image DIR.',
    );
  }
  if (!fs.existsSync(o.launcher))
    throw imageError(
      'launcher',
      o.launcher,
      "The app image runs the reference lifecycle's launcher.",
      'Build it with scripts/tools/lifecycle.sh and set RBP_TOOL_LIFECYCLE to the lifecycle binary it prints.',
    );
  return { src, md, runLayout, run };
}

/** The date of the image and of its history: SOURCE_DATE_EPOCH (seconds), as the lifecycle's exporter reads it, else 1980-01-01T00:00:01Z. */
export function imageDate(env: NodeJS.ProcessEnv, log: Logger): Date {
  const epoch = env.SOURCE_DATE_EPOCH;
  if (!epoch) return REPRODUCIBLE_DATE;
  const date = /^[+-]?\d{1,15}$/.test(epoch) ? new Date(Number(epoch) * 1000) : undefined;
  if (date && !Number.isNaN(date.getTime())) return date;
  log.warn(`SOURCE_DATE_EPOCH=${epoch} is not a number of seconds: ignored (the image is dated ${imageTime(REPRODUCIBLE_DATE)}, as the lifecycle does)`);
  return REPRODUCIBLE_DATE;
}

/**
 * The layers an app image adds to its run image, each the previous export's when its files'
 * fingerprint is the same, else written now; and which of them name the build folder: a layer whose
 * bytes hold OUT's path (a buildpack that wrote its layers' absolute paths at build) needs links from
 * OUT to /layers and /workspace in the image.
 */
class ImageLayers {
  readonly layers: Layer[] = [];
  readonly createdBy: string[] = [];
  readonly record: ExportRecord = { version: 1, layers: {} };
  /** What made each layer whose bytes name the build folder. */
  readonly namingOut: string[] = [];
  reused = 0;

  constructor(
    readonly w: OciLayoutWriter,
    private readonly image: string,
    private readonly previous: ExportRecord['layers'],
    /** OUT's path and a slash: what a layer naming the build folder holds. */
    readonly outPrefix: string,
  ) {}

  async add(key: string, createdBy: string, fingerprint: string, write: () => Promise<Layer>): Promise<Layer> {
    const before = this.previous[key];
    let l: Layer;
    if (before?.fingerprint === fingerprint && fs.existsSync(blobPath(this.image, before.layer.digest))) {
      this.w.adoptBlob(this.image, (l = before.layer));
      this.reused++;
    } else l = await write();
    this.record.layers[key] = { fingerprint, layer: l };
    if (l.found) this.namingOut.push(createdBy);
    this.layers.push(l);
    this.createdBy.push(createdBy);
    return l;
  }

  /** Entries of a folder as a layer owned by the CNB user, under `prefix`, looked through for the build folder. */
  addTree(key: string, createdBy: string, root: string, entries: string[], prefix = '', content = false): Promise<Layer> {
    const files = entries.map((e) => path.join(root, e));
    const fingerprint = treeFingerprint(files, `${prefix}\0${this.outPrefix}`, { content });
    return this.add(key, createdBy, fingerprint, () => this.w.addLayer(root, prefix || undefined, { entries, owner: cnbOwned, find: this.outPrefix }));
  }
}

/**
 * Writes the app image of the build in OUT beside `image` (`<image>.partial-<pid>`); commit() moves
 * it into place. Layers whose files are unchanged since the image's previous export are reused. The
 * layers come in the order of the lifecycle's exporter: the buildpacks' layers, the SBOM, the app,
 * the launcher, the config.
 */
export async function prepareAppImage(o: AppImageOptions): Promise<PreparedImage> {
  const started = performance.now();
  const { src, md, runLayout, run } = readInputs(o);
  const created = imageDate(process.env, o.log);
  const out = path.resolve(o.out);
  const layoutDir = `${o.image}.partial-${process.pid}`;
  fs.rmSync(layoutDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(layoutDir), { recursive: true });
  const tmp = fs.mkdtempSync(`${o.image}.staging-`);
  try {
    const w = new OciLayoutWriter(layoutDir);
    for (const l of run.manifest.layers) w.adoptBlob(runLayout, l);
    const x = new ImageLayers(w, o.image, readRecord(o.image), `${out}/`);
    const sha = await addLayers(x, src, md, o.launcher, tmp);
    const cfg = configFolder(src, md, out, path.join(tmp, 'config'), namingOut(x, md, o.log));
    // Staged anew at every build: fingerprinted by content.
    sha.config = (await x.add('config', 'Buildpacks Launcher Config', treeFingerprint([cfg], '', { content: true }), () => w.addLayer(cfg))).diffID;

    const dflt = md['buildpack-default-process-type'];
    const { path: runPath, rest: runEnv } = imageEnv(run.config);
    const { manifest } = w.finish(
      {
        architecture: run.config.architecture,
        os: run.config.os,
        created: imageTime(created),
        config: {
          Env: [...runEnv, `CNB_LAYERS_DIR=${LAYERS_DIR}`, `CNB_APP_DIR=${APP_DIR}`, `CNB_PLATFORM_API=${PLATFORM_API}`, `PATH=/cnb/process:${runPath}`],
          Entrypoint: [dflt ? `/cnb/process/${dflt}` : '/cnb/lifecycle/launcher'],
          WorkingDir: APP_DIR,
          Labels: imageLabels(md, run, sha),
          ...({ ExposedPorts: { '8080/tcp': {} } } as object),
        },
        rootfs: { type: 'layers', diff_ids: [...run.config.rootfs.diff_ids, ...x.layers.map((l) => l.diffID)] },
        history: historyFor(run.config, run.manifest.layers.length, x.createdBy, created),
      },
      [...run.manifest.layers, ...x.layers],
      o.tags?.length ? o.tags : undefined,
    );
    fs.writeFileSync(path.join(layoutDir, EXPORT_RECORD), JSON.stringify(x.record));
    const layers = run.manifest.layers.length + x.layers.length;
    o.log.info(
      `app image: ${o.image}${o.tags?.length ? ` tagged ${o.tags.join(', ')}` : ''} (OCI layout, ${layers} layers, ${manifest.digest.slice(0, 19)}…, entrypoint ${dflt ? `/cnb/process/${dflt}` : 'the launcher'}; ${x.layers.length - x.reused} written, ${x.reused} unchanged, ${formatDuration(performance.now() - started)})`,
    );
    return {
      layers,
      digest: manifest.digest,
      staged: layoutDir,
      commit: () => {
        // The previous image goes aside first, so that a failed move leaves one of the two in place.
        const aside = `${o.image}.previous-${process.pid}`;
        if (fs.existsSync(o.image)) fs.renameSync(o.image, aside);
        fs.renameSync(layoutDir, o.image);
        fs.rmSync(aside, { recursive: true, force: true });
      },
      abort: () => fs.rmSync(layoutDir, { recursive: true, force: true }),
    };
  } catch (e) {
    fs.rmSync(layoutDir, { recursive: true, force: true });
    if ((e as NodeJS.ErrnoException).code === 'ENOSPC' || (e as NodeJS.ErrnoException).code === 'EDQUOT') throw diskFull(o.image, e as NodeJS.ErrnoException);
    throw e;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The diffID of each layer the labels name. */
interface LayerShas {
  app: string;
  config: string;
  launcher: string;
  sbom?: string;
  buildpacks: Record<string, Record<string, { sha: string; launch: true }>>;
}

/** The layers before the config: each buildpack's launch layers, the launch SBOMs, the app, the launcher. */
async function addLayers(x: ImageLayers, src: string, md: LaunchMetadata, launcher: string, tmp: string): Promise<LayerShas> {
  // The layer's folder only: its .toml lives in the image label.
  const buildpacks: LayerShas['buildpacks'] = {};
  for (const bp of md.buildpacks) {
    const bpDir = path.join(src, 'layers', escapeId(bp.id));
    for (const dir of launchLayers(bpDir)) {
      const name = path.basename(dir);
      const createdBy = `Layer: '${name}', Created by buildpack: ${bp.id}@${bp.version}`;
      const l = await x.addTree(`layer:${bp.id}:${name}`, createdBy, bpDir, [name], `${LAYERS_DIR.slice(1)}/${escapeId(bp.id)}`);
      (buildpacks[bp.id] ??= {})[name] = { sha: l.diffID, launch: true };
    }
  }
  // Where `pack sbom download` finds them: /layers/sbom/launch/<bp>[/<layer>]/sbom.<ext>.
  const sbomRoot = path.join(src, 'layers', 'sbom');
  const sbom = fs.existsSync(path.join(sbomRoot, 'launch'))
    ? (await x.addTree('sbom', 'Software Bill-of-Materials', sbomRoot, ['launch'], `${LAYERS_DIR.slice(1)}/sbom`)).diffID
    : undefined;
  // Copied at every build: fingerprinted by content.
  const app = await x.addTree('app', 'Application Layer', src, ['workspace'], '', true);
  const types = md.processes.map((p) => p.type).sort();
  const l = await x.add('launcher', 'Buildpacks Application Launcher', treeFingerprint([launcher], types.join(',')), async () => {
    const cnb = path.join(tmp, 'launcher');
    fs.mkdirSync(path.join(cnb, 'cnb', 'lifecycle'), { recursive: true });
    fs.copyFileSync(launcher, path.join(cnb, 'cnb', 'lifecycle', 'launcher'));
    fs.chmodSync(path.join(cnb, 'cnb', 'lifecycle', 'launcher'), 0o755);
    fs.mkdirSync(path.join(cnb, 'cnb', 'process'));
    for (const t of types) fs.symlinkSync('../lifecycle/launcher', path.join(cnb, 'cnb', 'process', t));
    return x.w.addLayer(cnb);
  });
  return { buildpacks, ...(sbom ? { sbom } : {}), app: app.diffID, launcher: l.diffID, config: '' };
}

/**
 * Whether the image needs links from OUT's path: a layer, or a process of metadata.toml, names the
 * build folder. Each is one warning: such an image depends on the folder it was built in.
 */
function namingOut(x: ImageLayers, md: LaunchMetadata, log: Logger): boolean {
  const processes = md.processes.filter((p) => [...p.command, ...(p.args ?? []), p['working-dir'] ?? ''].some((a) => a.includes(x.outPrefix)));
  const named = [...x.namingOut, ...processes.map((p) => `the process ${p.type} of ${p['buildpack-id']}`)];
  const out = x.outPrefix.slice(0, -1);
  for (const what of named)
    log.warn(
      `${what} names the build folder ${out}: the image links ${out}/layers to /layers and ${out}/workspace to /workspace so that it holds there, and the image depends on the folder it was built in (a buildpack should name its layers by CNB_LAYERS_DIR or by relative paths)`,
    );
  return named.length > 0;
}

/** /layers/config/metadata.toml, the buildpacks' folders and, when the build named OUT's path, the links that keep it true, in `cfg`. */
function configFolder(src: string, md: LaunchMetadata, out: string, cfg: string, linkOut: boolean): string {
  fs.mkdirSync(path.join(cfg, 'layers', 'config'), { recursive: true });
  fs.copyFileSync(path.join(src, 'layers', 'config', 'metadata.toml'), path.join(cfg, 'layers', 'config', 'metadata.toml'));
  for (const bp of md.buildpacks) {
    const d = path.join(cfg, 'layers', escapeId(bp.id));
    fs.mkdirSync(d, { recursive: true });
    const store = path.join(src, 'layers', escapeId(bp.id), 'store.toml');
    if (fs.existsSync(store)) fs.copyFileSync(store, path.join(d, 'store.toml'));
  }
  if (linkOut && out !== LAYERS_DIR.slice(0, -'/layers'.length)) {
    fs.mkdirSync(path.join(cfg, out.slice(1)), { recursive: true });
    fs.symlinkSync(LAYERS_DIR, path.join(cfg, out.slice(1), 'layers'));
    fs.symlinkSync(APP_DIR, path.join(cfg, out.slice(1), 'workspace'));
  }
  return cfg;
}

/** The image's labels, as the lifecycle's exporter writes them: the run image's, then ours, then the buildpacks'. */
function imageLabels(md: LaunchMetadata, run: ReadImage, sha: LayerShas): Record<string, string> {
  const labels: Record<string, string> = {
    ...(run.config.config?.Labels ?? {}),
    'io.buildpacks.lifecycle.metadata': JSON.stringify({
      app: [{ sha: sha.app }],
      ...(sha.sbom ? { sbom: { sha: sha.sbom } } : {}),
      config: { sha: sha.config },
      launcher: { sha: sha.launcher },
      buildpacks: md.buildpacks.map((b) => ({ key: b.id, version: b.version, layers: sha.buildpacks[b.id] ?? {} })),
      runImage: { topLayer: run.config.rootfs.diff_ids.at(-1), reference: run.manifest.config.digest },
    }),
    'io.buildpacks.build.metadata': JSON.stringify({
      processes: md.processes.map((p) => ({ type: p.type, command: p.command, args: p.args, direct: p.direct, buildpackID: p['buildpack-id'] })),
      buildpacks: md.buildpacks.map((b) => ({ id: b.id, version: b.version })),
      launcher: { version: '', source: { git: { repository: 'github.com/buildpacks/lifecycle' } } },
    }),
    'io.buildpacks.project.metadata': '{}',
  };
  for (const l of md.labels ?? []) labels[l.key] = l.value;
  return labels;
}

/** Writes the app image of the build in OUT to `image` (an OCI layout folder). */
export async function writeAppImage(o: AppImageOptions): Promise<{ layers: number; digest: string }> {
  const p = await prepareAppImage(o);
  p.commit();
  return { layers: p.layers, digest: p.digest };
}
