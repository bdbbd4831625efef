/**
 * `rbp builder --out DIR`: a CNB builder as an OCI image layout, the way `pack builder create`
 * makes one, with the images a platform needs beside it in the same layout:
 *   tag `run`        the run image, with an /etc/passwd and /etc/group entry for the CNB user
 *   tag `build`      the build base image (kpack's ClusterStack buildImage): the run image's layers,
 *                    the Node.js our buildpacks' bootstraps run on (/usr/local/bin/node), the CNB user
 *                    1000:1000 (User, CNB_USER_ID, CNB_GROUP_ID) and the stack id label
 *   tag `builder`    the build image plus /cnb/lifecycle/ (the reference lifecycle), our buildpacks
 *                    (/cnb/buildpacks/<escaped id>/<version>/, one layer each), /cnb/order.toml
 *                    (node | static | phpserver), /cnb/run.toml and /cnb/stack.toml naming the run
 *                    image, /layers and /workspace owned by the CNB user; the labels pack and kpack
 *                    read (io.buildpacks.builder.metadata, .buildpack.order, .buildpack.layers, .stack.id)
 *   tag `lifecycle`  the lifecycle image, shaped as buildpacksio/lifecycle (pack's untrusted builds)
 * Every layer has its history entry, every file and folder the modes pack writes (0755/0644, root).
 * Beside them, for `pack builder create` offline: DIR/builder.toml, DIR/buildpacks/rbp-<name>.cnb and
 * DIR/lifecycle-v<version>+linux.<arch>.tgz (named by `uri`, so pack downloads nothing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'smol-toml';
import { UserError } from '../errors.ts';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import type { Logger } from '../log.ts';
import { AUTO_ORDER, ourBuildpack } from './our-buildpacks.ts';
import { PLATFORM_API, runImageLayout } from './app-image.ts';
import { addLayerInfo, LAYERS_LABEL, oneGroupEach, stageBuildpack, writeBuildpackage, type LayersLabel } from './buildpackage.ts';
import { formatRef, parseImageRef, sibling, type ImageRef } from './image-ref.ts';
import { lifecycleArchiveName, lifecycleDescriptor, lifecycleImageLabels, LIFECYCLE_APIS, stageLifecycle, writeLifecycleArchive } from './lifecycle.ts';
import {
  historyFor,
  imageEnv,
  imageTime,
  OciLayoutWriter,
  readLayout,
  REPRODUCIBLE_DATE,
  type Descriptor,
  type ImageConfig,
  type Layer,
  type LayerOptions,
  type ReadImage,
} from './oci-layout.ts';
import { cnbHomeOwner, CNB_USER, stageCnbUser } from './stack-user.ts';

const BUILD_USER = `${CNB_USER.uid}:${CNB_USER.gid}`;
export const STACK_ID = 'io.buildpacks.stacks.bookworm';
/** The builder's name when none is given: a registry on this machine's usual port (see README, "Use with pack"). */
export const DEFAULT_BUILDER_REF = 'localhost:5000/rbp:bookworm';

/** The four images' names: the builder's, and beside it `<name>-build`, `<name>-run`, `<name>-lifecycle:<version>`. */
export interface BuilderNames {
  builder: ImageRef;
  build: ImageRef;
  run: ImageRef;
  lifecycle: ImageRef;
}

export function builderNames(o: { builder?: string; runImageName?: string; lifecycleVersion: string }): BuilderNames {
  const builder = parseImageRef(o.builder ?? DEFAULT_BUILDER_REF, '--publish', { push: true });
  return {
    builder,
    build: sibling(builder, '-build'),
    run: o.runImageName ? parseImageRef(o.runImageName, '--run-image-name') : sibling(builder, '-run'),
    lifecycle: sibling(builder, '-lifecycle', o.lifecycleVersion),
  };
}

export const LAYOUT_TAGS = { builder: 'builder', build: 'build', run: 'run', lifecycle: 'lifecycle' } as const;

export interface BuilderOptions {
  out: string;
  runImage: string;
  /** The folder of the reference lifecycle: `lifecycle` and `launcher`. */
  lifecycleDir: string;
  lifecycleVersion: string;
  /** The Node.js the build image carries. */
  node: string;
  names: BuilderNames;
  log: Logger;
}

/** The folders a builder gives the CNB user: the lifecycle writes into them. */
const USER_DIRS = ['layers', 'workspace'];
const ROOT_DIRS = ['cnb', 'platform', 'platform/env'];

/** Where scripts/tools/ is: beside dist/ in the package and in a checkout (it ships in both). */
function toolScripts(): string {
  const here = import.meta.dirname;
  const found = [path.resolve(here, '..', 'scripts', 'tools'), path.resolve(here, '..', '..', 'scripts', 'tools')].find((d) =>
    fs.existsSync(path.join(d, 'lifecycle.sh')),
  );
  return found ?? 'scripts/tools';
}

/**
 * The two tools a builder is made of besides our buildpacks: the reference lifecycle and the run
 * image. A missing one is one error naming it, where it was looked for and how to get it.
 */
export function checkBuilderTools(runLayout: string, lifecycleDir: string): void {
  const scripts = toolScripts();
  const missing: string[] = [];
  const fixes: string[] = [];
  const lifecycleBins = ['lifecycle', 'launcher'].map((b) => path.join(lifecycleDir, b));
  if (!lifecycleBins.every((f) => fs.existsSync(f))) {
    missing.push(
      `the reference CNB lifecycle: no ${lifecycleBins.filter((f) => !fs.existsSync(f)).join(' and ')} (beside RBP_TOOL_LIFECYCLE, else in the tool cache, RBP_TOOLS_CACHE)`,
    );
    fixes.push(
      `export RBP_TOOL_LIFECYCLE="$(${path.join(scripts, 'lifecycle.sh')} | tail -n 1)" (builds lifecycle 0.20.8 from the Go module proxy, about 2 minutes)`,
    );
  }
  if (!fs.existsSync(path.join(runLayout, 'index.json'))) {
    missing.push(`the run image: no OCI layout at ${runLayout} (--run-image, else RBP_RUN_IMAGE, else the tool cache, RBP_TOOLS_CACHE)`);
    fixes.push(`${path.join(scripts, 'run-image.sh')} (a Debian bookworm image from mmdebstrap and umoci, about 1 minute), or --run-image DIR`);
  }
  if (!missing.length) return;
  throw new UserError({
    id: 'platform/builder/tool-missing',
    title: `The builder cannot be made: ${missing.length === 2 ? 'the lifecycle and the run image are' : missing[0]!.startsWith('the run image') ? 'the run image is' : 'the reference lifecycle is'} missing`,
    seen: { what: 'tools', value: missing.length === 2 ? 'lifecycle, run image' : missing[0]!.startsWith('the run image') ? 'run image' : 'lifecycle' },
    rule: 'rbp builder puts the reference CNB lifecycle and a run image into the builder, with our buildpacks; it takes them from RBP_TOOL_LIFECYCLE and RBP_RUN_IMAGE (or --run-image), else from the tool cache that scripts/tools/ fills.',
    details: missing,
    fix: `Make ${missing.length === 2 ? 'them' : 'it'}: ${fixes.join('; then ')}.`,
  });
}

/** An image being made: its base's layers plus some of its own, each with its history entry. */
interface Built {
  layers: Descriptor[];
  diffIds: string[];
  history: NonNullable<ImageConfig['history']>;
}
const from = (b: Built): Built => ({ layers: [...b.layers], diffIds: [...b.diffIds], history: [...b.history] });

/** The writer of the builder's layout, with what the images share: the run image, a staging folder. */
class BuilderLayout {
  readonly w: OciLayoutWriter;
  readonly base: ReadImage;
  readonly baseImg: Built;
  readonly runPath: string;

  constructor(
    partial: string,
    runLayout: string,
    private readonly tmp: string,
  ) {
    this.w = new OciLayoutWriter(partial);
    this.base = readLayout(runLayout);
    for (const l of this.base.manifest.layers) this.w.adoptBlob(runLayout, l);
    this.baseImg = {
      layers: [...this.base.manifest.layers],
      diffIds: [...this.base.config.rootfs.diff_ids],
      history: historyFor(this.base.config, this.base.manifest.layers.length, []),
    };
    this.runPath = imageEnv(this.base.config).path;
  }

  stage(name: string): string {
    fs.mkdirSync(path.join(this.tmp, name), { recursive: true });
    return path.join(this.tmp, name);
  }

  async add(img: Built, root: string, what: string, opts: LayerOptions = {}) {
    const l = await this.w.addLayer(root, undefined, { normalizeModes: true, ...opts });
    BuilderLayout.push(img, l, what);
    return l;
  }

  static push(img: Built, l: Layer, what: string): void {
    img.layers.push(l);
    img.diffIds.push(l.diffID);
    img.history.push(...historyFor(undefined, 0, [what]));
  }

  /** Writes one image of the builder. */
  finish(img: Built, config: Omit<ImageConfig, 'architecture' | 'os' | 'rootfs' | 'history'>, tag: string): void {
    const { architecture, os } = this.base.config;
    this.w.finish(
      { architecture, os, created: imageTime(REPRODUCIBLE_DATE), ...config, rootfs: { type: 'layers', diff_ids: img.diffIds }, history: img.history },
      img.layers,
      tag,
    );
  }
}

export async function writeBuilder(o: BuilderOptions): Promise<{ layout: string }> {
  const runLayout = runImageLayout(o.runImage);
  checkBuilderTools(runLayout, o.lifecycleDir);
  const members: BuildpackRef[] = AUTO_ORDER.map((r) => ourBuildpack(r));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-builder-'));
  const partial = `${o.out}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    const b = new BuilderLayout(partial, runLayout, tmp);
    const build = await stackImages(b, o);
    const { lcLayer, description, order, layers } = await builderImage(b, from(build), members, o);
    // The lifecycle image: what buildpacksio/lifecycle holds (/cnb/lifecycle, its labels, /layers as
    // working folder, run as root), on the run image's layers (it needs CA certificates and /tmp).
    const lifecycle = from(b.baseImg);
    BuilderLayout.push(lifecycle, lcLayer, `rbp: the reference lifecycle ${o.lifecycleVersion} at /cnb/lifecycle`);
    b.finish(
      lifecycle,
      { config: { Env: [`PATH=/cnb/lifecycle:${b.runPath}`], WorkingDir: '/layers', Labels: lifecycleImageLabels(o.lifecycleVersion) } },
      LAYOUT_TAGS.lifecycle,
    );

    // For `pack builder create`, offline: the buildpackages, the lifecycle's release archive, builder.toml.
    const bpDir = path.join(partial, 'buildpacks');
    fs.mkdirSync(bpDir);
    for (const [i, ref] of members.entries()) await writeBuildpackage(ref, [], path.join(bpDir, `rbp-${AUTO_ORDER[i]}.cnb`));
    const archive = lifecycleArchiveName(o.lifecycleVersion, b.base.config.architecture);
    await writeLifecycleArchive(o.lifecycleDir, o.lifecycleVersion, path.join(partial, archive), tmp);
    fs.writeFileSync(path.join(partial, 'lifecycle.toml'), lifecycleDescriptor(o.lifecycleVersion));
    fs.writeFileSync(path.join(partial, 'builder.toml'), builderToml({ description, order, archive, names: o.names, arch: b.base.config.architecture }));

    fs.rmSync(o.out, { recursive: true, force: true });
    fs.renameSync(partial, o.out);
    o.log.info(
      `builder: ${o.out} (OCI layout: tags builder, build, run, lifecycle; ${layers} layers in the builder), order ${AUTO_ORDER.join(' | ')}, lifecycle ${o.lifecycleVersion}`,
    );
    return { layout: o.out };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(partial, { recursive: true, force: true });
  }
}

const stackEnv = [`CNB_USER_ID=${CNB_USER.uid}`, `CNB_GROUP_ID=${CNB_USER.gid}`, `CNB_STACK_ID=${STACK_ID}`, `HOME=${CNB_USER.home}`];

/** The run image (the CNB user's passwd and group entries, when the given run image has none) and the build image; returns the build image. */
async function stackImages(b: BuilderLayout, o: BuilderOptions): Promise<Built> {
  const run = from(b.baseImg);
  const userRoot = await stageCnbUser(b.base, b.stage('user'));
  if (userRoot)
    await b.add(run, userRoot, `rbp: the CNB user ${CNB_USER.name} (${CNB_USER.uid}:${CNB_USER.gid}) in /etc/passwd and /etc/group, home ${CNB_USER.home}`, {
      owner: cnbHomeOwner,
    });
  const { architecture: _a, os: _o, rootfs: _r, history: _h, created: _c, ...runRest } = b.base.config;
  b.finish(run, runRest, LAYOUT_TAGS.run);

  // The build base image: the run image, the bootstraps' Node.js, the CNB user's home.
  const build = from(run);
  const nodeRoot = b.stage('node');
  fs.mkdirSync(path.join(nodeRoot, 'usr', 'local', 'bin'), { recursive: true });
  fs.copyFileSync(o.node, path.join(nodeRoot, 'usr', 'local', 'bin', 'node'));
  fs.chmodSync(path.join(nodeRoot, 'usr', 'local', 'bin', 'node'), 0o755);
  fs.mkdirSync(path.join(nodeRoot, CNB_USER.home.slice(1)), { recursive: true });
  await b.add(build, nodeRoot, `rbp: Node.js ${process.version} at /usr/local/bin/node, for the buildpacks' bootstraps`, { owner: cnbHomeOwner });
  b.finish(build, { config: { Env: [`PATH=${b.runPath}`, ...stackEnv], User: BUILD_USER, Labels: stackLabels(b) } }, LAYOUT_TAGS.build);
  return build;
}

const stackLabels = (b: BuilderLayout) => ({ ...(b.base.config.config?.Labels ?? {}), 'io.buildpacks.stack.id': STACK_ID });

/** The builder image: the build image, the lifecycle, one layer per buildpack, /cnb's files and the platform's folders. */
async function builderImage(b: BuilderLayout, builder: Built, members: BuildpackRef[], o: BuilderOptions) {
  // The lifecycle, one layer shared by the builder and the lifecycle image.
  const lcRoot = b.stage('lifecycle');
  stageLifecycle(o.lifecycleDir, lcRoot);
  const lcLayer = await b.add(builder, lcRoot, `rbp: the reference lifecycle ${o.lifecycleVersion} at /cnb/lifecycle`);

  // One layer per buildpack, as a buildpackage has them.
  const bpLayers: LayersLabel = {};
  for (const ref of members) {
    const d = ref.descriptor;
    const root = b.stage(`bp-${escapeId(d.buildpack.id)}`);
    stageBuildpack(ref, root);
    addLayerInfo(bpLayers, d, (await b.add(builder, root, `rbp: buildpack ${d.buildpack.id}@${d.buildpack.version}`)).diffID);
  }

  // order.toml, run.toml, stack.toml and the platform's folders. The same order as the composite
  // rbp/auto: one group per runtime, in AUTO_ORDER.
  const runRef = formatRef(o.names.run);
  const order = oneGroupEach(members);
  const cfg = b.stage('config');
  for (const d of [...ROOT_DIRS, ...USER_DIRS]) fs.mkdirSync(path.join(cfg, d), { recursive: true });
  fs.writeFileSync(path.join(cfg, 'cnb', 'order.toml'), stringify({ order }));
  fs.writeFileSync(path.join(cfg, 'cnb', 'run.toml'), stringify({ images: [{ image: runRef }] }));
  fs.writeFileSync(path.join(cfg, 'cnb', 'stack.toml'), stringify({ 'run-image': { image: runRef } }));
  await b.add(builder, cfg, 'rbp: /cnb/order.toml, /cnb/run.toml, /cnb/stack.toml, /layers, /workspace, /platform', {
    owner: (rel) => (USER_DIRS.includes(rel) ? { uid: CNB_USER.uid, gid: CNB_USER.gid } : undefined),
  });

  const description = `runtime-buildpacks: ${AUTO_ORDER.join(', ')} on Debian bookworm`;
  const metadata = {
    description,
    buildpacks: members.map(({ descriptor: { buildpack: b } }) => ({ id: b.id, version: b.version, homepage: b.homepage, name: b.name })),
    stack: { runImage: { image: runRef, mirrors: [] } },
    images: [{ image: runRef, mirrors: [] }],
    lifecycle: { version: o.lifecycleVersion, api: { buildpack: '0.10', platform: PLATFORM_API }, apis: LIFECYCLE_APIS },
    createdBy: { name: 'rbp', version: '' },
  };
  const labels = {
    ...stackLabels(b),
    'io.buildpacks.builder.metadata': JSON.stringify(metadata),
    'io.buildpacks.buildpack.order': JSON.stringify(order),
    [LAYERS_LABEL]: JSON.stringify(bpLayers),
    'io.buildpacks.builder.api': PLATFORM_API,
  };
  const env = [`PATH=/cnb/lifecycle:${b.runPath}`, ...stackEnv, `CNB_PLATFORM_API=${PLATFORM_API}`];
  b.finish(builder, { config: { Env: env, User: BUILD_USER, WorkingDir: '/layers', Labels: labels } }, LAYOUT_TAGS.builder);
  return { lcLayer, description, order, layers: builder.layers.length };
}

/** builder.toml for `pack builder create`: everything it names is beside it or in a registry. */
function builderToml(o: { description: string; order: ReturnType<typeof oneGroupEach>; archive: string; names: BuilderNames; arch: string }): string {
  const build = formatRef(o.names.build);
  const run = formatRef(o.names.run);
  return `# The builder rbp wrote in this folder, for \`pack builder create NAME --config builder.toml\`: the
# buildpacks and the lifecycle are files beside it (nothing is downloaded); the build and run images
# are the layout's tags build and run, under the names below, in a registry or in the Docker/podman
# store (see rbp builder's output, or README.md "Use with pack").
${stringify({
  description: o.description,
  buildpacks: AUTO_ORDER.map((r) => ({ uri: `buildpacks/rbp-${r}.cnb` })),
  order: o.order,
  lifecycle: { uri: o.archive },
  targets: [{ os: 'linux', arch: o.arch }],
  stack: { id: STACK_ID, 'build-image': build, 'run-image': run },
  build: { image: build },
  run: { images: [{ image: run }] },
})}`;
}

/** What rbp builder prints after writing: each image's name, and how to load or push them. */
export function builderInstructions(layout: string, names: BuilderNames): string[] {
  const kinds = ['builder', 'build', 'run', 'lifecycle'] as const;
  const rows = kinds.map((k) => `  ${k.padEnd(9)} ${formatRef(names[k])}  (oci:${layout}:${LAYOUT_TAGS[k]})`);
  const copy = (dest: string) => kinds.map((k) => `  skopeo copy oci:${layout}:${LAYOUT_TAGS[k]} ${dest}${formatRef(names[k])}`);
  return [
    'images (pack build needs the builder and its run image, untrusted builds the lifecycle image, pack builder create with builder.toml the build and run images):',
    ...rows,
    'push them to a registry: rbp builder --publish REGISTRY/NAME:TAG (the others are named beside it), or load them:',
    'into Docker:',
    ...copy('docker-daemon:'),
    'into podman:',
    ...copy('containers-storage:'),
  ];
}
