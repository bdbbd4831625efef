/**
 * The reference CNB lifecycle as the distribution formats carry it:
 *   - /cnb/lifecycle/ of a builder and of the lifecycle image: `lifecycle`, `launcher` and one link
 *     per phase, as `pack builder create` lays it out;
 *   - the release archive `lifecycle-v<version>+linux.<arch>.tgz` that builder.toml names by `uri`
 *     (`lifecycle.toml` at its root, the programs under `lifecycle/`), so pack needs no download;
 *   - the labels of `buildpacksio/lifecycle` (version, APIs), which pack reads on a lifecycle image.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { stringify } from 'smol-toml';
import * as tar from 'tar';
import { REPRODUCIBLE_DATE } from './oci-layout.ts';

export const PHASES = ['detector', 'analyzer', 'restorer', 'builder', 'exporter', 'creator', 'rebaser', 'extender'];

interface ApiSet {
  deprecated: string[];
  supported: string[];
}

/** The APIs of lifecycle 0.20 (its api/apis.go): what pack and kpack match buildpacks and platforms against. */
export const LIFECYCLE_APIS: { buildpack: ApiSet; platform: ApiSet } = {
  buildpack: { deprecated: [], supported: ['0.7', '0.8', '0.9', '0.10', '0.11'] },
  platform: { deprecated: [], supported: ['0.7', '0.8', '0.9', '0.10', '0.11', '0.12', '0.13', '0.14'] },
};

/** `lifecycle.toml`, the lifecycle's descriptor, as its release archive carries it. */
export function lifecycleDescriptor(version: string): string {
  return stringify({
    apis: LIFECYCLE_APIS,
    api: { platform: LIFECYCLE_APIS.platform.supported[0]!, buildpack: LIFECYCLE_APIS.buildpack.supported[0]! },
    lifecycle: { version },
  });
}

/** `<root>/cnb/lifecycle/`: the programs of `lifecycleDir` (scripts/tools/lifecycle.sh) and a link per phase. */
export function stageLifecycle(lifecycleDir: string, root: string): void {
  const lc = path.join(root, 'cnb', 'lifecycle');
  fs.mkdirSync(lc, { recursive: true });
  for (const bin of ['lifecycle', 'launcher']) {
    fs.copyFileSync(path.join(lifecycleDir, bin), path.join(lc, bin));
    fs.chmodSync(path.join(lc, bin), 0o755);
  }
  for (const p of PHASES) fs.symlinkSync('lifecycle', path.join(lc, p));
}

/** The release archive's file name: `lifecycle-v0.20.8+linux.x86-64.tgz`. */
export function lifecycleArchiveName(version: string, arch: string): string {
  return `lifecycle-v${version}+linux.${arch === 'amd64' ? 'x86-64' : arch}.tgz`;
}

/** Writes the release archive of the lifecycle in `lifecycleDir` to `file`. */
export async function writeLifecycleArchive(lifecycleDir: string, version: string, file: string, stagingDir: string): Promise<void> {
  const root = path.join(stagingDir, 'lifecycle-archive');
  stageLifecycle(lifecycleDir, root);
  // The archive's layout: lifecycle.toml and lifecycle/<program>, as upstream's release.
  const top = path.join(root, 'top');
  fs.mkdirSync(top);
  fs.renameSync(path.join(root, 'cnb', 'lifecycle'), path.join(top, 'lifecycle'));
  fs.writeFileSync(path.join(top, 'lifecycle.toml'), lifecycleDescriptor(version), { mode: 0o644 });
  const programs = fs.readdirSync(path.join(top, 'lifecycle')).sort();
  const entries = ['lifecycle.toml', 'lifecycle', ...programs.map((n) => `lifecycle/${n}`)];
  await pipeline(
    tar.c({ cwd: top, portable: true, mtime: REPRODUCIBLE_DATE, noDirRecurse: true, noPax: true }, entries) as unknown as NodeJS.ReadableStream,
    zlib.createGzip({ level: 6 }),
    fs.createWriteStream(file),
  );
}

/** The labels of a lifecycle image (buildpacksio/lifecycle's tools/image). */
export function lifecycleImageLabels(version: string): Record<string, string> {
  return {
    'io.buildpacks.lifecycle.version': version,
    'io.buildpacks.lifecycle.apis': JSON.stringify(LIFECYCLE_APIS),
    'io.buildpacks.builder.metadata': JSON.stringify({
      lifecycle: { version },
      api: { buildpack: LIFECYCLE_APIS.buildpack.supported[0], platform: LIFECYCLE_APIS.platform.supported[0] },
    }),
  };
}
