/**
 * The reference CNB lifecycle (buildpacks/lifecycle, built by scripts/tools/lifecycle.sh) run
 * directly on folders, no container: its phases with the flags and `CNB_*` variables a platform
 * passes, on a platform layout made in a temporary folder:
 *
 *   <root>/buildpacks/<escaped id>/<version>  -> the buildpack directory (a link)
 *   <root>/order.toml  <root>/platform/env/K (the app's variables)  <root>/build-config/env/K (operator)
 *   <root>/layers/{group,plan}.toml  <root>/layers/<escaped id>/...  <root>/layers/config/metadata.toml
 *
 * What the phases need on plain folders (read from lifecycle v0.20.8's cmd/lifecycle):
 * - detector and builder refuse to run as root ("refusing to run as root"). As root, they run in a
 *   user namespace where this uid is 1000 (`unshare --map-user`): files stay root's outside, look like
 *   the process's own inside, so nothing needs chown and root-only tool caches stay readable.
 * - No analyzed.toml or run.toml is needed: without them the detector warns and takes the target from
 *   this machine's /etc/os-release. Platform API 0.13: `-build-config` and the env filtering as a
 *   builder image has them.
 * - analyzer, restorer and exporter write and read an OCI layout (`-layout -layout-dir`, Platform API
 *   >= 0.12, an experimental feature: CNB_EXPERIMENTAL_MODE=warn) and a volume cache (`-cache-dir`,
 *   which must exist). The exporter needs a run image with at least one layer in the layout
 *   (`<layout>/index.docker.io/library/run/latest`, made here with umoci) and the analyzer's
 *   analyzed.toml naming it; `-uid/-gid` are the user namespace's 1000; `-layout-dir` must be
 *   relative. The exported image is unpacked (its layers are gzip tars): its `/layers` holds what a
 *   running container has (launch layers only), so the launcher runs there, not on the build's folder
 *   (which also holds build-only and cache-only layers, whose env the launcher would apply).
 * - The launcher is its own program (cmd/launcher). It starts the default process only when called
 *   through a link named for that type (an image's /cnb/process/<type>): called as `launcher` with no
 *   arguments it fails "when there is no default process a command is required".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { parse } from 'smol-toml';
import * as tar from 'tar';
import { tmpDir } from '../helpers/rbp.ts';

export const PLATFORM_API = '0.13';
const VERSION = '0.20.8';

/** The folder holding `lifecycle`, its phase links and `launcher`: RBP_TOOL_LIFECYCLE's, else the tool cache's. */
export function lifecycleDir(): string | undefined {
  const tool = process.env.RBP_TOOL_LIFECYCLE;
  const dir = tool ? path.dirname(tool) : path.join(process.env.RBP_TOOLS_CACHE ?? path.join(os.homedir(), '.cache', 'rbp-tools'), 'lifecycle', VERSION);
  return fs.existsSync(path.join(dir, 'detector')) && fs.existsSync(path.join(dir, 'launcher')) ? dir : undefined;
}

/**
 * Whether a suite must skip because the lifecycle is missing: in CI a missing lifecycle is an error
 * (the comparison is part of the test run); locally the skip says why and how to get it.
 */
export function skipWithoutLifecycle(suite: string): boolean {
  if (lifecycleDir()) return false;
  const why = `${suite}: the reference lifecycle ${VERSION} is missing: no detector and launcher beside RBP_TOOL_LIFECYCLE (${process.env.RBP_TOOL_LIFECYCLE ?? 'unset'}) or in the tool cache; run scripts/tools/lifecycle.sh`;
  if (process.env.CI) throw new Error(why);
  console.warn(`${why}: skipped`);
  return true;
}

function lc(): string {
  const dir = lifecycleDir();
  if (!dir) throw new Error('the reference lifecycle is missing');
  return dir;
}

export interface Layout {
  root: string;
  /** OCI layout of the run image and the app image; the volume cache. */
  layout: string;
  cache: string;
  app: string;
  layers: string;
  platform: string;
  buildpacks: string;
  buildConfig: string;
  order: string;
  group: string;
  plan: string;
}

export function escapeId(id: string): string {
  return id.replaceAll('/', '_');
}

/** id and version of a buildpack; of a buildpack.toml that does not parse (a test of that), read from its lines. */
function descriptor(dir: string): { id: string; version: string } {
  const text = fs.readFileSync(path.join(dir, 'buildpack.toml'), 'utf8');
  try {
    return (parse(text) as { buildpack: { id: string; version: string } }).buildpack;
  } catch {
    const field = (k: string) => new RegExp(`^\\s*${k}\\s*=\\s*"([^"]*)"`, 'm').exec(text)?.[1] ?? '';
    return { id: field('id'), version: field('version') };
  }
}

function writeEnvDir(dir: string, env: Record<string, string>): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [k, v] of Object.entries(env)) fs.writeFileSync(path.join(dir, k), v);
}

export interface LayoutOptions {
  /** The buildpack directories the platform has (composites' components included). */
  buildpacks: string[];
  /** Groups of buildpack directories (default: one group of all `buildpacks`, in order). */
  order?: { dir: string; optional?: boolean }[][];
  /** The app's variables: `<platform>/env/K`. */
  userEnv?: Record<string, string>;
  /** The operator's: `<build-config>/env/K` (the lifecycle's CNB_BUILD_CONFIG_DIR). */
  operatorEnv?: Record<string, string>;
  /** `<platform>/bindings/<name>/` sources, linked. */
  bindings?: string[];
}

/** A platform layout around `app` (used in place: the builder writes into it). */
export function makeLayout(app: string, opts: LayoutOptions): Layout {
  const root = tmpDir('rbp-reflc-');
  const layers = path.join(root, 'layers');
  const l: Layout = {
    root,
    layout: path.join(root, 'oci'),
    cache: path.join(root, 'cache'),
    app,
    layers,
    platform: path.join(root, 'platform'),
    buildpacks: path.join(root, 'buildpacks'),
    buildConfig: path.join(root, 'build-config'),
    order: path.join(root, 'order.toml'),
    group: path.join(layers, 'group.toml'),
    plan: path.join(layers, 'plan.toml'),
  };
  fs.mkdirSync(l.layers, { recursive: true });
  fs.mkdirSync(l.cache, { recursive: true });
  writeEnvDir(path.join(l.platform, 'env'), opts.userEnv ?? {});
  writeEnvDir(path.join(l.buildConfig, 'env'), opts.operatorEnv ?? {});
  for (const b of opts.bindings ?? []) {
    fs.mkdirSync(path.join(l.platform, 'bindings'), { recursive: true });
    fs.symlinkSync(path.resolve(b), path.join(l.platform, 'bindings', path.basename(b)));
  }
  for (const dir of opts.buildpacks) {
    const d = descriptor(dir);
    const at = path.join(l.buildpacks, escapeId(d.id), d.version);
    if (fs.existsSync(at)) continue;
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(path.resolve(dir), at);
  }
  const groups: { dir: string; optional?: boolean }[][] = opts.order ?? [opts.buildpacks.map((dir) => ({ dir }))];
  const entry = (e: { dir: string; optional?: boolean }) => {
    const d = descriptor(e.dir);
    return ['[[order.group]]', `id = ${JSON.stringify(d.id)}`, `version = ${JSON.stringify(d.version)}`, ...(e.optional ? ['optional = true'] : [])];
  };
  const toml = groups.map((g) => ['[[order]]', ...g.flatMap(entry)].join('\n')).join('\n\n');
  fs.writeFileSync(l.order, `${toml}\n`);
  return l;
}

/**
 * The same layout made ready for the next build of fresh `source`, as a platform does: an empty
 * layers folder and the new source at the same paths (the cache's layer archives and the image hold
 * absolute paths: /layers and /workspace in a container), the OCI layout (previous image) and the
 * cache kept.
 */
export function nextBuild(l: Layout, source: string): Layout {
  fs.rmSync(l.layers, { recursive: true, force: true });
  fs.mkdirSync(l.layers);
  fs.rmSync(l.app, { recursive: true, force: true });
  fs.cpSync(source, l.app, { recursive: true });
  return l;
}

export interface PhaseResult {
  code: number;
  output: string;
}

/** The environment a platform gives the phases: PATH, HOME, the Platform API, no colour. */
function phaseEnv(l: Layout, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    CNB_PLATFORM_API: PLATFORM_API,
    CNB_BUILD_CONFIG_DIR: l.buildConfig,
    CNB_NO_COLOR: 'true',
    CNB_EXPERIMENTAL_MODE: 'warn',
    ...extra,
  };
}

/** argv for a phase that must not run as root: through a user namespace when we are root. */
function unprivileged(argv: string[]): string[] {
  return process.getuid?.() === 0 ? ['unshare', '--user', '--map-user=1000', '--map-group=1000', ...argv] : argv;
}

async function phase(name: string, l: Layout, flags: string[], extraEnv: Record<string, string> = {}): Promise<PhaseResult> {
  const [cmd, ...args] = unprivileged([path.join(lc(), name), ...flags]);
  const r = finished(await execa(cmd!, args, { reject: false, all: true, env: phaseEnv(l, extraEnv), extendEnv: false, cwd: l.root }));
  return { code: r.exitCode ?? -1, output: r.all ?? '' };
}

const common = (l: Layout) => [
  '-app',
  l.app,
  '-layers',
  l.layers,
  '-platform',
  l.platform,
  '-buildpacks',
  l.buildpacks,
  '-group',
  l.group,
  '-plan',
  l.plan,
  '-log-level',
  'debug',
];

export interface DetectResult extends PhaseResult {
  group?: { id: string; version: string; api: string }[];
  plan?: { entries?: { providers: { id: string; version: string }[]; requires: { name: string; metadata?: unknown }[] }[] };
}

export async function detector(l: Layout, extraEnv: Record<string, string> = {}): Promise<DetectResult> {
  const r = await phase('detector', l, [...common(l), '-order', l.order], extraEnv);
  if (r.code !== 0) return r;
  const group = (parse(fs.readFileSync(l.group, 'utf8')) as { group: DetectResult['group'] }).group;
  const plan = fs.existsSync(l.plan) ? (parse(fs.readFileSync(l.plan, 'utf8')) as DetectResult['plan']) : {};
  return { ...r, group, plan };
}

export interface Metadata {
  'buildpack-default-process-type'?: string;
  buildpacks: { id: string; version: string }[];
  processes?: { type: string; command: string[]; args?: string[]; direct: boolean; 'buildpack-id': string; 'working-dir'?: string }[];
}

export async function builder(l: Layout, extraEnv: Record<string, string> = {}): Promise<PhaseResult & { metadata?: Metadata }> {
  const r = await phase('builder', l, common(l), extraEnv);
  const file = path.join(l.layers, 'config', 'metadata.toml');
  if (r.code !== 0 || !fs.existsSync(file)) return r;
  return { ...r, metadata: parse(fs.readFileSync(file, 'utf8')) as unknown as Metadata };
}

/** detector then builder; the build's result, or the detector's when it failed. */
export async function detectAndBuild(l: Layout, extraEnv: Record<string, string> = {}): Promise<PhaseResult & { detect: DetectResult; metadata?: Metadata }> {
  const detect = await detector(l, extraEnv);
  if (detect.code !== 0) return { ...detect, detect };
  const b = await builder(l, extraEnv);
  return { ...b, output: `${detect.output}\n${b.output}`, detect };
}

export interface LaunchOptions {
  /** The process type to start, as an image's /cnb/process/<type> (default: the default process). */
  type?: string;
  /** Arguments after the process (user args), or with `direct`, the whole command after `--`. */
  args?: string[];
  /** `launcher -- CMD...`: a command that is not a buildpack process. */
  direct?: boolean;
  /** The launcher's own environment (the run image's ENV plus `docker run -e`). */
  env?: Record<string, string>;
}

/** argv and env of the launcher for these options, as an image's entrypoint would run it. */
export function launcherCommand(l: Layout, o: LaunchOptions = {}): { argv: string[]; env: Record<string, string> } {
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', CNB_PLATFORM_API: PLATFORM_API, CNB_LAYERS_DIR: l.layers, CNB_APP_DIR: l.app, ...o.env };
  if (o.direct) return { argv: [path.join(lc(), 'launcher'), '--', ...(o.args ?? [])], env };
  const md = parse(fs.readFileSync(path.join(l.layers, 'config', 'metadata.toml'), 'utf8')) as unknown as Metadata;
  const type = o.type ?? md['buildpack-default-process-type'];
  if (!type) throw new Error('no default process: metadata.toml names no buildpack-default-process-type');
  const procDir = path.join(l.root, 'cnb', 'process');
  fs.mkdirSync(procDir, { recursive: true });
  const link = path.join(procDir, type);
  if (!fs.existsSync(link)) fs.symlinkSync(path.join(lc(), 'launcher'), link);
  return { argv: [link, ...(o.args ?? [])], env };
}

/** Runs the launcher to completion (a task, a process that exits). */
export async function launch(l: Layout, o: LaunchOptions = {}): Promise<PhaseResult & { stdout: string }> {
  const { argv, env } = launcherCommand(l, o);
  const r = finished(await execa(argv[0]!, argv.slice(1), { reject: false, all: true, env, extendEnv: false, cwd: l.app }));
  return { code: r.exitCode ?? -1, output: r.all ?? '', stdout: r.stdout ?? '' };
}

/** Starts the launcher in the background (a server). */
export function startLauncher(
  l: Layout,
  o: LaunchOptions = {},
): { child: ChildProcess; output: () => string; alive: () => boolean; stop: () => Promise<void> } {
  const { argv, env } = launcherCommand(l, o);
  const child = spawn(argv[0]!, argv.slice(1), { env, cwd: l.app, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let alive = true;
  child.stdout.on('data', (d: Buffer | string) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer | string) => (out += d.toString()));
  const exited = new Promise<void>((resolve) =>
    child.on('exit', () => {
      alive = false;
      resolve();
    }),
  );
  return {
    child,
    output: () => out,
    alive: () => alive,
    stop: async () => {
      if (alive) child.kill('SIGTERM');
      await exited;
    },
  };
}

const RUN_REF = 'run:latest';
/**
 * The layout folder relative to the phases' working folder (the layout root): the lifecycle turns
 * `<layout-dir>/<registry>/<repo>/<tag>` into an image identifier, which an absolute path breaks
 * ("could not parse reference").
 */
const rel = (l: Layout) => path.relative(l.root, l.layout);
const APP_REF = 'app:latest';
const ID = ['-uid', '1000', '-gid', '1000'];

/** A minimal run image (one layer holding /etc/rbp-run-image) in the layout, as the exporter needs one. */
async function ensureRunImage(l: Layout): Promise<void> {
  const image = path.join(l.layout, 'index.docker.io', 'library', 'run', 'latest');
  if (fs.existsSync(path.join(image, 'index.json'))) return;
  fs.mkdirSync(path.dirname(image), { recursive: true });
  const rootless = process.getuid?.() === 0 ? [] : ['--rootless'];
  await execa('umoci', ['init', '--layout', image]);
  await execa('umoci', ['new', '--image', `${image}:latest`]);
  const bundle = tmpDir('rbp-run-image-');
  fs.rmSync(bundle, { recursive: true });
  await execa('umoci', ['unpack', ...rootless, '--image', `${image}:latest`, bundle]);
  fs.mkdirSync(path.join(bundle, 'rootfs', 'etc'), { recursive: true });
  fs.writeFileSync(path.join(bundle, 'rootfs', 'etc', 'rbp-run-image'), 'run image of the reference lifecycle tests\n');
  await execa('umoci', ['repack', '--image', `${image}:latest`, bundle]);
  fs.rmSync(bundle, { recursive: true, force: true });
  // The run image's distro labels, this machine's: the lifecycle's CNB_TARGET_DISTRO_* come from them.
  const osRelease = fs.existsSync('/etc/os-release') ? fs.readFileSync('/etc/os-release', 'utf8') : '';
  const field = (k: string) => new RegExp(`^${k}="?([^"\n]*)"?$`, 'm').exec(osRelease)?.[1];
  const labels = [
    ['io.buildpacks.base.distro.name', field('ID')],
    ['io.buildpacks.base.distro.version', field('VERSION_ID')],
  ].flatMap(([k, v]) => (v ? ['--config.label', `${k}=${v}`] : []));
  if (labels.length)
    await execa('umoci', ['config', '--image', `${image}:latest`, '--os', 'linux', '--architecture', process.arch === 'arm64' ? 'arm64' : 'amd64', ...labels]);
}

/**
 * How a platform asks for a build from scratch, as `pack build --clear-cache` does with the
 * analyzer and restorer: the cache emptied, and `-skip-layers` (no layer metadata or SBOM of the
 * previous image).
 */
export interface BuildFlags {
  skipLayers?: boolean;
}
const skip = (f: BuildFlags) => (f.skipLayers ? ['-skip-layers'] : []);

/** analyzer: analyzed.toml from the layout (previous app image, if any; the run image). */
export async function analyzer(l: Layout, f: BuildFlags = {}): Promise<PhaseResult> {
  await ensureRunImage(l);
  return phase('analyzer', l, [
    '-layout',
    '-layout-dir',
    rel(l),
    '-run-image',
    RUN_REF,
    '-layers',
    l.layers,
    '-analyzed',
    path.join(l.layers, 'analyzed.toml'),
    ...ID,
    ...skip(f),
    '-log-level',
    'debug',
    APP_REF,
  ]);
}

/** restorer: layer metadata of the previous image, cached layers from the volume cache. */
export async function restorer(l: Layout, f: BuildFlags = {}): Promise<PhaseResult> {
  return phase('restorer', l, [
    '-layout',
    '-layout-dir',
    rel(l),
    '-layers',
    l.layers,
    '-group',
    l.group,
    '-analyzed',
    path.join(l.layers, 'analyzed.toml'),
    '-cache-dir',
    l.cache,
    ...ID,
    ...skip(f),
    '-log-level',
    'debug',
  ]);
}

/** exporter: the app image into the layout, the cache into the volume cache. */
export async function exporter(l: Layout): Promise<PhaseResult> {
  return phase('exporter', l, [
    '-layout',
    '-layout-dir',
    rel(l),
    '-app',
    l.app,
    '-layers',
    l.layers,
    '-group',
    l.group,
    '-analyzed',
    path.join(l.layers, 'analyzed.toml'),
    '-launcher',
    path.join(lc(), 'launcher'),
    '-cache-dir',
    l.cache,
    ...ID,
    '-log-level',
    'debug',
    APP_REF,
  ]);
}

/** The whole build as a platform runs it: analyze, detect, restore, build, export. */
export async function fullBuild(l: Layout, extraEnv: Record<string, string> = {}, f: BuildFlags = {}): Promise<PhaseResult & { detect?: DetectResult }> {
  let output = '';
  if (f.skipLayers) {
    fs.rmSync(l.cache, { recursive: true, force: true });
    fs.mkdirSync(l.cache);
  }
  for (const step of [() => analyzer(l, f), async () => detector(l, extraEnv), () => restorer(l, f), () => builder(l, extraEnv), () => exporter(l)]) {
    const r = await step();
    output += `${r.output}\n`;
    if (r.code !== 0) return { code: r.code, output };
  }
  return { code: 0, output };
}

/**
 * The exported image unpacked: its layers (gzip tars, Docker media types, which umoci refuses)
 * extracted in order into `<root>/image/rootfs`. A Layout whose layers and app are the image's own,
 * for the launcher to run on what a container has (launch layers only, the exported app).
 */
export async function unpackedImage(l: Layout): Promise<Layout> {
  const image = path.join(l.layout, 'index.docker.io', 'library', 'app', 'latest');
  const blob = (digest: string) => path.join(image, 'blobs', ...digest.split(':'));
  const index = JSON.parse(fs.readFileSync(path.join(image, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0]!.digest), 'utf8')) as { layers: { digest: string }[] };
  const bundle = path.join(l.root, 'image');
  const rootfs = path.join(bundle, 'rootfs');
  fs.rmSync(bundle, { recursive: true, force: true });
  fs.mkdirSync(rootfs, { recursive: true });
  for (const layer of manifest.layers) await tar.x({ file: blob(layer.digest), cwd: rootfs, preservePaths: false });
  return { ...l, root: bundle, app: path.join(rootfs, l.app), layers: path.join(rootfs, l.layers) };
}
