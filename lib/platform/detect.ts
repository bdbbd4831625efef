/**
 * The detect phase: run every buildpack's bin/detect (once per id@version), then resolve each group
 * of the order in turn; the first group that passes wins (cnb-spec.md §3, §8). Composite buildpacks
 * are expanded into flat groups as the lifecycle does (expand.ts).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { readBuildPlan, type BuildPlan, type BuildpackPlanEntry } from '../cnb/plan.ts';
import type { EnvMap } from '../cnb/env.ts';
import { EXIT } from '../cnb/exit.ts';
import type { Logger } from '../log.ts';
import { finished } from '../child-result.ts';
import { firstLine } from '../fsx.ts';
import { resolvePlan, type PlanEntry } from './resolve.ts';
import { ourBuildpacksDir, RUNTIMES, type GroupEntry, type Order, type Runtime } from './order.ts';
import { detectExit, type DetectExit, type DetectFn } from '../cnb/context.ts';
import { orderTrials, type GroupOutcome } from './expand.ts';
import { buildProcessEnv } from './env.ts';
import { buildpackTargets, machineTarget, targetEnv, targetMatches } from './target.ts';
import { apiAtLeast, parseApi, verifyBuildpackApi } from '../cnb/api.ts';
import { copyApp, type AppFilter } from './app-copy.ts';
import { privateTemp } from './temp.ts';

export interface DetectRun {
  code: number;
  output: string;
  plan?: BuildPlan;
  error?: string;
}

/** The platform folder of `penv`, made now if it is made at its first use. */
export function platformFolder(penv: PhaseEnv): string {
  return typeof penv.platformDir === 'function' ? penv.platformDir() : penv.platformDir;
}

export interface DetectedBuildpack {
  ref: BuildpackRef;
  plan: BuildpackPlanEntry[];
}

export interface DetectOutcome {
  code: number;
  group?: BuildpackRef[];
  entries?: PlanEntry<BuildpackRef>[];
}

export function bpKey(ref: BuildpackRef): string {
  return `${ref.descriptor.buildpack.id}@${ref.descriptor.buildpack.version}`;
}

export interface PhaseEnv {
  base: EnvMap;
  user: EnvMap;
  operator: EnvMap;
  /**
   * CNB_PLATFORM_DIR, whose env/ holds `user`: the folder, or a function that makes it at its first
   * call (rbp detect). A detect compiled into rbp is handed `user` in memory and makes the folder only
   * if it reads it: when every detect of the order is compiled in, none is made.
   */
  platformDir: string | (() => string);
  /** Run our own buildpacks' detect in this process (the default; false: always their bin/detect). */
  inProcess?: boolean;
}

type InProcessDetect = (env: EnvMap, cwd: string) => Promise<DetectExit>;

/**
 * Our three buildpacks' detects compiled into rbp, and the id of the build that made them and the
 * buildpack folders beside it (scripts/build.mjs). The program gives them (scripts/rbp.ts: lib/ may
 * not import the buildpacks); rbp run from source has none. rbp runs one of these in place of a
 * folder's own detect only when that folder's lib/detect.cjs names the same build: the code is
 * then the same, and rbp spares reading and compiling the folder's copy (and its own copies of lib/
 * and smol-toml), ~3 ms per buildpack on every detect.
 */
export interface CompiledDetects {
  buildId: string;
  detects: Readonly<Record<Runtime, DetectFn>>;
}
let compiled: CompiledDetects | undefined;

export function useCompiledDetects(c: CompiledDetects): void {
  compiled = c;
}

/** Whether `dir` is one of our built buildpacks (dist/buildpacks/<runtime>), whose code rbp knows. */
function isOurs(dir: string): boolean {
  try {
    return (
      (RUNTIMES as readonly string[]).includes(path.basename(dir)) && fs.realpathSync.native(path.dirname(dir)) === fs.realpathSync.native(ourBuildpacksDir())
    );
  } catch {
    return false;
  }
}

/**
 * The first line of a lib/detect.cjs that exports detectExit (scripts/build.mjs): one built by an
 * older rbp runs its detect as a program when loaded, exit included, so it is never required. The
 * line goes on with the id of the build that made it (`; build <id>`), which rbp compares with its
 * own (CompiledDetects).
 */
const DETECT_API_MARK = '// rbp-detect-api: 1';

/**
 * Our own buildpacks' detect, run in rbp's process: the CNB contract of a detect (the environment and
 * directory it is given; the plan written to CNB_BUILD_PLAN_PATH; what bin/detect would print and its
 * exit code), without a Node.js start (~50–70 ms each, three per automatic detect). When the
 * folder's lib/detect.cjs comes from the build that made this rbp, its detect is the one compiled
 * into rbp (CompiledDetects): nothing to read or compile. Another build of ours (an older or newer
 * dist/buildpacks, RBP_BUILDPACKS_DIR) is loaded: its lib/detect.cjs is the very program bin/detect
 * runs, and exports it as detectExit(env, cwd) (scripts/build.mjs). Anything else runs as
 * bin/detect: another buildpack, and ours when NODE_OPTIONS is set for it (it would change the
 * Node.js that bin/detect starts).
 */
type InProcess = { compiled: DetectFn } | { loaded: InProcessDetect };

function inProcessDetect(ref: BuildpackRef, env: EnvMap, allowed: boolean): InProcess | undefined {
  if (!allowed || env.NODE_OPTIONS || !isOurs(ref.dir)) return undefined;
  const lib = path.join(ref.dir, 'lib', 'detect.cjs');
  const head = fs.existsSync(path.join(ref.dir, 'bin', 'detect')) ? firstLine(lib) : undefined;
  if (!head?.startsWith(DETECT_API_MARK)) return undefined;
  if (compiled && head === `${DETECT_API_MARK}; build ${compiled.buildId}`) return { compiled: compiled.detects[path.basename(ref.dir) as Runtime] };
  const mod = createRequire(import.meta.url)(lib) as { rbpDetectApi?: number; detectExit?: InProcessDetect };
  return mod.rbpDetectApi === 1 && typeof mod.detectExit === 'function' ? { loaded: mod.detectExit } : undefined;
}

const printed = (r: DetectExit): string => r.output.map((o) => o.text).join('');

/**
 * One buildpack's detect. `plans` gives the folder of plan files, made at its first use: a detect
 * compiled into rbp hands its plan back and needs none.
 */
async function runDetect(ref: BuildpackRef, appDir: string, penv: PhaseEnv, plans: () => string): Promise<DetectRun> {
  const envWith = (platformDir: string | undefined, planPath: string | undefined) =>
    buildProcessEnv({
      base: penv.base,
      user: penv.user,
      operator: penv.operator,
      clearEnv: ref.descriptor.buildpack['clear-env'] === true,
      cnb: detectCnbEnv(ref, platformDir, planPath),
    });
  // Without the platform folder and the plan file: a compiled detect is handed both in memory.
  const inMemory = envWith(undefined, undefined);
  const inProcess = inProcessDetect(ref, inMemory, penv.inProcess !== false);
  // As a child process started in appDir sees it: getcwd() is the physical path.
  if (inProcess && 'compiled' in inProcess) {
    let plan: BuildPlan | undefined;
    const platform = { env: penv.user, dir: () => platformFolder(penv), named: apiAtLeast(ref.descriptor.api, '0.8') };
    const r = await detectExit(inProcess.compiled, inMemory, fs.realpathSync.native(appDir), (p) => (plan = p), platform);
    return { code: r.code, output: printed(r), ...(r.code === 0 ? { plan: plan ?? {} } : {}) };
  }
  const planPath = path.join(plans(), `${escapeId(ref.descriptor.buildpack.id)}-plan.toml`);
  fs.writeFileSync(planPath, '', { mode: 0o600 });
  const platformDir = platformFolder(penv);
  const env = envWith(platformDir, planPath);
  let run: DetectRun;
  if (inProcess) {
    const r = await inProcess.loaded(env, fs.realpathSync.native(appDir));
    run = { code: r.code, output: printed(r) };
  } else {
    // execa loads when a buildpack runs as a process: our own detects in-process need none of it.
    const { execa } = await import('execa');
    const bin = path.join(ref.dir, 'bin', 'detect');
    const r = finished(await execa(bin, [platformDir, planPath], { cwd: appDir, env, extendEnv: false, reject: false, all: true, stdin: 'ignore' }));
    run = { code: typeof r.exitCode === 'number' ? r.exitCode : -1, output: r.all ?? '' };
    if (r.failed && r.exitCode === undefined) run.error = r.shortMessage;
  }
  const code = run.code;
  if (code === 0) {
    try {
      run.plan = readBuildPlan(planPath);
    } catch (e) {
      run.code = -1;
      run.error = `invalid build plan: ${(e as Error).message}`;
    }
  }
  return run;
}

/**
 * The CNB_* variables of bin/detect, by the buildpack's API (lifecycle buildpack/detect.go):
 * CNB_BUILDPACK_DIR always; CNB_PLATFORM_DIR and CNB_BUILD_PLAN_PATH from 0.8 (a 0.7 buildpack
 * reads its positional arguments); CNB_TARGET_* from 0.10. A detect compiled into rbp has no plan
 * file (it hands its plan back), and is given the platform folder apart (PlatformInMemory).
 */
function detectCnbEnv(ref: BuildpackRef, platformDir: string | undefined, planPath: string | undefined): EnvMap {
  const api = ref.descriptor.api;
  return {
    CNB_BUILDPACK_DIR: ref.dir,
    ...(apiAtLeast(api, '0.8') ? { ...(platformDir ? { CNB_PLATFORM_DIR: platformDir } : {}), ...(planPath ? { CNB_BUILD_PLAN_PATH: planPath } : {}) } : {}),
    ...(apiAtLeast(api, '0.10') ? targetEnv() : {}),
  };
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

export async function detect(order: Order, appDir: string, penv: PhaseEnv, log: Logger): Promise<DetectOutcome> {
  // As the lifecycle's detector when it starts: every buildpack the order names (a composite, not
  // its components) must be of a Buildpack API it supports, else exit 12 before any detect runs.
  for (const group of order) for (const e of group) verifyBuildpackApi(e.ref);
  let tmp: string | undefined;
  const plans = () => (tmp ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-detect-')));
  const runs = new Map<string, Promise<DetectRun>>();
  const here = machineTarget();
  // With composites the groups tried are not the ones written: say which one each result is for.
  const headers = order.some((g) => g.some((e) => e.order));
  let found: DetectOutcome | undefined;
  const tryGroup = async (group: GroupEntry[], n: number): Promise<GroupOutcome> => {
    if (headers) log.info(`try #${n}: ${group.map((e) => `${bpKey(e.ref)}${e.optional ? ' (optional)' : ''}`).join(', ') || '(no buildpacks)'}`);
    // The lifecycle may run a group's detects in parallel; results are memoised per id@version.
    for (const e of group) {
      if (runs.has(bpKey(e.ref))) continue;
      // A component's api is checked at build (build.ts), as the lifecycle does; one that is not
      // even a version is refused here (the lifecycle would crash on it).
      if (!parseApi(e.ref.descriptor.api)) verifyBuildpackApi(e.ref);
      // As the lifecycle: a required buildpack whose [[targets]] exclude this machine is an error
      // without running its bin/detect (an optional one is left to detect).
      const targets = buildpackTargets(e.ref.descriptor);
      if (!e.optional && !targetMatches(targets, here)) {
        const error = `unable to satisfy target os/arch constraints; this machine: ${JSON.stringify(here)}, buildpack: ${JSON.stringify(targets)}`;
        runs.set(bpKey(e.ref), Promise.resolve({ code: -1, output: '', error }));
      } else runs.set(bpKey(e.ref), runDetect(e.ref, appDir, penv, plans));
    }
    const results = await Promise.all(group.map((e) => runs.get(bpKey(e.ref))!));
    let ok = true;
    let groupError = false;
    const passed = [];
    for (const [i, e] of group.entries()) {
      const r = results[i]!;
      const key = bpKey(e.ref);
      if (r.code === EXIT.ok) {
        log.info(`pass: ${key}`);
        if (r.output.trim()) log.line(indent(r.output));
        passed.push({ key, item: e.ref, optional: e.optional, plan: r.plan ?? {} });
      } else if (r.code === EXIT.detectFail) {
        log.info(`${e.optional ? 'skip' : 'fail'}: ${key}${r.output.trim() ? `: ${r.output.trim().split('\n').join(' / ')}` : ''}`);
        ok &&= e.optional;
      } else {
        log.info(`err:  ${key} (exit ${r.code})${r.error ? `: ${r.error}` : ''}`);
        if (r.output.trim()) log.line(indent(r.output));
        ok &&= e.optional;
        // As the lifecycle: any error, an optional buildpack's too, makes a failed group an error (21).
        groupError = true;
      }
    }
    if (!ok) return groupError ? 'error' : 'fail';
    if (passed.length === 0) return 'fail';
    const trials: string[] = [];
    const res = resolvePlan(passed, trials);
    for (const l of trials) log.detail(l);
    if (!res) return 'fail';
    if (res.group.length !== group.length) log.detail(`${res.group.length} of ${group.length} buildpacks participating`);
    found = { code: EXIT.ok, group: res.group, entries: res.entries };
    return 'pass';
  };
  try {
    const trials = orderTrials(order);
    let n = 0;
    let step = trials.next();
    while (!step.done) step = trials.next(await tryGroup(step.value, ++n));
    if (step.value === 'pass' && found) return found;
    return { code: step.value === 'error' ? EXIT.detectError : EXIT.detectNoGroup };
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Every buildpack an order may run: its entries and, for composites, their components. */
function leaves(order: Order): BuildpackRef[] {
  return order.flatMap((g) => g.flatMap((e) => (e.order ? leaves(e.order) : [e.ref])));
}

/**
 * `rbp detect`: detect on a copy of the app with include/exclude applied (app-copy.ts), as a build
 * detects. When nothing is filtered and every buildpack is one of ours, whose detect only reads
 * the app, the copy would be the app itself: detect then reads the app in place (a copy of an app
 * with its node_modules would cost seconds).
 */
export async function detectApp(order: Order, appDir: string, filter: AppFilter | undefined, penv: PhaseEnv, log: Logger): Promise<DetectOutcome> {
  if (!filter && leaves(order).every((r) => isOurs(r.dir))) return await detect(order, appDir, penv, log);
  const tmp = privateTemp('rbp-detect-app-');
  try {
    const copy = path.join(tmp.dir, 'app');
    copyApp(appDir, copy, [], filter);
    return await detect(order, copy, penv, log);
  } finally {
    tmp.remove();
  }
}

/** Plan entries for one buildpack: the requires of every entry it provides (duplicates kept). */
export function planFor(entries: PlanEntry<BuildpackRef>[], ref: BuildpackRef): BuildpackPlanEntry[] {
  const out: BuildpackPlanEntry[] = [];
  for (const e of entries) {
    if (e.providers.some((p) => p.descriptor.buildpack.id === ref.descriptor.buildpack.id)) {
      for (const r of e.requires) out.push(r.metadata ? { name: r.name, metadata: r.metadata } : { name: r.name });
    }
  }
  return out;
}
