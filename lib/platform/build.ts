/**
 * `rbp build`: detect → restore → build → export, like the reference lifecycle's creator, into a
 * directory instead of an image:
 *   OUT/workspace                 the app after the build (CNB_APP_DIR)
 *   OUT/layers/<bp>/<layer>(.toml) launch layers (CNB_LAYERS_DIR), store.toml
 *   OUT/layers/config/metadata.toml processes and buildpacks
 *   OUT/rbp.toml                  task, instance size, layer states, timings
 *   OUT/.rbp-reuse.json           rbp deploy: what the build was made from (build-reuse.ts)
 *   <OUT>.rbp-cache/<bp>/<layer>(.toml) cache=true layers (or --cache DIR)
 * The buildpacks build at OUT's own path, where the app later runs (so absolute paths a buildpack
 * writes stay true at launch); the previous OUT waits aside and comes back when the build fails
 * (out-transaction.ts). The phases are their own modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writePlatformEnv, type EnvMap } from '../cnb/env.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { isUserError, UserError, type UserErrorData } from '../errors.ts';
import { writeFailure, writtenPath } from '../disk.ts';
import { phaseError } from './failure.ts';
import { formatDuration, type Logger } from '../log.ts';
import { buildPhase } from './build-phase.ts';
import { detect, type PhaseEnv } from './detect.ts';
import { filteredHostEnv, operatorEnv } from './env.ts';
import { commitCache, exportPhase, type ExportedLayer, type LayerState } from './export.ts';
import { isDir } from './fsops.ts';
import { Interrupt } from './interrupt.ts';
import { bpKey, type Order } from './order.ts';
import { OutTransaction } from './out-transaction.ts';
import { restore } from './restore.ts';
import { checkAppDir, copyApp, type AppFilter } from './app-copy.ts';
import { verifyBuildpackApi } from '../cnb/api.ts';
import { privateTemp, sweepStaleTemps } from './temp.ts';
import { recordGroup } from './out-lock.ts';
import { downloadCacheSetting } from './rbp-dirs.ts';
import { recordOut } from './out-registry.ts';
import { checkpoint } from './checkpoint.ts';
import { reusableBuild, writeReuseRecord, type TakenInputs } from './build-reuse.ts';
import { sleepSync } from './fsops.ts';

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
  /** Which paths of the app (relative, `/`-separated) are copied into the build: project.toml include/exclude. */
  appFilter?: AppFilter;
  instance: string;
  instanceMemory: number;
  /** The build becomes an image (rbp build --image), which does not hold rbp's own Node.js. */
  forImage?: boolean;
  /** Runs once the new build is complete, before it is committed (--image writes the image here): when it fails, so does the build. */
  beforeCommit?: () => Promise<void>;
  /** rbp deploy: record what the build was made from (build-reuse.ts), and with `check`, reuse the build OUT holds when nothing changed. */
  reuse?: { check: boolean };
  log: Logger;
}

export interface BuildResult {
  code: number;
  /** The group that passed detection, as id@version. */
  group?: string[];
  layers: ExportedLayer[];
  phases: Record<string, number>;
  /** Why it failed, when it did (for --json). */
  error?: UserErrorData;
  /** When the build OUT holds was reused (nothing changed): when it was made. */
  reused?: string;
}

export async function build(opts: BuildOptions): Promise<BuildResult> {
  const { log } = opts;
  const appDir = path.resolve(opts.appDir);
  const out = path.resolve(opts.outDir);
  checkAppDir(opts.appDir, 'build');
  const operator = operatorSettings(opts, log);
  // What a killed rbp left (its secrets among it) goes, even when this deploy reuses its build and makes no folder.
  sweepStaleTemps();
  // Checks OUT and the cache (nothing is touched when they are refused) and takes their locks.
  const tx = new OutTransaction({
    appDir,
    outDir: out,
    cacheDir: opts.cacheDir ? path.resolve(opts.cacheDir) : `${out}.rbp-cache`,
    explicitCache: Boolean(opts.cacheDir),
  });
  const result: BuildResult = { code: EXIT.ok, layers: [], phases: {} };
  // rbp deploy: the build OUT holds stands when nothing changed since it was made (build-reuse.ts).
  const reuse = opts.reuse ? checkReuse(opts, tx, operator, log) : undefined;
  if (reuse?.builtAt) {
    tx.release();
    result.phases.check = reuse.ms;
    log.info(`time: check ${formatDuration(reuse.ms)}`);
    return { ...result, group: reuse.group, reused: reuse.builtAt };
  }
  const interrupt = new Interrupt();
  const phase = { name: 'copy' };
  // Holds the platform env files (secrets among them): private, fresh, removed on every exit path.
  const tmp = privateTemp('rbp-build-');
  try {
    const platformDir = path.join(tmp.dir, 'platform');
    writePlatformEnv(platformDir, opts.userEnv);
    linkBindings(platformDir, opts.bindings ?? []);
    const penv: PhaseEnv = { base: filteredHostEnv(), user: opts.userEnv, operator, platformDir, scratch: tmp.dir };
    await phases({ opts, tx, penv, tmp: tmp.dir, interrupt, result, taken: reuse?.taken, phase });
    summarize(result, log);
    return result;
  } catch (caught) {
    for (const p of tx.rollback()) log.warn(`could not undo: ${p}`);
    const e = rbpWriteFailure(caught, tx, phase.name) ?? caught;
    if (!(e instanceof PhaseFailure)) throw e;
    if (isUserError(e.shown)) log.error(e.shown.data);
    else log.fail(e.message);
    log.errLine(tx.previous ? `The previous build in ${out} is unchanged.` : `${out} was not created.`);
    result.code = e.code;
    result.error = phaseError(e);
    return result;
  } finally {
    tmp.remove();
    tx.release();
    interrupt.dispose();
  }
}

/**
 * A write of rbp's own (the app's copy, a layer moved or linked, the cache, OUT's metadata) that
 * found no room or no rights, as one clear error naming OUT or the cache: a failed export (62), or
 * before it bad input of the machine (2). Anything else is left as it is.
 */
function rbpWriteFailure(e: unknown, tx: OutTransaction, phase: string): PhaseFailure | undefined {
  const at = writtenPath(e) ?? '';
  const inCache = at === tx.cacheDir || at.startsWith(`${tx.cacheDir}/`);
  const disk = writeFailure(
    e,
    inCache
      ? { folder: tx.cacheDir, what: 'the layer cache', elsewhere: 'give --cache a folder on a larger file system' }
      : { folder: tx.out, what: 'OUT', elsewhere: 'give --out a folder on a larger file system' },
  );
  return disk && new PhaseFailure(phase === 'export' ? EXIT.exportFailed : EXIT.usage, disk.data.title, disk);
}

/**
 * The operator's settings the buildpacks get (the CNB build-config env): rbp's own Node.js as the
 * launcher's unless the operator names another or the build becomes an image (which does not hold
 * rbp's); the operator's tools used in place when the app runs here; the shared download cache; live
 * progress lines when rbp shows the output on a terminal; the instance.
 */
function operatorSettings(opts: BuildOptions, log: Logger): Record<string, string> {
  const ops = operatorEnv();
  const inPlace = !opts.forImage && Object.keys(ops).some((k) => k.startsWith('RBP_TOOL_'));
  return {
    RBP_LAUNCHER_NODE: opts.forImage ? '' : process.execPath,
    ...(inPlace ? { RBP_OPERATOR_TOOLS: 'in-place' } : {}),
    ...ops,
    RBP_DOWNLOAD_CACHE: downloadCacheSetting(),
    ...(log.live ? { RBP_LOG_LIVE: '1' } : {}),
    RBP_INSTANCE_SIZE: opts.instance,
    RBP_INSTANCE_MEMORY: String(opts.instanceMemory),
  };
}

interface PhaseRun {
  opts: BuildOptions;
  tx: OutTransaction;
  penv: PhaseEnv;
  tmp: string;
  interrupt: Interrupt;
  result: BuildResult;
  taken: TakenInputs | undefined;
  /** The phase running, for what a failed write of rbp's own is called. */
  phase: { name: string };
}

/** detect, restore, build and export, as the lifecycle's creator runs them, then the commit. */
async function phases(r: PhaseRun): Promise<void> {
  const { opts, tx, penv, interrupt, result } = r;
  const { log } = opts;
  const timed = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
    log.section(name[0]!.toUpperCase() + name.slice(1));
    r.phase.name = name;
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      result.phases[name] = performance.now() - t0;
    }
  };
  for (const w of tx.begin()) log.warn(w);
  // The app is copied (include/exclude applied) before detect, which sees only the copy, as a platform does it (app-copy.ts).
  const workspace = path.join(tx.out, 'workspace');
  copyApp(path.resolve(opts.appDir), workspace, [tx.out, tx.previous ?? '', tx.cacheDir].filter(Boolean), opts.appFilter);
  checkpoint('copied');
  const detected = await timed('detect', () => detect(opts.order, workspace, penv, log));
  interrupt.check();
  checkpoint('detected');
  if (detected.code !== EXIT.ok || !detected.group) {
    const why = detected.code === EXIT.detectError ? 'detection failed with a buildpack error' : 'no buildpack group passed detection';
    throw new PhaseFailure(detected.code, why);
  }
  const group = detected.group;
  log.info(`group: ${group.map(bpKey).join(', ')}`);
  result.group = group.map(bpKey);
  // As the lifecycle's builder: every buildpack of the group (components included) must be of a
  // Buildpack API it supports, else exit 12 before any build runs.
  for (const bp of group) verifyBuildpackApi(bp);
  const layersRoot = path.join(tx.out, 'layers');
  const restored = await timed('restore', () =>
    restore({ group, layersRoot, cacheDir: tx.cacheDir, previous: tx.previous, clearCache: Boolean(opts.clearCache), log }),
  );
  interrupt.check();
  checkpoint('restored');
  const built = await timed('build', () =>
    buildPhase({
      group,
      entries: detected.entries ?? [],
      out: tx.out,
      tmp: r.tmp,
      penv,
      userEnv: opts.userEnv,
      operator: penv.operator,
      interrupt,
      onGroup: (g) => recordGroup(tx.out, g),
      log,
    }),
  );
  interrupt.check();
  checkpoint('built');
  const exportStart = performance.now();
  const exported = await timed('export', () =>
    exportPhase({
      group,
      built,
      restored,
      tx,
      appDir: opts.appDir,
      userEnv: opts.userEnv,
      task: opts.task,
      instance: opts.instance,
      phases: result.phases,
      exportStart,
      log,
    }),
  );
  result.layers = exported.layers;
  const defaultType = exported.metadata['buildpack-default-process-type'];
  for (const p of exported.metadata.processes)
    log.info(`process ${p.type}${p.type === defaultType ? ' (default)' : ''}: ${[...p.command, ...(p.args ?? [])].join(' ')}`);
  // rbp deploy's build: what it was made from, so that the next deploy may reuse it.
  const settled = r.taken ? writeReuseRecord(tx.out, r.taken, result.group) : 0;
  if (opts.beforeCommit) {
    try {
      await opts.beforeCommit();
    } catch (e) {
      // The image could not be written or pushed: as an exporter failure, the build fails (62).
      if (isUserError(e)) throw new PhaseFailure(EXIT.exportFailed, `export failed: ${e.data.title}`, e);
      throw e;
    }
  }
  // OUT is complete (rbp.toml is written): the build stands.
  const previous = tx.commit();
  for (const w of [...commitCache(tx.cacheDir, previous, exported), ...tx.finish()]) log.warn(w);
  checkpoint('committed');
  recordOut({ out: tx.out, app: path.resolve(opts.appDir), cache: tx.cacheDir, cacheBeside: !opts.cacheDir, built: new Date().toISOString() });
  // The app deployed next may write into OUT: not in the clock tick of the newest stamp the reuse record holds.
  sleepSync(settled - Date.now());
}

/**
 * Whether the build OUT holds can stand for this one (logged either way), and the inputs taken,
 * which the new build records when it cannot.
 */
function checkReuse(
  opts: BuildOptions,
  tx: OutTransaction,
  operator: Record<string, string>,
  log: Logger,
): { builtAt?: string; group?: string[]; taken: TakenInputs; ms: number } {
  const t0 = performance.now();
  const check = Boolean(opts.reuse?.check) && !opts.clearCache;
  // How the buildpacks draw their progress is no input of the build.
  const { RBP_LOG_LIVE: _drawnLive, ...operatorInputs } = operator;
  const found = reusableBuild(
    tx.out,
    {
      appDir: opts.appDir,
      skip: [tx.out, tx.cacheDir],
      appFilter: opts.appFilter,
      userEnv: opts.userEnv,
      order: opts.order,
      buildEnv: { ...filteredHostEnv(), ...operatorInputs },
      bindings: opts.bindings ?? [],
      options: { task: opts.task, instance: opts.instance, cache: tx.cacheDir, image: Boolean(opts.forImage) },
    },
    check,
  );
  const ms = performance.now() - t0;
  if (found.reuse) {
    log.section('Build');
    log.info(
      `nothing changed since the build of ${found.builtAt}: the app's files, its variables, the buildpacks, rbp and the build options are the same, and OUT is as it left it`,
    );
    log.info(`reused as it is: group ${found.group.join(', ')} (rbp deploy --rebuild builds again)`);
    return { builtAt: found.builtAt, group: found.group, taken: found.taken, ms };
  }
  if (found.why) log.info(`building: ${found.why}`);
  return { taken: found.taken, ms };
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
    const problem = !isDir(abs)
      ? 'is not a directory'
      : !fs.existsSync(path.join(abs, 'type'))
        ? 'has no `type` file'
        : fs.existsSync(path.join(root, name))
          ? `has the same name as another binding (${name})`
          : undefined;
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

function summarize(r: BuildResult, log: Logger): void {
  log.section('Summary');
  const count = (s: LayerState) => r.layers.filter((l) => l.state === s).length;
  log.info(`layers: ${count('created')} created, ${count('reused')} reused, ${count('restored')} restored from cache`);
  for (const l of r.layers) log.detail(`${l.buildpack} ${l.name}: ${l.state}${l.launch ? ' [launch]' : ''}${l.cache ? ' [cache]' : ''}`);
  const times = Object.entries(r.phases).map(([k, v]) => `${k} ${formatDuration(v)}`);
  log.info(`time: ${times.join(', ')}`);
}
