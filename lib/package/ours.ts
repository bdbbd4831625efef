/**
 * `rbp package --out DIR`: our buildpacks as CNB buildpackages — DIR/rbp-<name>.cnb for each, and
 * DIR/rbp-auto.cnb, the composite `rbp/auto` whose order is rbp's automatic order (AUTO_ORDER: one
 * group per runtime, tried in that order), so a builder gets the same choice rbp makes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuildpackRef } from '../cnb/descriptor.ts';
import type { Logger } from '../log.ts';
import { AUTO_ORDER, ourBuildpack } from './our-buildpacks.ts';
import { writeBuildpackage, writeComposite } from './buildpackage.ts';
import { formatRef, parseImageRef, sibling } from './image-ref.ts';
import { extractArchive, OCI } from './oci-layout.ts';
import { pushImages } from './registry.ts';

export const AUTO_ID = 'rbp/auto';

/** The composite rbp/auto, written into a fresh folder under `dir`. */
export function autoBuildpack(members: BuildpackRef[], dir: string): BuildpackRef {
  // The members' version (they are released together), else the highest.
  const version = members
    .map((m) => m.descriptor.buildpack.version)
    .sort()
    .at(-1)!;
  const name = `runtime-buildpacks (${members.map((m) => m.descriptor.buildpack.id).join(', ')}, first that detects)`;
  return writeComposite(AUTO_ID, version, name, members, dir);
}

export async function packageOurs(outDir: string, log: Logger): Promise<string[]> {
  fs.mkdirSync(outDir, { recursive: true });
  const members = AUTO_ORDER.map((r) => ourBuildpack(r));
  const files: string[] = [];
  for (const [i, ref] of members.entries()) {
    const started = Date.now();
    const file = path.join(outDir, `rbp-${AUTO_ORDER[i]}.cnb`);
    await writeBuildpackage(ref, [], file);
    log.info(
      `${file}: ${ref.descriptor.buildpack.id}@${ref.descriptor.buildpack.version} (${(fs.statSync(file).size / 1e6).toFixed(1)} MB, ${Date.now() - started} ms)`,
    );
    files.push(file);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-auto-'));
  try {
    const auto = autoBuildpack(members, tmp);
    const file = path.join(outDir, 'rbp-auto.cnb');
    await writeBuildpackage(auto, members, file);
    log.info(`${file}: ${AUTO_ID}@${auto.descriptor.buildpack.version}, order ${AUTO_ORDER.join(' | ')} (${(fs.statSync(file).size / 1e6).toFixed(1)} MB)`);
    files.push(file);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return files;
}

/**
 * `rbp package --publish REF`: the composite rbp/auto (which holds the three) to REF, and each
 * buildpack beside it as `<REF's repository>-<name>` with REF's tag: what a kpack ClusterStore lists.
 */
export async function publishPackages(files: string[], ref: string, log: Logger): Promise<void> {
  const auto = parseImageRef(ref, '--publish', { push: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-publish-'));
  try {
    const targets = [];
    for (const file of files) {
      const name = path.basename(file, '.cnb').replace(/^rbp-/, '');
      const layout = path.join(tmp, name);
      await extractArchive(file, layout);
      targets.push({ layout, tag: 'latest', ref: name === 'auto' ? auto : sibling(auto, `-${name}`), family: OCI });
    }
    // rbp/auto last: its layers are then mounted from the others' repositories, not sent again.
    targets.sort((a, b) => Number(a.ref === auto) - Number(b.ref === auto));
    await pushImages(targets, log);
    log.info(`kpack ClusterStore sources: ${targets.map((t) => formatRef(t.ref)).join(', ')}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
