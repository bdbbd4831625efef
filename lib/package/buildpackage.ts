/**
 * CNB buildpackages (the distribution spec; `pack buildpack package --format file`): an OCI image
 * whose every layer holds one buildpack at `/cnb/buildpacks/<escaped id>/<version>/`, labelled
 *   io.buildpacks.buildpackage.metadata  the entry buildpack: id, version, name, homepage, targets
 *   io.buildpacks.buildpack.layers       every buildpack inside: id → version → api, targets,
 *                                        order (composites), layerDiffID, homepage, name
 * written as an OCI layout folder or its uncompressed tar archive (`.cnb`), and read back so that
 * `rbp build --buildpack x.cnb` runs what a platform would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'smol-toml';
import * as tar from 'tar';
import { escapeId, ociArch, readDescriptor, type BuildpackDescriptor, type BuildpackRef } from '../cnb/descriptor.ts';
import { UserError } from '../errors.ts';
import { archiveLayout, OciLayoutWriter, readLayout, REPRODUCIBLE_DATE, type Layer } from './oci-layout.ts';

export const BUILDPACKAGE_LABEL = 'io.buildpacks.buildpackage.metadata';
export const LAYERS_LABEL = 'io.buildpacks.buildpack.layers';
export const DISTRIBUTION_API_LABEL = 'io.buildpacks.distribution.api';
export const DISTRIBUTION_API = '0.3';

interface LayerInfo {
  /** As buildpack.toml gives it (none when it names none: JSON leaves the key out). */
  api?: string;
  targets?: BuildpackDescriptor['targets'];
  order?: BuildpackDescriptor['order'];
  layerDiffID: string;
  homepage?: string;
  name?: string;
}
export type LayersLabel = Record<string, Record<string, LayerInfo>>;

/** The entry of one buildpack in the io.buildpacks.buildpack.layers label, as pack writes it. */
export function addLayerInfo(info: LayersLabel, d: BuildpackDescriptor, layerDiffID: string): void {
  (info[d.buildpack.id] ??= {})[d.buildpack.version] = {
    api: d.api,
    ...(d.targets ? { targets: d.targets } : {}),
    ...(d.order ? { order: d.order } : {}),
    layerDiffID,
    ...(d.buildpack.homepage ? { homepage: d.buildpack.homepage } : {}),
    ...(d.buildpack.name ? { name: d.buildpack.name } : {}),
  };
}

const key = (d: BuildpackDescriptor) => `${d.buildpack.id}@${d.buildpack.version}`;

/** Copies a buildpack folder into `<root>/cnb/buildpacks/<escaped id>/<version>/`. */
export function stageBuildpack(ref: BuildpackRef, root: string): void {
  const { id, version } = ref.descriptor.buildpack;
  const dest = path.join(root, 'cnb', 'buildpacks', escapeId(id), version);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.cpSync(ref.dir, dest, { recursive: true, dereference: true, preserveTimestamps: false });
}

/**
 * Writes the buildpackage of `entry` (with `components`, the buildpacks a composite entry's order
 * names) to `out`: an archive when `out` ends in `.cnb`, else a layout folder.
 */
export async function writeBuildpackage(entry: BuildpackRef, components: BuildpackRef[], out: string): Promise<{ layers: number; file: string }> {
  const all = [entry, ...components.filter((c) => key(c.descriptor) !== key(entry.descriptor))];
  const asArchive = out.endsWith('.cnb');
  const layoutDir = asArchive ? fs.mkdtempSync(path.join(path.dirname(path.resolve(out)), '.rbp-package-')) : out;
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-package-stage-'));
  try {
    if (!asArchive) fs.rmSync(layoutDir, { recursive: true, force: true });
    const writer = new OciLayoutWriter(layoutDir);
    const layers: Layer[] = [];
    const info: LayersLabel = {};
    for (const ref of all) {
      const root = path.join(staging, escapeId(ref.descriptor.buildpack.id));
      stageBuildpack(ref, root);
      const layer = await writer.addLayer(root, undefined, { normalizeModes: true });
      layers.push(layer);
      addLayerInfo(info, ref.descriptor, layer.diffID);
    }
    const d = entry.descriptor;
    const metadata = {
      id: d.buildpack.id,
      version: d.buildpack.version,
      ...(d.buildpack.name ? { name: d.buildpack.name } : {}),
      ...(d.buildpack.homepage ? { homepage: d.buildpack.homepage } : {}),
      targets: d.targets ?? components.find((c) => c.descriptor.targets)?.descriptor.targets ?? [{ os: 'linux' }],
    };
    writer.finish(
      {
        architecture: ociArch(),
        os: 'linux',
        created: REPRODUCIBLE_DATE.toISOString(),
        config: {
          Labels: { [BUILDPACKAGE_LABEL]: JSON.stringify(metadata), [LAYERS_LABEL]: JSON.stringify(info), [DISTRIBUTION_API_LABEL]: DISTRIBUTION_API },
        },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffID) },
      },
      layers,
    );
    if (asArchive) await archiveLayout(layoutDir, out);
    return { layers: layers.length, file: out };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    if (asArchive) fs.rmSync(layoutDir, { recursive: true, force: true });
  }
}

/** An order that tries each of `members` alone, in turn: one group per buildpack. */
export function oneGroupEach(members: BuildpackRef[]): { group: { id: string; version: string }[] }[] {
  return members.map((m) => ({ group: [{ id: m.descriptor.buildpack.id, version: m.descriptor.buildpack.version }] }));
}

/** Writes a composite buildpack folder (buildpack.toml only) into `dir`: its order tries each of `members`, one group each. */
export function writeComposite(id: string, version: string, name: string, members: BuildpackRef[], dir: string): BuildpackRef {
  const descriptor: BuildpackDescriptor = {
    api: members[0]?.descriptor.api ?? '0.10',
    buildpack: { id, version, name, homepage: members[0]?.descriptor.buildpack.homepage },
    order: oneGroupEach(members),
  };
  fs.mkdirSync(dir, { recursive: true });
  // The JSON round trip drops undefined fields, which TOML cannot write.
  fs.writeFileSync(path.join(dir, 'buildpack.toml'), stringify(JSON.parse(JSON.stringify(descriptor)) as Record<string, unknown>));
  return readDescriptor(dir);
}

const unpacked: string[] = [];
let cleanupRegistered = false;

function invalid(p: string, why: string): UserError {
  return new UserError({
    id: 'platform/buildpackage/invalid',
    title: 'Not a CNB buildpackage',
    seen: { what: '--buildpack', value: p },
    rule: `A buildpackage is an OCI image layout (a folder, or its tar archive such as x.cnb) labelled ${BUILDPACKAGE_LABEL}, each layer holding /cnb/buildpacks/<id>/<version>/; here: ${why}.`,
    fix: 'Give a buildpack folder, or a buildpackage written by `rbp package` or `pack buildpack package --format file`.',
  });
}

/**
 * Unpacks a buildpackage into a private temporary folder (removed when rbp exits) and returns the
 * folder of its entry buildpack, laid out as a platform does (`<root>/<escaped id>/<version>/`),
 * so that a composite finds its components beside it.
 */
export function openBuildpackage(p: string): string {
  const abs = path.resolve(p);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-buildpackage-'));
  unpacked.push(work);
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.on('exit', () => unpacked.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  }
  let layoutDir = abs;
  if (fs.statSync(abs).isFile()) {
    layoutDir = path.join(work, 'layout');
    fs.mkdirSync(layoutDir);
    try {
      tar.x({ file: abs, cwd: layoutDir, sync: true, preserveOwner: false });
    } catch (e) {
      throw invalid(p, `it is not a tar archive (${(e as Error).message})`);
    }
  }
  let image;
  try {
    image = readLayout(layoutDir);
  } catch (e) {
    throw invalid(p, `its OCI layout cannot be read (${(e as Error).message})`);
  }
  const label = image.config.config?.Labels?.[BUILDPACKAGE_LABEL];
  if (!label) throw invalid(p, `the image has no ${BUILDPACKAGE_LABEL} label`);
  let meta: { id?: string; version?: string };
  try {
    meta = JSON.parse(label) as { id?: string; version?: string };
  } catch {
    throw invalid(p, `the ${BUILDPACKAGE_LABEL} label is not JSON`);
  }
  const root = path.join(work, 'root');
  fs.mkdirSync(root);
  for (const file of image.layerFiles) tar.x({ file, cwd: root, sync: true, preserveOwner: false });
  const entry = path.join(root, 'cnb', 'buildpacks', escapeId(meta.id ?? ''), meta.version ?? '');
  if (!meta.id || !meta.version || !fs.existsSync(path.join(entry, 'buildpack.toml'))) {
    throw invalid(p, `no layer holds /cnb/buildpacks/${escapeId(meta.id ?? '?')}/${meta.version ?? '?'}/buildpack.toml, the entry buildpack the label names`);
  }
  return entry;
}
