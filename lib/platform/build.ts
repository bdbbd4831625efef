/**
 * `rbp build`: detect → restore → build → export, like the reference lifecycle's creator, into a
 * directory instead of an image:
 *   OUT/workspace                 the app after the build (CNB_APP_DIR)
 *   OUT/layers/<bp>/<layer>(.toml) launch layers (CNB_LAYERS_DIR), store.toml
 *   OUT/layers/config/metadata.toml processes and buildpacks
 *   OUT/rbp.toml                  task, instance size, layer states, timings
 *   OUT/.rbp-reuse.json           rbp deploy: what the build was made from (build-reuse.ts)
 *   <OUT>.rbp-cache/<bp>/<layer>(.toml) cache=true layers (or --cache DIR)
 * The buildpacks build at OUT's own path (in a private mount namespace that shows them the new
 * generation there, out-namespace.ts), so absolute paths written by buildpacks stay true at launch,
 * while OUT stays the last complete build for everyone else until the new one is switched in.
 * Every move of OUT, its generations and the cache goes through one OutTransaction, which undoes
 * them when the build fails or is interrupted; the phases are their own modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writePlatformEnv, type EnvMap } from '../cnb/env.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { isUserError, UserError, type UserErrorData } from '../errors.ts';
import { failureError, phaseError } from './failure.ts';
import { formatDuration, type Logger } from '../log.ts';
import { buildPhase, prestartBuild, type BuildPhaseOptions } from './build-phase.ts';
import { bpKey, detect, type PhaseEnv } from './detect.ts';
import { filteredHostEnv, operatorEnv } from './env.ts';
import { exportPhase, type ExportedLayer, type LayerState } from './export.ts';
import { isDir } from './fsops.ts';
import { Interrupt } from './interrupt.ts';
import type { Order } from './order.ts';
import { OutTransaction } from './out-transaction.ts';
import { checkDeferred, restore, type Restored } from './restore.ts';
import { copyApp, type AppFilter } from './app-copy.ts';
import { verifyBuildpackApi } from '../cnb/api.ts';
import { privateTemp, sweepStaleTemps, type PrivateTemp } from './temp.ts';
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
  /**
   * The build becomes an image (rbp build --image): rbp's own Node.js is not in it, so it is not the
   * launcher's (RBP_LAUNCHER_NODE) unless the operator names one.
   */
  forImage?: boolean;
  /**
   * Runs when the new build is complete but OUT not yet switched to it (rbp build --image writes and
   * pushes the image here), with the folder that holds it: when it fails, the build fails and OUT
   * stays the previous build.
   */
  beforeCommit?: (built: string) => Promise<void>;
  /**
   * rbp deploy: record what the build was made from (build-reuse.ts), and with `check`, reuse the
   * build OUT holds when nothing changed since it was made, instead of building.
   */
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

/** A spare's files, checked while the build started, differ from its listing (restore.ts deferFiles). */
class DamagedLate extends Error {}

export async function build(opts: BuildOptions): Promise<BuildResult> {
  try {
    return await buildOnce(opts, true);
  } catch (e) {
    if (!(e instanceof DamagedLate)) throw e;
    // Nothing of the called-off build stands (rolled back): this one checks every layer first.
    opts.log.info('building again, every restored layer checked before any buildpack runs');
    return buildOnce(opts, false);
  }
}

/**
 * One build. With `deferFiles`, the files of the spares that restore placed on their listing's
 * check of their folders are checked while the first buildpack starts (restore.ts), and the build
 * is called off (DamagedLate) when one differs: nothing built on it is exported.
 */
async function buildOnce(opts: BuildOptions, deferFiles: boolean): Promise<BuildResult> {
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
  // rbp's own Node.js is the launcher's unless the operator names another (operatorEnv, even empty:
  // none known) or the build becomes an image, which does not hold rbp's.
  // Without an image the app runs here, where the operator's tools (RBP_TOOL_*) are: they are used
  // in place, not copied into a layer (said only when there are some: the build env stays the
  // lifecycle's otherwise). The shared download cache too: the operator's RBP_DOWNLOAD_CACHE, else
  // rbp's own folder. RBP_LOG_LIVE: rbp shows the buildpacks' output on a terminal, so they draw
  // live progress lines.
  const ops = operatorEnv();
  const inPlace = !opts.forImage && Object.keys(ops).some((k) => k.startsWith('RBP_TOOL_'));
  const operator = {
    RBP_LAUNCHER_NODE: opts.forImage ? '' : process.execPath,
    ...(inPlace ? { RBP_OPERATOR_TOOLS: 'in-place' } : {}),
    ...ops,
    RBP_DOWNLOAD_CACHE: downloadCacheSetting(),
    ...(log.live ? { RBP_LOG_LIVE: '1' } : {}),
    RBP_INSTANCE_SIZE: opts.instance,
    RBP_INSTANCE_MEMORY: String(opts.instanceMemory),
  };
  // What a killed rbp left (its secrets among it) goes, even when this deploy reuses its build and makes no folder.
  sweepStaleTemps();
  // Checks OUT and the cache (nothing is touched when they are refused) and takes OUT's lock.
  const tx = new OutTransaction({
    appDir,
    outDir: out,
    cacheDir: opts.cacheDir ? path.resolve(opts.cacheDir) : defaultCacheDir(out),
    explicitCache: Boolean(opts.cacheDir),
  });
  // rbp deploy: the build OUT holds stands when nothing changed since it was made (build-reuse.ts).
  const reuse = opts.reuse ? checkReuse(opts, out, tx, operator, log) : undefined;
  if (reuse?.builtAt) {
    tx.release();
    phases.check = reuse.ms;
    log.info(`time: check ${formatDuration(reuse.ms)}`);
    return { ...result, group: reuse.group, reused: reuse.builtAt };
  }
  const taken = reuse?.taken;
  const interrupt = new Interrupt();
  let tmp: PrivateTemp | undefined;
  try {
    // Holds the platform env files (secrets among them): private, fresh, removed on every exit path.
    tmp = privateTemp('rbp-build-');
    const tmpDir = tmp.dir;
    const platformDir = path.join(tmpDir, 'platform');
    writePlatformEnv(platformDir, opts.userEnv);
    linkBindings(platformDir, opts.bindings ?? []);
    const penv: PhaseEnv = { base: filteredHostEnv(), user: opts.userEnv, operator, platformDir };

    for (const w of tx.begin()) log.warn(w);
    // The app is copied (include/exclude applied) before detect, which sees only the copy, as a
    // platform does it (app-copy.ts): into the new generation, while the namespace probe that
    // begin started runs.
    const copy = () => copyApp(appDir, path.join(tx.root, 'workspace'), [out, tx.prev, tx.next, tx.cacheDir, tx.newCache], opts.appFilter);
    copy();
    checkpoint('copied');

    // Detect reads the app and writes nothing into it (the Buildpack API): it runs in the new
    // generation's own folder, no namespace needed.
    const detected = await timed('detect', () => detect(opts.order, path.join(tx.root, 'workspace'), penv, log));
    interrupt.check();
    checkpoint('detected');
    if (detected.code !== EXIT.ok || !detected.group) {
      const why = detected.code === EXIT.detectError ? 'detection failed with a buildpack error' : 'no buildpack group passed detection';
      log.fail(why);
      result.code = detected.code;
      result.error = failureError(detected.code, why);
      for (const p of tx.rollback()) log.warn(`could not undo: ${p}`);
      return result;
    }
    // The probe's answer: without a namespace, the build happens at OUT itself, given its own copy.
    if (!(await tx.settle())) {
      log.info(tx.inPlace!);
      copy();
    }
    // rbp writes the new generation where it is (tx.root); its buildpacks see it at OUT.
    const layersRoot = path.join(tx.root, 'layers');
    fs.mkdirSync(layersRoot, { recursive: true });
    const group = detected.group;
    log.info(`group: ${group.map(bpKey).join(', ')}`);
    result.group = group.map(bpKey);
    // As the lifecycle's builder: every buildpack of the group (components included) must be of a
    // Buildpack API it supports, else exit 12 before any build runs.
    for (const bp of group) verifyBuildpackApi(bp);

    const phase: BuildPhaseOptions = {
      group,
      entries: detected.entries ?? [],
      view: { at: tx.root, shown: out, namespace: tx.namespace },
      tmp: tmpDir,
      penv,
      userEnv: opts.userEnv,
      operator,
      interrupt,
      onGroup: (g) => tx.recordGroup(g),
      log,
    };
    // Our first buildpack's bin/build starts now and waits at its gate while restore checks the
    // layers (build-gate.ts); called off if the build fails before its turn.
    const prestarted = prestartBuild(phase);
    if (prestarted) checkpoint('prestarted');
    let restored: Restored;
    try {
      restored = await timed('restore', () => restore({ group, layersRoot, tx, clearCache: Boolean(opts.clearCache), deferFiles, log }));
      interrupt.check();
      checkpoint('restored');
    } catch (e) {
      await prestarted?.callOff();
      throw e;
    }
    const built = await timed('build', async () => {
      const building = buildPhase(phase, prestarted);
      // The first buildpack is on its way (its gate open, or started): the spares' files now.
      const damaged = checkDeferred(restored.deferred);
      if (!damaged.length) return building;
      for (const d of damaged) log.warn(`cache: ${d.key} is damaged (${d.damage}): the build that started on it is called off`);
      interrupt.callOff('a restored layer is damaged');
      await building.catch(() => undefined);
      throw new DamagedLate();
    });
    interrupt.check();
    checkpoint('built');
    const exportStart = performance.now();
    let listingsSettle = 0;
    await timed('export', () => {
      const x = exportPhase({
        group,
        layersRoot,
        built,
        restoredIds: restored.ids,
        kept: restored.kept,
        moved: restored.moved,
        tx,
        appDir,
        userEnv: opts.userEnv,
        task: opts.task,
        instance: opts.instance,
        phases,
        exportStart,
        log,
      });
      result.layers = x.layers;
      listingsSettle = x.settleUntil;
      for (const p of x.metadata.processes)
        log.info(
          `process ${p.type}${p.type === x.metadata['buildpack-default-process-type'] ? ' (default)' : ''}: ${[...p.command, ...(p.args ?? [])].join(' ')}`,
        );
    });
    // rbp deploy's build: what it was made from, so that the next deploy may reuse it.
    const settled = taken ? writeReuseRecord(tx.root, taken, result.group) : 0;
    if (opts.beforeCommit) {
      try {
        await opts.beforeCommit(tx.root);
      } catch (e) {
        // The image could not be written or pushed: as an exporter failure, the build fails (62).
        if (isUserError(e)) throw new PhaseFailure(EXIT.exportFailed, `export failed: ${e.data.title}`, e);
        throw e;
      }
    }
    // The new generation is complete (rbp.toml is written): OUT switches to it, and the build stands.
    for (const w of tx.commit()) log.warn(w);
    recordOut({ out, app: appDir, cache: tx.cacheDir, cacheBeside: !opts.cacheDir, built: new Date().toISOString() });
    summarize(result, log);
    // The app deployed next may write into OUT, and anyone into the cache or the spares: not in the
    // clock tick of the newest stamp the reuse record or a listing holds.
    sleepSync(Math.max(settled, listingsSettle) - Date.now());
    return result;
  } catch (e) {
    const problems = tx.rollback();
    for (const p of problems) log.warn(`could not undo: ${p}`);
    const restoredMsg = tx.hadPrevious ? `The previous build in ${out} is unchanged.` : `${out} was not created.`;
    if (e instanceof PhaseFailure) {
      if (isUserError(e.shown)) log.error(e.shown.data);
      else log.fail(e.message);
      log.errLine(restoredMsg);
      result.code = e.code;
      result.error = phaseError(e);
      return result;
    }
    throw e;
  } finally {
    tmp?.remove();
    tx.release();
    interrupt.dispose();
  }
}

/**
 * Whether the build OUT holds can stand for this one (logged either way), and the inputs taken,
 * which the new build records when it cannot.
 */
function checkReuse(
  opts: BuildOptions,
  out: string,
  tx: OutTransaction,
  operator: Record<string, string>,
  log: Logger,
): { builtAt?: string; group?: string[]; taken: TakenInputs; ms: number } {
  const t0 = performance.now();
  const check = Boolean(opts.reuse?.check) && !opts.clearCache;
  // How the buildpacks draw their progress is no input of the build.
  const { RBP_LOG_LIVE: _drawnLive, ...operatorInputs } = operator;
  const found = reusableBuild(
    out,
    {
      appDir: opts.appDir,
      skip: [out, tx.prev, tx.next, tx.cacheDir, tx.newCache],
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

/** `<OUT>.rbp-cache`, beside OUT. */
export function defaultCacheDir(out: string): string {
  return `${path.resolve(out)}.rbp-cache`;
}

function summarize(r: BuildResult, log: Logger): void {
  log.section('Summary');
  const count = (s: LayerState) => r.layers.filter((l) => l.state === s).length;
  log.info(`layers: ${count('created')} created, ${count('reused')} reused, ${count('restored')} restored from cache`);
  for (const l of r.layers) log.detail(`${l.buildpack} ${l.name}: ${l.state}${l.launch ? ' [launch]' : ''}${l.cache ? ' [cache]' : ''}`);
  log.info(
    `time: ${Object.entries(r.phases)
      .map(([k, v]) => `${k} ${formatDuration(v)}`)
      .join(', ')}`,
  );
}
