/**
 * `rbp build`: detect → restore → build → export, like the reference lifecycle's creator, into a
 * directory instead of an image:
 *   OUT/workspace                 the app after the build (CNB_APP_DIR)
 *   OUT/layers/<bp>/<layer>(.toml) launch layers (CNB_LAYERS_DIR), store.toml
 *   OUT/layers/config/metadata.toml processes and buildpacks
 *   OUT/rbp.toml                  task, instance size, layer states, timings
 *   <OUT>.rbp-cache/<bp>/<layer>(.toml) cache=true layers (or --cache DIR)
 * The build happens at OUT's own path, so absolute paths written by buildpacks stay true at launch;
 * the previous OUT waits aside and comes back untouched if anything fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { applyLayer, writePlatformEnv, type EnvMap } from '../cnb/env.ts';
import { EXIT } from '../cnb/exit.ts';
import { readLaunchToml, type Label } from '../cnb/launch.ts';
import { readLayerToml } from '../cnb/layers.ts';
import { readUnmet, writeBuildpackPlan } from '../cnb/plan.ts';
import { validateSbomFiles } from '../cnb/sbom.ts';
import { writeToml } from '../cnb/toml.ts';
import { UserError } from '../errors.ts';
import { formatDuration, type Logger } from '../log.ts';
import { bpKey, detect, planFor, type PhaseEnv } from './detect.ts';
import { buildProcessEnv, filteredHostEnv, operatorEnv } from './env.ts';
import { isDir, linkTree, moveTree, rmrf } from './fsops.ts';
import { writeLaunchMetadata, writeRbpInfo, type ExportedProcess, type LaunchMetadata } from './metadata.ts';
import type { Order } from './order.ts';
import { targetEnv } from './target.ts';
import type { PlanEntry } from './resolve.ts';

export interface BuildOptions {
  appDir: string;
  outDir: string;
  order: Order;
  cacheDir?: string;
  clearCache?: boolean;
  userEnv: EnvMap;
  /** Service binding directories (each with a `type` file), given to buildpacks as `<platform>/bindings/<name>`. */
  bindings?: string[];
  task?: string;
  instance: string;
  instanceMemory: number;
  log: Logger;
}

/** created: built in this build; restored: kept from the cache; reused: kept from the previous build's launch layer. */
export type LayerState = 'created' | 'reused' | 'restored';

export interface BuildResult {
  code: number;
  layers: { buildpack: string; name: string; state: LayerState; launch: boolean; cache: boolean }[];
  phases: Record<string, number>;
}

class PhaseError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const NOT_LAYERS = new Set(['launch.toml', 'build.toml', 'store.toml']);

/** Layer names in a buildpack's layers dir, from their `<layer>.toml`, alphabetically. */
function layerNames(dir: string): string[] {
  if (!isDir(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.toml') && !NOT_LAYERS.has(f))
    .map((f) => f.slice(0, -'.toml'.length))
    .sort();
}

/**
 * Which folder this is: inode and birth time, since a folder removed and made again often gets the
 * same inode number back.
 */
function identity(p: string): string | undefined {
  try {
    const st = fs.statSync(p, { bigint: true });
    return `${st.ino}:${st.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

export async function build(opts: BuildOptions): Promise<BuildResult> {
  const { log } = opts;
  const appDir = path.resolve(opts.appDir);
  const out = path.resolve(opts.outDir);
  const phases: Record<string, number> = {};
  const result: BuildResult = { code: EXIT.ok, layers: [], phases };
  const timed = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
    log.section(name[0]!.toUpperCase() + name.slice(1));
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      phases[name] = performance.now() - t0;
    }
  };

  if (!isDir(appDir)) {
    throw new UserError({
      id: 'platform/app/not-found',
      title: 'Application directory not found',
      seen: { what: 'APP', value: opts.appDir },
      rule: 'rbp build takes the directory of the application source.',
      fix: 'Give the path of an existing directory.',
    });
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-build-'));
  const platformDir = path.join(tmp, 'platform');
  writePlatformEnv(platformDir, opts.userEnv);
  linkBindings(platformDir, opts.bindings ?? []);
  const operator = { RBP_LAUNCHER_NODE: process.env.RBP_LAUNCHER_NODE ?? process.execPath, ...operatorEnv(), RBP_INSTANCE_SIZE: opts.instance, RBP_INSTANCE_MEMORY: String(opts.instanceMemory) };
  const penv: PhaseEnv = { base: filteredHostEnv(), user: opts.userEnv, operator, platformDir };

  const prev = `${out}.rbp-previous`;
  // The cache sits beside OUT, not in it: restore moves cached folders out of it, and a failed
  // build must leave OUT exactly as it was.
  const cacheDir = opts.cacheDir ? path.resolve(opts.cacheDir) : defaultCacheDir(out);
  const newCache = `${cacheDir}.rbp-new`;
  let movedAside = false;
  /** Folders moved from the previous build into this one: moved back if the build fails. */
  const fromPrevious: [from: string, to: string][] = [];
  /** Cached folders moved into this build: gone from the cache if it fails (their contents may have changed). */
  const takenFromCache: string[] = [];

  try {
    const detected = await timed('detect', () => detect(opts.order, appDir, penv, log));
    if (detected.code !== EXIT.ok || !detected.group) {
      log.line(detected.code === EXIT.detectError ? 'ERROR: detection failed with a buildpack error' : 'ERROR: no buildpack group passed detection');
      result.code = detected.code;
      return result;
    }
    const group = detected.group;
    let entries: PlanEntry<BuildpackRef>[] = detected.entries ?? [];
    log.info(`group: ${group.map(bpKey).join(', ')}`);

    // A crash between the two renames of an earlier run leaves only the previous build: take it back.
    if (!fs.existsSync(out) && fs.existsSync(prev)) fs.renameSync(prev, out);
    rmrf(prev);
    if (fs.existsSync(out)) {
      fs.renameSync(out, prev);
      movedAside = true;
    }
    const cacheSrc = opts.clearCache ? undefined : cacheDir;
    rmrf(newCache);
    const workspace = path.join(out, 'workspace');
    const layersRoot = path.join(out, 'layers');
    fs.mkdirSync(layersRoot, { recursive: true });
    copyApp(appDir, workspace, [out, prev, cacheDir, newCache]);

    const restoredIds = new Map<string, string | undefined>();
    await timed('restore', () => {
      if (opts.clearCache) log.info('cache cleared (--clear-cache): nothing restored');
      for (const bp of group) {
        const esc = escapeId(bp.descriptor.buildpack.id);
        const dir = path.join(layersRoot, esc);
        fs.mkdirSync(dir, { recursive: true });
        const restoredHere: string[] = [];
        const fromCache = cacheSrc ? path.join(cacheSrc, esc) : undefined;
        for (const name of fromCache ? layerNames(fromCache) : []) {
          const t = readLayerToml(path.join(fromCache!, `${name}.toml`));
          if (!t?.types.cache) continue;
          // [types] is never restored: a buildpack must say again what the layer is.
          writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
          const cached = path.join(fromCache!, name);
          if (isDir(cached)) {
            // A launch layer's cached folder shares its files with the previous OUT: link them. A
            // cache-only folder is this build's to change: move it (one rename, whatever its size).
            if (t.types.launch) linkTree(cached, path.join(dir, name));
            else {
              moveTree(cached, path.join(dir, name));
              takenFromCache.push(path.join(fromCache!, name));
            }
            restoredIds.set(`${esc}/${name}`, identity(path.join(dir, name)));
            restoredHere.push(name);
          }
        }
        const prevDir = path.join(prev, 'layers', esc);
        for (const name of movedAside ? layerNames(prevDir) : []) {
          const t = readLayerToml(path.join(prevDir, `${name}.toml`));
          // Metadata-only restore is for launch=true, cache=false layers; a build=true one must be
          // rebuilt (its contents are needed during the build), so nothing of it comes back.
          if (!t?.types.launch || t.types.cache || t.types.build || fs.existsSync(path.join(dir, `${name}.toml`))) continue;
          writeToml(path.join(dir, `${name}.toml`), { metadata: t.metadata });
          restoredHere.push(`${name} (metadata)`);
        }
        if (movedAside && fs.existsSync(path.join(prevDir, 'store.toml'))) fs.copyFileSync(path.join(prevDir, 'store.toml'), path.join(dir, 'store.toml'));
        log.info(`${bpKey(bp)}: ${restoredHere.length ? `restored ${restoredHere.join(', ')}` : 'nothing to restore'}`);
      }
    });

    const processes = new Map<string, ExportedProcess>();
    const labels = new Map<string, Label>();
    let defaultType: string | undefined;
    await timed('build', async () => {
      const buildEnv: EnvMap = { ...penv.base };
      for (const bp of group) {
        const id = bp.descriptor.buildpack.id;
        const esc = escapeId(id);
        const layersDir = path.join(layersRoot, esc);
        const planPath = path.join(tmp, `${esc}-plan.toml`);
        const bpPlan = planFor(entries, bp);
        writeBuildpackPlan(planPath, { entries: bpPlan });
        log.subsection(bpKey(bp));
        const t0 = performance.now();
        const env = buildProcessEnv({
          base: buildEnv,
          user: opts.userEnv,
          operator,
          clearEnv: bp.descriptor.buildpack['clear-env'] === true,
          cnb: { CNB_LAYERS_DIR: layersDir, CNB_PLATFORM_DIR: platformDir, CNB_BP_PLAN_PATH: planPath, CNB_BUILDPACK_DIR: bp.dir, ...targetEnv() },
        });
        const child = execa(path.join(bp.dir, 'bin', 'build'), [layersDir, platformDir, planPath], {
          cwd: workspace,
          env,
          extendEnv: false,
          reject: false,
          stdin: 'ignore',
          stdout: 'pipe',
          stderr: 'pipe',
          buffer: false,
        });
        child.stdout?.on('data', (d: Buffer) => log.raw(d));
        child.stderr?.on('data', (d: Buffer) => log.raw(d));
        const r = await child;
        if (r.exitCode !== 0) {
          throw new PhaseError(EXIT.buildFailed, `${bpKey(bp)} failed (exit ${r.exitCode ?? r.signal}) after ${formatDuration(performance.now() - t0)}`);
        }
        // Entries this buildpack met leave the plan; [[unmet]] ones go on to the next provider.
        let unmet: string[];
        try {
          unmet = readUnmet(path.join(layersDir, 'build.toml'));
        } catch (e) {
          throw new PhaseError(EXIT.buildFailed, `${bpKey(bp)}: ${(e as Error).message}`);
        }
        for (const u of unmet) if (!bpPlan.some((e) => e.name === u)) throw new PhaseError(EXIT.buildFailed, `${bpKey(bp)}: build.toml [[unmet]] ${u} is not in its plan`);
        const met = new Set(bpPlan.map((e) => e.name).filter((n) => !unmet.includes(n)));
        entries = entries.filter((e) => !e.requires.some((r) => met.has(r.name)));

        for (const name of layerNames(layersDir)) {
          let t;
          try {
            t = readLayerToml(path.join(layersDir, `${name}.toml`));
          } catch (e) {
            throw new PhaseError(EXIT.buildFailed, `${bpKey(bp)}: ${(e as Error).message}`);
          }
          if (!t) continue;
          const dir = path.join(layersDir, name);
          if (!t.types.launch && !t.types.build && !t.types.cache) {
            if (isDir(dir)) fs.renameSync(dir, `${dir}.ignore`);
            continue;
          }
          // build=true layers are seen by the buildpacks that come after, never by their writer.
          if (t.types.build && isDir(dir)) applyLayer(buildEnv, dir, 'build');
        }
        let launch;
        try {
          validateSbomFiles(layersDir, bp.descriptor.buildpack['sbom-formats']);
          launch = readLaunchToml(path.join(layersDir, 'launch.toml'));
        } catch (e) {
          throw new PhaseError(EXIT.buildFailed, `${bpKey(bp)}: ${(e as Error).message}`);
        }
        for (const l of launch?.labels ?? []) labels.set(l.key, l);
        for (const p of launch?.processes ?? []) {
          if (defaultType === p.type && !p.default) {
            log.warn(`${bpKey(bp)} redefines process ${p.type} without default = true: there is no default process any more`);
            defaultType = undefined;
          }
          if (p.default) defaultType = p.type;
          processes.set(p.type, {
            type: p.type,
            command: p.command,
            args: p.args ?? [],
            direct: true,
            'buildpack-id': id,
            ...(p['working-dir'] ? { 'working-dir': p['working-dir'] } : {}),
          });
        }
        log.info(`done in ${formatDuration(performance.now() - t0)}`);
      }
    });

    const exportStart = performance.now();
    await timed('export', () => {
      if (opts.task) {
        processes.set('task', { type: 'task', command: ['/bin/sh', '-c', opts.task], args: [], direct: true, 'buildpack-id': 'rbp/platform' });
        defaultType = 'task';
      }
      fs.mkdirSync(newCache, { recursive: true });
      for (const bp of group) {
        const esc = escapeId(bp.descriptor.buildpack.id);
        const dir = path.join(layersRoot, esc);
        for (const name of layerNames(dir)) {
          const t = readLayerToml(path.join(dir, `${name}.toml`))!;
          const layerDir = path.join(dir, name);
          const key = `${esc}/${name}`;
          // Kept from the cache when the restored folder is still the same folder; a buildpack that
          // rebuilds a layer removes and recreates it.
          let state: LayerState = restoredIds.has(key) && restoredIds.get(key) === identity(layerDir) ? 'restored' : 'created';
          if (t.types.launch && !isDir(layerDir)) {
            if (t.types.cache) throw new PhaseError(EXIT.exportFailed, `layer ${key} has cache = true but has no contents`);
            const prevLayer = path.join(prev, 'layers', esc, name);
            if (!isDir(prevLayer)) throw new PhaseError(EXIT.exportFailed, `cannot reuse layer ${key}: the previous build has no such layer`);
            moveTree(prevLayer, layerDir);
            fromPrevious.push([prevLayer, layerDir]);
            state = 'reused';
          }
          if (t.types.cache) {
            if (isDir(layerDir)) {
              const dst = path.join(newCache, esc, name);
              fs.mkdirSync(path.dirname(dst), { recursive: true });
              if (t.types.launch) linkTree(layerDir, dst);
              else moveTree(layerDir, dst);
              writeToml(path.join(newCache, esc, `${name}.toml`), { types: t.types, metadata: t.metadata });
            } else log.warn(`layer ${key} has cache = true but no contents: not cached`);
          }
          if (!t.types.launch) {
            // Not part of the app: its folder, toml and SBOM (a build SBOM for the lifecycle) go.
            rmrf(layerDir);
            for (const f of fs.readdirSync(dir)) if (f === `${name}.toml` || f.startsWith(`${name}.sbom.`)) rmrf(path.join(dir, f));
          }
          if (t.types.launch || t.types.cache) result.layers.push({ buildpack: bp.descriptor.buildpack.id, name, state, launch: t.types.launch, cache: t.types.cache });
        }
        for (const f of fs.readdirSync(dir)) {
          if (f.endsWith('.ignore') || f === 'launch.toml' || f === 'build.toml' || f.startsWith('build.sbom.')) rmrf(path.join(dir, f));
        }
      }
      const md: LaunchMetadata = {
        ...(defaultType ? { 'buildpack-default-process-type': defaultType } : {}),
        buildpacks: group.map((g) => ({ id: g.descriptor.buildpack.id, version: g.descriptor.buildpack.version, api: g.descriptor.api })),
        processes: [...processes.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)), // byte order, as the lifecycle
        labels: [...labels.values()],
      };
      writeLaunchMetadata(out, md);
      writeRbpInfo(out, {
        app: appDir,
        instance: opts.instance,
        ...(opts.task ? { task: opts.task } : {}),
        'built-at': new Date().toISOString(),
        'env-names': Object.keys(opts.userEnv).sort(),
        layers: result.layers.map((l) => ({ buildpack: l.buildpack, name: l.name, state: l.state })),
        // Export is still running: its time is what it took up to here.
        timings: { ...phases, export: performance.now() - exportStart },
      });
      // The new cache holds exactly this build's cached layers.
      rmrf(cacheDir);
      fs.renameSync(newCache, cacheDir);
      rmrf(prev);
      movedAside = false;
      for (const p of md.processes) log.info(`process ${p.type}${p.type === defaultType ? ' (default)' : ''}: ${[...p.command, ...p.args].join(' ')}`);
    });
    summarize(result, log);
    return result;
  } catch (e) {
    // Leave OUT as it was: what was moved from it goes back, and the cache no longer claims folders
    // this build took from it.
    for (const [from, to] of fromPrevious.reverse()) if (isDir(to)) moveTree(to, from);
    rmrf(out);
    if (movedAside) fs.renameSync(prev, out);
    rmrf(newCache);
    for (const taken of takenFromCache) {
      rmrf(taken);
      rmrf(`${taken}.toml`);
    }
    if (e instanceof PhaseError) {
      log.line(`ERROR: ${e.message}`);
      log.line(`The previous build in ${out} is unchanged.`);
      result.code = e.code;
      return result;
    }
    throw e;
  } finally {
    rmrf(tmp);
  }
}

/**
 * Service bindings (CNB platform spec): `<platform>/bindings/<name>/` holds a `type` file and one
 * file per secret. They are linked, not copied, so their secrets are written nowhere new.
 */
function linkBindings(platformDir: string, dirs: string[]): void {
  if (!dirs.length) return;
  const root = path.join(platformDir, 'bindings');
  fs.mkdirSync(root, { recursive: true });
  for (const dir of dirs) {
    const abs = path.resolve(dir);
    const name = path.basename(abs);
    const problem = !isDir(abs) ? 'is not a directory' : !fs.existsSync(path.join(abs, 'type')) ? 'has no `type` file' : fs.existsSync(path.join(root, name)) ? `has the same name as another binding (${name})` : undefined;
    if (problem) {
      throw new UserError({
        id: 'platform/binding/invalid',
        title: 'Invalid service binding',
        seen: { what: '--binding', value: dir },
        rule: `A binding is a directory named after the binding, holding a \`type\` file and one file per value; this one ${problem}.`,
        fix: 'Point --binding at such a directory, for example bindings/git-deploy with the files type (ssh-key) and ssh-privatekey.',
      });
    }
    fs.symlinkSync(abs, path.join(root, name));
  }
}

/** `<OUT>.rbp-cache`, beside OUT. */
export function defaultCacheDir(out: string): string {
  return `${path.resolve(out)}.rbp-cache`;
}

/** Copies the application source; OUT and the cache are skipped when they sit inside it. */
function copyApp(appDir: string, workspace: string, skip: string[]): void {
  fs.cpSync(appDir, workspace, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    filter: (src) => !skip.some((s) => src === s || src.startsWith(`${s}${path.sep}`)),
  });
}

function summarize(r: BuildResult, log: Logger): void {
  log.section('Summary');
  const count = (s: LayerState) => r.layers.filter((l) => l.state === s).length;
  log.info(`layers: ${count('created')} created, ${count('reused')} reused, ${count('restored')} restored from cache`);
  for (const l of r.layers) log.detail(`${l.buildpack} ${l.name}: ${l.state}${l.launch ? ' [launch]' : ''}${l.cache ? ' [cache]' : ''}`);
  log.info(`time: ${Object.entries(r.phases).map(([k, v]) => `${k} ${formatDuration(v)}`).join(', ')}`);
}

