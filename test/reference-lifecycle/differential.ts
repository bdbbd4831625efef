/**
 * One scenario, run by rbp and by the reference lifecycle on the same inputs, reduced to what both
 * must agree on: the detect result and plan, the build's exit code, the layers a buildpack left and
 * their [types], what the build scripts observed (they write into the app's `.observed/`), the
 * processes and default of metadata.toml, and the launched process's output and exit code.
 * Paths are made comparable: each side's layers and app folder become `<layers>` and `<app>`.
 *
 * Each side gets its own copy of the app as the user's source. The lifecycle side plays the
 * platform as pack does: it copies the source (with project.toml's include/exclude) to the folder
 * the phases work on; rbp is handed the source itself. Whether the source changed is compared too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { parse } from 'smol-toml';
import { expect } from 'vitest';
import { PhaseFailure } from '../../lib/cnb/exit.ts';
import { copyApp as platformCopy } from '../../lib/platform/app-copy.ts';
import { detectApp, type DetectOutcome } from '../../lib/platform/detect.ts';
import { filteredHostEnv } from '../../lib/platform/env.ts';
import { resolveOrder } from '../../lib/platform/order.ts';
import { readProjectDescriptor } from '../../lib/platform/project-descriptor.ts';
import { Logger } from '../../lib/log.ts';
import { envArgs, RBP, tmpDir } from '../helpers/rbp.ts';
import { treeHash } from '../lifecycle/helpers.ts';
import { analyzer, builder, detector, exporter, fullBuild, launch, makeLayout, nextBuild, restorer, unpackedImage, type Layout } from './lifecycle.ts';

export interface Scenario {
  /** Buildpack directories, in group order. */
  buildpacks: string[];
  /** Copied to a fresh folder for each side. */
  app: string;
  /** The app's variables (platform env) for the build, and the launched process's own env. */
  userEnv?: Record<string, string>;
  runEnv?: Record<string, string>;
  /** Operator configuration (RBP_TOOL_*...): rbp's own environment; the lifecycle's build-config env. */
  operatorEnv?: Record<string, string>;
  /** Start the default process (or `type`) with these user args after the build. */
  launch?: Launch;
  /** More launches of the same build, each compared. */
  launches?: Launch[];
}

interface Launch {
  type?: string;
  args?: string[];
}

export interface Observed {
  detect: { code: number; group: string[]; plan: unknown[] };
  build?: { code: number; layers: Record<string, unknown>; exported?: string[]; observed: Record<string, unknown>; processes: unknown[]; defaultType?: string };
  launch?: { code: number; stdout: string };
  launches?: { code: number; stdout: string }[];
  /** Whether the user's source folder changed (a buildpack wrote into it). */
  sourceChanged: boolean;
  /** Not compared: the logs, for a failure's message. */
  log?: string;
}

/** What both sides must agree on. */
export function compared(o: Observed): Omit<Observed, 'log'> {
  const { log: _log, ...rest } = o;
  return JSON.parse(JSON.stringify(rest)) as Omit<Observed, 'log'>;
}

/** The same PATH and HOME for both sides (the lifecycle's include-list keeps both). */
const BASE_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
/**
 * What rbp, as the platform, hands every buildpack as operator configuration: the instance (XS by
 * default) and the Node.js the launch entrypoint may use. A platform running the lifecycle sets the
 * same in its build-config env, so the lifecycle side gets them there.
 */
const OPERATOR = {
  RBP_LAUNCHER_NODE: process.execPath,
  RBP_INSTANCE_SIZE: 'XS',
  RBP_INSTANCE_MEMORY: String(1024 ** 3),
  // rbp's shared download cache (the run's, test/setup/tmp-root.ts), as an operator would mount one.
  RBP_DOWNLOAD_CACHE: process.env.RBP_DOWNLOAD_CACHE ?? path.join(tmpDir('rbp-diff-downloads-'), 'downloads'),
};
/** rbp's own folders (its records of OUTs): the run's, never the machine's (test/setup/tmp-root.ts). */
const RBP_DIRS = { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? tmpDir('rbp-diff-xdg-'), RBP_DOWNLOAD_CACHE: OPERATOR.RBP_DOWNLOAD_CACHE };

function normalize(text: string, layers: string, app: string): string {
  return text.split(layers).join('<layers>').split(app).join('<app>');
}

function copyApp(src: string): string {
  const dst = path.join(tmpDir('rbp-diff-'), 'app');
  fs.cpSync(src, dst, { recursive: true });
  return dst;
}

/** What pack does before the detector: the source copied to the build's app folder, include/exclude applied. */
function platformApp(source: string): string {
  const dst = path.join(tmpDir('rbp-diff-ws-'), 'app');
  platformCopy(source, dst, [], readProjectDescriptor(source)?.filter);
  return dst;
}

/** `<bp>/<layer>` → the layer's [types] (and `.ignore` folders by name), as a buildpack left them. */
function layerTable(layersDir: string, onlyLaunch: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!fs.existsSync(layersDir)) return out;
  for (const bp of fs.readdirSync(layersDir).sort()) {
    const d = path.join(layersDir, bp);
    if (bp === 'config' || bp === 'sbom' || !fs.statSync(d).isDirectory()) continue;
    for (const f of fs.readdirSync(d).sort()) {
      if (!f.endsWith('.toml') || ['launch.toml', 'build.toml', 'store.toml'].includes(f)) continue;
      const name = f.slice(0, -'.toml'.length);
      const types = (parse(fs.readFileSync(path.join(d, f), 'utf8')) as { types?: Record<string, boolean> }).types ?? {};
      const flags = { build: types.build === true, launch: types.launch === true, cache: types.cache === true };
      if (onlyLaunch && !flags.launch) continue;
      // Whether the folder exists is compared on the exported result (`exported`): a launch layer reused by its toml alone has none in the lifecycle's build folder.
      out[`${bp}/${name}`] = flags;
    }
  }
  return out;
}

/** `<bp>/<layer>` folders present in an exported layers folder (an image's /layers, rbp's OUT/layers). */
function exportedDirs(layersDir: string): string[] {
  if (!fs.existsSync(layersDir)) return [];
  return fs
    .readdirSync(layersDir)
    .filter((bp) => bp !== 'config' && bp !== 'sbom' && fs.statSync(path.join(layersDir, bp)).isDirectory())
    .flatMap((bp) =>
      fs
        .readdirSync(path.join(layersDir, bp), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${bp}/${e.name}`),
    )
    .sort();
}

/** What the build scripts wrote into `.observed/`; `*.plan` and `*.toml` files (TOML) parsed, their layout is the writer's. */
function readObserved(app: string, layers: string): Record<string, unknown> {
  const dir = path.join(app, '.observed');
  if (!fs.existsSync(dir)) return {};
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((f) => {
        const text = normalize(fs.readFileSync(path.join(dir, f), 'utf8'), layers, app);
        return [f, f.endsWith('.plan') || f.endsWith('.toml') ? parse(text) : text];
      }),
  );
}

interface Md {
  'buildpack-default-process-type'?: string;
  buildpacks?: { id: string; version: string }[];
  processes?: Record<string, unknown>[];
}
function readMetadata(layers: string): Md | undefined {
  const f = path.join(layers, 'config', 'metadata.toml');
  return fs.existsSync(f) ? parse(fs.readFileSync(f, 'utf8')) : undefined;
}
function processes(md: Md | undefined, layers: string, app: string): unknown[] {
  return JSON.parse(normalize(JSON.stringify(md?.processes ?? []), layers, app)) as unknown[];
}

/** The plan as the lifecycle writes plan.toml: entries of providers (id, version) and requires. */
type PlanOut = { providers: { id: string; version: string }[]; requires: { name: string; metadata?: unknown }[] }[];

/** Launch-only variables `rbp run` adds for the local platform (public port, instance): not the lifecycle's business. */
const RBP_RUN_VARS = ['PORT', 'RBP_PUBLIC_PORT', 'RBP_INSTANCE_SIZE', 'RBP_INSTANCE_MEMORY'];
function dropLines(stdout: string): string {
  return stdout
    .split('\n')
    .filter((l) => !RBP_RUN_VARS.some((v) => l.startsWith(`${v}=`)))
    .join('\n');
}

/** Detect as `rbp detect` does it (project.toml's include/exclude, the copy); a user error's exit code as rbp's. */
async function rbpDetect(s: Scenario, app: string): Promise<DetectOutcome> {
  const platformDir = tmpDir('rbp-diff-platform-');
  fs.mkdirSync(path.join(platformDir, 'env'));
  for (const [k, v] of Object.entries(s.userEnv ?? {})) fs.writeFileSync(path.join(platformDir, 'env', k), v);
  const sink = new PassThrough();
  sink.resume();
  try {
    const order = await resolveOrder({ buildpacks: s.buildpacks });
    return await detectApp(
      order,
      app,
      readProjectDescriptor(app)?.filter,
      { base: filteredHostEnv(BASE_ENV), user: s.userEnv ?? {}, operator: s.operatorEnv ?? {}, platformDir, scratch: tmpDir('rbp-diff-scratch-') },
      new Logger({ out: sink, color: false }),
    );
  } catch (e) {
    if (e instanceof PhaseFailure) return { code: e.code };
    throw e;
  }
}

async function rbpRun(
  out: string,
  l: Launch,
  runEnv: Record<string, string> | undefined,
  layers: string,
  ws: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = finished(
    await execa('node', [RBP, 'run', out, ...(l.type ? ['--process', l.type] : []), ...envArgs(runEnv), '--', ...(l.args ?? [])], {
      reject: false,
      env: { ...BASE_ENV, XDG_CACHE_HOME: RBP_DIRS.XDG_CACHE_HOME },
      extendEnv: false,
    }),
  );
  return { code: r.exitCode ?? -1, stdout: dropLines(normalize(r.stdout ?? '', layers, ws)), stderr: r.stderr ?? '' };
}

export async function viaRbp(s: Scenario): Promise<Observed> {
  const app = copyApp(s.app);
  const before = treeHash(app);
  // `rbp detect` reads the folder it is given, as the lifecycle's detector reads its app folder: that
  // folder is the build's copy on both sides (pack copies the source before its detector runs).
  const d = await rbpDetect(s, copyApp(app));
  const obs: Observed = {
    sourceChanged: treeHash(app) !== before,
    detect: {
      code: d.code,
      group: (d.group ?? []).map((r) => `${r.descriptor.buildpack.id}@${r.descriptor.buildpack.version}`),
      plan: (d.entries ?? []).map((e) => ({
        providers: e.providers.map((p) => ({ id: p.descriptor.buildpack.id, version: p.descriptor.buildpack.version })),
        requires: e.requires.map((q) => ({ name: q.name, ...(q.metadata && Object.keys(q.metadata).length ? { metadata: q.metadata } : {}) })),
      })),
    },
  };
  if (d.code !== 0) return obs;
  const out = path.join(tmpDir('rbp-diff-out-'), 'out');
  const b = await execa('node', [RBP, 'build', app, '--out', out, ...s.buildpacks.flatMap((x) => ['--buildpack', x]), ...envArgs(s.userEnv)], {
    reject: false,
    all: true,
    env: { ...BASE_ENV, ...RBP_DIRS, RBP_LAUNCHER_NODE: OPERATOR.RBP_LAUNCHER_NODE, ...s.operatorEnv, NO_COLOR: '1' },
    extendEnv: false,
  });
  obs.log = finished(b).all ?? '';
  const layers = path.join(out, 'layers');
  const ws = path.join(out, 'workspace');
  // A failed build leaves OUT as it was (nothing): what the scripts observed is in the build's app copy, gone too.
  const md = readMetadata(layers);
  obs.build = {
    code: b.exitCode ?? -1,
    layers: b.exitCode === 0 ? layerTable(layers, true) : {},
    exported: b.exitCode === 0 ? exportedDirs(layers) : [],
    observed: b.exitCode === 0 ? readObserved(ws, layers) : {},
    processes: processes(md, layers, ws),
    defaultType: md?.['buildpack-default-process-type'],
  };
  if (b.exitCode === 0 && s.launch) {
    const { stderr, ...r } = await rbpRun(out, s.launch, s.runEnv, layers, ws);
    obs.launch = r;
    obs.log += `\n${stderr}`;
  }
  if (b.exitCode === 0 && s.launches) {
    obs.launches = [];
    for (const l of s.launches) {
      const { stderr, ...r } = await rbpRun(out, l, s.runEnv, layers, ws);
      obs.launches.push(r);
      obs.log += `\n${stderr}`;
    }
  }
  obs.sourceChanged ||= treeHash(app) !== before;
  return obs;
}

/** analyzer, detector, restorer, builder, exporter (an OCI layout), then the launcher on the unpacked image. */
export async function viaLifecycle(s: Scenario): Promise<Observed & { layout: Layout }> {
  const source = copyApp(s.app);
  const before = treeHash(source);
  const app = platformApp(source);
  const l = makeLayout(app, { buildpacks: s.buildpacks, userEnv: s.userEnv, operatorEnv: { ...OPERATOR, ...s.operatorEnv } });
  const a = await analyzer(l);
  if (a.code !== 0) throw new Error(`analyzer failed:\n${a.output}`);
  const d = await detector(l);
  const plan = (d.plan?.entries ?? []) as PlanOut;
  const obs: Observed & { layout: Layout; log: string } = {
    layout: l,
    sourceChanged: false,
    log: d.output,
    detect: {
      code: d.code,
      group: (d.group ?? []).map((g) => `${g.id}@${g.version}`),
      plan: plan.map((e) => ({
        providers: e.providers.map((p) => ({ id: p.id, version: p.version })),
        requires: e.requires.map((q) => ({ name: q.name, ...(q.metadata && Object.keys(q.metadata).length ? { metadata: q.metadata } : {}) })),
      })),
    },
  };
  if (d.code !== 0) return obs;
  const rs = await restorer(l);
  if (rs.code !== 0) throw new Error(`restorer failed:\n${rs.output}`);
  const b = await builder(l);
  obs.log += `\n${b.output}`;
  if (b.code !== 0) {
    // The builder's "buildpack failed" is 51, as rbp's; a failed build's folders are not compared (rbp's are gone).
    obs.build = { code: b.code, layers: {}, exported: [], observed: {}, processes: [], defaultType: undefined };
    return obs;
  }
  const e = await exporter(l);
  obs.log += `\n${e.output}`;
  if (e.code !== 0) throw new Error(`exporter failed:\n${obs.log}`);
  const image = await unpackedImage(l);
  const md = readMetadata(image.layers);
  obs.build = {
    code: b.code,
    layers: layerTable(l.layers, true),
    exported: exportedDirs(image.layers),
    observed: readObserved(app, l.layers),
    processes: processes(md, l.layers, l.app),
    defaultType: md?.['buildpack-default-process-type'],
  };
  const run = async (one: Launch) => {
    const res = await launch(image, { type: one.type, args: one.args, env: { ...BASE_ENV, ...s.runEnv } });
    obs.log += `\n${res.output}`;
    return { code: res.code, stdout: normalize(normalize(res.stdout, image.layers, image.app), l.layers, l.app) };
  };
  if (s.launch) obs.launch = await run(s.launch);
  if (s.launches) {
    obs.launches = [];
    for (const one of s.launches) obs.launches.push(await run(one));
  }
  obs.sourceChanged = treeHash(source) !== before;
  return obs;
}

export interface Rebuild {
  buildpacks: string[];
  /** The app of the first build, and of the second (e.g. other `.bp/` scripts). */
  first: string;
  second: string;
  /** The second build from scratch: `rbp build --clear-cache`; `pack build --clear-cache` for the lifecycle. */
  clearCache?: boolean;
}

export interface RebuildObserved {
  code: number;
  /** What the second build's scripts observed (the restored layers, as they saw them). */
  observed: Record<string, unknown>;
  layers: Record<string, unknown>;
  exported: string[];
  log?: string;
}

/** rbp: two builds into the same OUT, with rbp's cache beside it. */
export async function rebuildViaRbp(r: Rebuild): Promise<RebuildObserved> {
  const out = path.join(tmpDir('rbp-diff-out-'), 'out');
  const run = (app: string, flags: string[] = []) =>
    execa('node', [RBP, 'build', copyApp(app), '--out', out, ...r.buildpacks.flatMap((x) => ['--buildpack', x]), ...flags], {
      reject: false,
      all: true,
      env: { ...BASE_ENV, ...RBP_DIRS, RBP_LAUNCHER_NODE: OPERATOR.RBP_LAUNCHER_NODE, NO_COLOR: '1' },
      extendEnv: false,
    });
  const b1 = await run(r.first);
  if (b1.exitCode !== 0) throw new Error(`rbp: the first build failed:\n${b1.all}`);
  const b2 = await run(r.second, r.clearCache ? ['--clear-cache'] : []);
  const layers = path.join(out, 'layers');
  const ws = path.join(out, 'workspace');
  return {
    code: b2.exitCode ?? -1,
    observed: b2.exitCode === 0 ? readObserved(ws, layers) : {},
    layers: b2.exitCode === 0 ? layerTable(layers, true) : {},
    exported: b2.exitCode === 0 ? exportedDirs(layers) : [],
    log: finished(b2).all ?? '',
  };
}

/** The lifecycle: analyze, detect, restore, build, export twice, the second from the first's image and cache. */
export async function rebuildViaLifecycle(r: Rebuild): Promise<RebuildObserved> {
  const l = makeLayout(copyApp(r.first), { buildpacks: r.buildpacks, operatorEnv: OPERATOR });
  const b1 = await fullBuild(l);
  if (b1.code !== 0) throw new Error(`lifecycle: the first build failed:\n${b1.output}`);
  nextBuild(l, r.second);
  const b2 = await fullBuild(l, {}, { skipLayers: r.clearCache });
  if (b2.code !== 0) return { code: b2.code, observed: {}, layers: {}, exported: [], log: b2.output };
  const image = await unpackedImage(l);
  return { code: 0, observed: readObserved(l.app, l.layers), layers: layerTable(l.layers, true), exported: exportedDirs(image.layers), log: b2.output };
}

/**
 * The build environment, less what the shell sets and the CNB_* paths that name each side's own
 * folders (plan files, buildpack and layers folders); CNB_TARGET_* are compared.
 */
export const DUMP_ENV = (file: string) =>
  `mkdir -p .observed && env | grep -v -E '^(CNB_(BP_PLAN_PATH|BUILD_PLAN_PATH|BUILDPACK_DIR|LAYERS_DIR|PLATFORM_DIR)=|PWD=|OLDPWD=|SHLVL=|_=)' | sort > .observed/${file}`;
/** A process that prints its environment (as DUMP_ENV), its arguments, and exits with $EXIT. */
export const SHOW_PROCESS = (type: string, extra = '') =>
  `[[processes]]\ntype = "${type}"\ncommand = ["sh", "-c", "env | grep -v -E '^(CNB_|PWD=|OLDPWD=|SHLVL=|_=)' | sort; echo cwd=$(pwd); echo args: \\"$*\\"; exit \${EXIT:-0}", "${type}"]\nargs = ["default-arg"]\n${extra}`;

/** A layer `name` with these types and files (path → contents, `+x` suffix for an executable), in `layersDir` (a 0.7 buildpack's is `$1`). */
export function layer(name: string, types: string, files: Record<string, string> = {}, layersDir = '$CNB_LAYERS_DIR'): string {
  const lines = [`mkdir -p "${layersDir}/${name}"`, `printf '${types ? `[types]\\n${types.replaceAll('\n', '\\n')}\\n` : ''}' > "${layersDir}/${name}.toml"`];
  for (const [f0, v] of Object.entries(files)) {
    const exec = f0.endsWith('+x');
    const f = exec ? f0.slice(0, -2) : f0;
    lines.push(`mkdir -p "$(dirname "${layersDir}/${name}/${f}")"`, `printf '%s' '${v}' > "${layersDir}/${name}/${f}"`);
    if (exec) lines.push(`chmod +x "${layersDir}/${name}/${f}"`);
  }
  return lines.join('\n');
}

export async function both(s: Scenario): Promise<{ rbp: Observed; ref: Observed }> {
  const [ours, ref] = await Promise.all([viaRbp(s), viaLifecycle(s)]);
  return { rbp: ours, ref };
}

/** Asserts both sides observed the same, showing both logs on a difference. */
export function same(r: { rbp: Observed; ref: Observed }): void {
  const strip = (o: Observed) => {
    const { layout: _l, ...rest } = o as Observed & { layout?: unknown };
    return compared(rest);
  };
  expect(strip(r.rbp), `---- rbp:\n${r.rbp.log ?? ''}\n---- lifecycle:\n${r.ref.log ?? ''}`).toEqual(strip(r.ref));
}
