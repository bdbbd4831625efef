/**
 * `rbp builder --out DIR`: a CNB builder as an OCI image layout, the way `pack builder create`
 * makes one, with the run image beside it in the same layout:
 *   DIR (tag `builder`)  the build image: the run image's Debian layers, plus
 *       /cnb/lifecycle/     the reference lifecycle (its phases and launcher)
 *       /cnb/buildpacks/<escaped id>/<version>/   our three buildpacks, one layer each
 *       /cnb/order.toml     rbp's automatic order (node | static | phpserver), /cnb/run.toml
 *       /usr/local/bin/node the Node.js our buildpacks' bootstraps run on (a build image needs one)
 *       /layers /workspace /platform /cache /home/cnb, owned by the build user 1000:1000
 *     with the labels pack and kpack read (io.buildpacks.builder.metadata, .buildpack.order,
 *     .buildpack.layers, .stack.id) and Env CNB_USER_ID, CNB_GROUP_ID, CNB_PLATFORM_API.
 *   DIR (tag `run`)      the run image, as given.
 *   DIR/builder.toml     the same builder for `pack builder create` users.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'smol-toml';
import { UserError } from '../errors.ts';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import type { Logger } from '../log.ts';
import { AUTO_ORDER, ourBuildpack } from '../platform/order.ts';
import { runImageLayout } from './app-image.ts';
import { LAYERS_LABEL, oneGroupEach, stageBuildpack } from './buildpackage.ts';
import { imageEnv, OciLayoutWriter, readLayout, REPRODUCIBLE_DATE, type Descriptor } from './oci-layout.ts';

export const BUILD_UID = 1000;
export const BUILD_GID = 1000;
export const RUN_IMAGE_REF = 'run';
export const BUILDER_PLATFORM_API = '0.13';
const STACK_ID = 'io.buildpacks.stacks.bookworm';

export interface BuilderOptions {
  out: string;
  runImage: string;
  /** The folder of the reference lifecycle: `lifecycle`, its phase links and `launcher`. */
  lifecycleDir: string;
  lifecycleVersion: string;
  /** The Node.js the build image carries. */
  node: string;
  log: Logger;
}

const PHASES = ['detector', 'analyzer', 'restorer', 'builder', 'exporter', 'creator', 'rebaser', 'extender'];

/** Where scripts/tools/ is: beside dist/ in the package and in a checkout (it ships in both). */
function toolScripts(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const found = [path.resolve(here, '..', 'scripts', 'tools'), path.resolve(here, '..', '..', 'scripts', 'tools')].find((d) => fs.existsSync(path.join(d, 'lifecycle.sh')));
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
    missing.push(`the reference CNB lifecycle: no ${lifecycleBins.filter((f) => !fs.existsSync(f)).join(' and ')} (beside RBP_TOOL_LIFECYCLE, else in the tool cache, RBP_TOOLS_CACHE)`);
    fixes.push(`export RBP_TOOL_LIFECYCLE="$(${path.join(scripts, 'lifecycle.sh')} | tail -n 1)" (builds lifecycle 0.20.8 from the Go module proxy, about 2 minutes)`);
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

export async function writeBuilder(o: BuilderOptions): Promise<{ builder: string; run: string }> {
  const runLayout = runImageLayout(o.runImage);
  checkBuilderTools(runLayout, o.lifecycleDir);
  const run = readLayout(runLayout);
  const members: BuildpackRef[] = AUTO_ORDER.map((r) => ourBuildpack(r));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-builder-'));
  const partial = `${o.out}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    const w = new OciLayoutWriter(partial);
    w.adoptImage(runLayout, run, run.manifestDigest, RUN_IMAGE_REF);
    const layers: Descriptor[] = [...run.manifest.layers];
    const diffIds = [...run.config.rootfs.diff_ids];
    const add = async (root: string, keepOwners = false) => {
      const l = await w.addLayer(root, undefined, { keepOwners });
      layers.push(l);
      diffIds.push(l.diffID);
      return l;
    };

    // The lifecycle, as /cnb/lifecycle of a builder.
    const lc = path.join(tmp, 'lifecycle', 'cnb', 'lifecycle');
    fs.mkdirSync(lc, { recursive: true });
    for (const bin of ['lifecycle', 'launcher']) fs.copyFileSync(path.join(o.lifecycleDir, bin), path.join(lc, bin));
    for (const p of PHASES) fs.symlinkSync('lifecycle', path.join(lc, p));
    await add(path.join(tmp, 'lifecycle'));

    // One layer per buildpack, as a buildpackage has them.
    const bpLayers: Record<string, Record<string, { api: string; targets?: unknown; layerDiffID: string; homepage?: string; name?: string }>> = {};
    for (const ref of members) {
      const root = path.join(tmp, 'bp', escapeId(ref.descriptor.buildpack.id));
      stageBuildpack(ref, root);
      const l = await add(root);
      const d = ref.descriptor;
      (bpLayers[d.buildpack.id] ??= {})[d.buildpack.version] = { api: d.api, ...(d.targets ? { targets: d.targets } : {}), layerDiffID: l.diffID, ...(d.buildpack.homepage ? { homepage: d.buildpack.homepage } : {}), ...(d.buildpack.name ? { name: d.buildpack.name } : {}) };
    }

    // order.toml, run.toml, the build user's folders and the Node.js of the bootstraps.
    // The same order as the composite rbp/auto: one group per runtime, in AUTO_ORDER.
    const order = oneGroupEach(members);
    const cfg = path.join(tmp, 'config');
    fs.mkdirSync(path.join(cfg, 'cnb'), { recursive: true });
    fs.writeFileSync(path.join(cfg, 'cnb', 'order.toml'), stringify({ order }));
    fs.writeFileSync(path.join(cfg, 'cnb', 'run.toml'), stringify({ images: [{ image: RUN_IMAGE_REF }] }));
    fs.writeFileSync(path.join(cfg, 'cnb', 'stack.toml'), stringify({ 'run-image': { image: RUN_IMAGE_REF } }));
    fs.mkdirSync(path.join(cfg, 'usr', 'local', 'bin'), { recursive: true });
    fs.copyFileSync(o.node, path.join(cfg, 'usr', 'local', 'bin', 'node'));
    fs.chmodSync(path.join(cfg, 'usr', 'local', 'bin', 'node'), 0o755);
    for (const d of ['layers', 'workspace', 'platform', 'platform/env', 'cache', 'home/cnb']) {
      fs.mkdirSync(path.join(cfg, d), { recursive: true });
      fs.chownSync(path.join(cfg, d), BUILD_UID, BUILD_GID);
    }
    await add(cfg, true);

    const runPath = imageEnv(run.config).path;
    const metadata = {
      description: `runtime-buildpacks: ${AUTO_ORDER.join(', ')} on Debian bookworm`,
      buildpacks: members.map((m) => ({ id: m.descriptor.buildpack.id, version: m.descriptor.buildpack.version, homepage: m.descriptor.buildpack.homepage, name: m.descriptor.buildpack.name })),
      stack: { runImage: { image: RUN_IMAGE_REF, mirrors: [] } },
      images: [{ image: RUN_IMAGE_REF, mirrors: [] }],
      lifecycle: { version: o.lifecycleVersion, api: { buildpack: '0.10', platform: BUILDER_PLATFORM_API } },
      createdBy: { name: 'rbp', version: '' },
    };
    w.finish(
      {
        architecture: run.config.architecture,
        os: run.config.os,
        created: REPRODUCIBLE_DATE.toISOString(),
        config: {
          Env: [`PATH=/cnb/lifecycle:${runPath}`, `CNB_USER_ID=${BUILD_UID}`, `CNB_GROUP_ID=${BUILD_GID}`, `CNB_STACK_ID=${STACK_ID}`, `CNB_PLATFORM_API=${BUILDER_PLATFORM_API}`, 'HOME=/home/cnb'],
          User: `${BUILD_UID}:${BUILD_GID}`,
          WorkingDir: '/layers',
          Labels: {
            ...(run.config.config?.Labels ?? {}),
            'io.buildpacks.builder.metadata': JSON.stringify(metadata),
            'io.buildpacks.buildpack.order': JSON.stringify(order),
            [LAYERS_LABEL]: JSON.stringify(bpLayers),
            'io.buildpacks.stack.id': STACK_ID,
            'io.buildpacks.builder.api': BUILDER_PLATFORM_API,
          },
        },
        rootfs: { type: 'layers', diff_ids: diffIds },
      },
      layers,
      'builder',
    );
    // builder.toml for `pack builder create`: the buildpacks as the .cnb files `rbp package` writes.
    fs.writeFileSync(
      path.join(partial, 'builder.toml'),
      `# The builder rbp wrote here, for \`pack builder create\`: run \`rbp package --out buildpacks\` beside this
# file, and push this layout's two images (skopeo copy oci:DIR:builder docker://REGISTRY/rbp-build,
# oci:DIR:run docker://REGISTRY/rbp-run), then name them below.
${stringify({
  description: metadata.description,
  buildpacks: AUTO_ORDER.map((r) => ({ uri: `buildpacks/rbp-${r}.cnb` })),
  order,
  lifecycle: { version: o.lifecycleVersion },
  build: { image: 'REGISTRY/rbp-build:bookworm' },
  run: { images: [{ image: 'REGISTRY/rbp-run:bookworm' }] },
})}`,
    );
    fs.rmSync(o.out, { recursive: true, force: true });
    fs.renameSync(partial, o.out);
    o.log.info(`builder: ${o.out} (OCI layout: tag builder, ${layers.length} layers; tag run, the run image), order ${AUTO_ORDER.join(' | ')}, lifecycle ${o.lifecycleVersion}`);
    return { builder: `${o.out}:builder`, run: `${o.out}:${RUN_IMAGE_REF}` };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(partial, { recursive: true, force: true });
  }
}
