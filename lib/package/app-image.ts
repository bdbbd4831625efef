/**
 * `rbp build APP --out OUT --image DIR`: the built app as an OCI image layout, shaped as the
 * reference lifecycle's exporter shapes an app image, so podman can run it or skopeo push it:
 *   - the run image's layers, as they are;
 *   - the launcher (the reference lifecycle's cmd/launcher) at /cnb/lifecycle/launcher and one
 *     /cnb/process/<type> link per process, the entrypoint being the default process's link;
 *   - one layer per launch layer, at /layers/<escaped buildpack id>/<layer>/ (its .toml is not in
 *     the image: the lifecycle keeps layer metadata in the io.buildpacks.lifecycle.metadata label);
 *   - /layers/config/metadata.toml; the app at /workspace;
 *   - Env CNB_LAYERS_DIR=/layers, CNB_APP_DIR=/workspace, CNB_PLATFORM_API, PATH with /cnb/process
 *     first; the lifecycle's labels (io.buildpacks.lifecycle.metadata, io.buildpacks.build.metadata,
 *     io.buildpacks.project.metadata).
 * rbp builds at OUT's own path, and buildpacks write absolute paths (a process's command, a link
 * from the app to its modules layer): the image keeps them true with two links, OUT/layers →
 * /layers and OUT/workspace → /workspace, rather than rewriting files it does not own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { escapeId } from '../cnb/descriptor.ts';
import { value } from '../config/read.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { launchLayers } from '../platform/launcher.ts';
import { readLaunchMetadata } from '../platform/metadata.ts';
import { imageEnv, OciLayoutWriter, readLayout, REPRODUCIBLE_DATE, type Descriptor } from './oci-layout.ts';

export const LAYERS_DIR = '/layers';
export const APP_DIR = '/workspace';
export const PLATFORM_API = '0.13';

const toolCache = () => value(process.env, 'RBP_TOOLS_CACHE')!;

/** The run image: --run-image, else RBP_RUN_IMAGE, else the one scripts/tools/run-image.sh made. */
export function runImageLayout(given?: string): string {
  // The folder scripts/tools/run-image.sh writes (its suite and REVISION).
  const p = given ?? value(process.env, 'RBP_RUN_IMAGE') ?? path.join(toolCache(), 'run-image', 'bookworm-r2', 'layout');
  // scripts/tools/run-image.sh prints the layout's `oci-layout` file, as the others print an executable.
  return path.basename(p) === 'oci-layout' ? path.dirname(p) : p;
}

/** The reference launcher: beside RBP_TOOL_LIFECYCLE, else the one scripts/tools/lifecycle.sh made. */
export function referenceLauncher(): string {
  const lc = value(process.env, 'RBP_TOOL_LIFECYCLE');
  return lc ? path.join(path.dirname(lc), 'launcher') : path.join(toolCache(), 'lifecycle', '0.20.8', 'launcher');
}

export interface AppImageOptions {
  out: string;
  image: string;
  /** An OCI layout folder holding the run image (scripts/tools/run-image.sh makes one). */
  runImage: string;
  /** The reference lifecycle's launcher binary. */
  launcher: string;
  /** Its ref names in the layout (`--tag`); default `latest`. */
  tags?: string[];
  log: Logger;
}

function imageError(what: string, value: string, rule: string, fix: string): UserError {
  return new UserError({ id: 'platform/image/input', title: 'Cannot write the app image', seen: { what, value }, rule, fix });
}

export async function writeAppImage(o: AppImageOptions): Promise<{ layers: number; digest: string }> {
  const md = readLaunchMetadata(o.out);
  if (!md) throw imageError('OUT', o.out, 'An app image is made from a finished build (OUT/layers/config/metadata.toml).', 'Run rbp build first.');
  const runLayout = runImageLayout(o.runImage);
  let run;
  try {
    run = readLayout(runLayout);
  } catch (e) {
    throw imageError('--run-image', o.runImage, `The run image is an OCI image layout folder (${(e as Error).message}).`, 'Make one with scripts/tools/run-image.sh, or give another with --run-image DIR.');
  }
  if (!fs.existsSync(o.launcher)) throw imageError('launcher', o.launcher, 'The app image runs the reference lifecycle\'s launcher.', 'Build it with scripts/tools/lifecycle.sh and set RBP_TOOL_LIFECYCLE to the lifecycle binary it prints.');

  const out = path.resolve(o.out);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-image-'));
  const layoutDir = `${o.image}.partial-${process.pid}`;
  fs.rmSync(layoutDir, { recursive: true, force: true });
  try {
    const w = new OciLayoutWriter(layoutDir);
    const layers: Descriptor[] = [];
    const diffIds: string[] = [];
    run.manifest.layers.forEach((l, i) => {
      w.adoptBlob(runLayout, l);
      layers.push(l);
      diffIds.push(run.config.rootfs.diff_ids[i]!);
    });
    const add = async (root: string, prefix?: string) => {
      const l = await w.addLayer(root, prefix);
      layers.push(l);
      diffIds.push(l.diffID);
      return l;
    };

    // The launcher and one /cnb/process/<type> link per process.
    const cnb = path.join(tmp, 'launcher');
    fs.mkdirSync(path.join(cnb, 'cnb', 'lifecycle'), { recursive: true });
    fs.copyFileSync(o.launcher, path.join(cnb, 'cnb', 'lifecycle', 'launcher'));
    fs.chmodSync(path.join(cnb, 'cnb', 'lifecycle', 'launcher'), 0o755);
    fs.mkdirSync(path.join(cnb, 'cnb', 'process'));
    for (const p of md.processes) fs.symlinkSync('../lifecycle/launcher', path.join(cnb, 'cnb', 'process', p.type));
    const launcherLayer = await add(cnb);

    // One image layer per launch layer, as the exporter writes them.
    const bpLayers: Record<string, Record<string, { sha: string; launch: true }>> = {};
    for (const bp of md.buildpacks) {
      const bpDir = path.join(out, 'layers', escapeId(bp.id));
      for (const dir of launchLayers(bpDir)) {
        const name = path.basename(dir);
        const root = path.join(tmp, 'bp', escapeId(bp.id), name);
        // As the lifecycle's exporter: the layer's folder only; its .toml lives in the image label.
        copyTree(dir, path.join(root, name));
        const l = await w.addLayer(root, `${LAYERS_DIR.slice(1)}/${escapeId(bp.id)}`);
        layers.push(l);
        diffIds.push(l.diffID);
        (bpLayers[bp.id] ??= {})[name] = { sha: l.diffID, launch: true };
      }
    }

    // /layers/config/metadata.toml, the buildpacks' folders, and the links that keep OUT's paths true.
    const cfg = path.join(tmp, 'config');
    fs.mkdirSync(path.join(cfg, 'layers', 'config'), { recursive: true });
    fs.copyFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), path.join(cfg, 'layers', 'config', 'metadata.toml'));
    for (const bp of md.buildpacks) {
      const d = path.join(cfg, 'layers', escapeId(bp.id));
      fs.mkdirSync(d, { recursive: true });
      const store = path.join(out, 'layers', escapeId(bp.id), 'store.toml');
      if (fs.existsSync(store)) fs.copyFileSync(store, path.join(d, 'store.toml'));
    }
    if (out !== LAYERS_DIR.slice(0, -'/layers'.length)) {
      fs.mkdirSync(path.join(cfg, out.slice(1)), { recursive: true });
      fs.symlinkSync(LAYERS_DIR, path.join(cfg, out.slice(1), 'layers'));
      fs.symlinkSync(APP_DIR, path.join(cfg, out.slice(1), 'workspace'));
    }
    const configLayer = await add(cfg);

    // The app.
    const app = path.join(tmp, 'app');
    copyTree(path.join(out, 'workspace'), path.join(app, 'workspace'));
    const appLayer = await add(app);

    const dflt = md['buildpack-default-process-type'];
    const { path: runPath, rest: runEnv } = imageEnv(run.config);
    const labels = {
      ...(run.config.config?.Labels ?? {}),
      'io.buildpacks.lifecycle.metadata': JSON.stringify({
        app: [{ sha: appLayer.diffID }],
        config: { sha: configLayer.diffID },
        launcher: { sha: launcherLayer.diffID },
        buildpacks: md.buildpacks.map((b) => ({ key: b.id, version: b.version, layers: bpLayers[b.id] ?? {} })),
        runImage: { topLayer: run.config.rootfs.diff_ids.at(-1), reference: run.manifest.config.digest },
      }),
      'io.buildpacks.build.metadata': JSON.stringify({
        processes: md.processes.map((p) => ({ type: p.type, command: p.command, args: p.args, direct: p.direct, buildpackID: p['buildpack-id'] })),
        buildpacks: md.buildpacks.map((b) => ({ id: b.id, version: b.version })),
        launcher: { version: '', source: { git: { repository: 'github.com/buildpacks/lifecycle' } } },
      }),
      'io.buildpacks.project.metadata': '{}',
    };
    for (const l of md.labels ?? []) (labels as Record<string, string>)[l.key] = l.value;
    const { manifest } = w.finish(
      {
        architecture: run.config.architecture,
        os: run.config.os,
        created: REPRODUCIBLE_DATE.toISOString(),
        config: {
          Env: [...runEnv, `CNB_LAYERS_DIR=${LAYERS_DIR}`, `CNB_APP_DIR=${APP_DIR}`, `CNB_PLATFORM_API=${PLATFORM_API}`, `PATH=/cnb/process:${runPath}`],
          Entrypoint: [dflt ? `/cnb/process/${dflt}` : '/cnb/lifecycle/launcher'],
          WorkingDir: APP_DIR,
          Labels: labels,
          ...({ ExposedPorts: { '8080/tcp': {} } } as object),
        },
        rootfs: { type: 'layers', diff_ids: diffIds },
      },
      layers,
      o.tags?.length ? o.tags : undefined,
    );
    fs.rmSync(o.image, { recursive: true, force: true });
    fs.renameSync(layoutDir, o.image);
    o.log.info(`app image: ${o.image}${o.tags?.length ? ` tagged ${o.tags.join(', ')}` : ''} (OCI layout, ${layers.length} layers, ${manifest.digest.slice(0, 19)}…, entrypoint ${dflt ? `/cnb/process/${dflt}` : 'the launcher'})`);
    return { layers: layers.length, digest: manifest.digest };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(layoutDir, { recursive: true, force: true });
  }
}

/** A copy of a folder for a layer's staging; links stay as written (absolute ones included). */
function copyTree(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
}
