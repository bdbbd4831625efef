/**
 * The detect phase: run every buildpack's bin/detect (once per id@version), then resolve each group
 * of the order in turn; the first group that passes wins (cnb-spec.md §3, §8). Composite buildpacks
 * are expanded into flat groups as the lifecycle does (expand.ts).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { readBuildPlan, type BuildPlan, type BuildpackPlanEntry } from '../cnb/plan.ts';
import type { EnvMap } from '../cnb/env.ts';
import { EXIT } from '../cnb/exit.ts';
import type { Logger } from '../log.ts';
import { resolvePlan, type PlanEntry } from './resolve.ts';
import { bpKey, type GroupEntry, type Order } from './order.ts';
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

export interface DetectOutcome {
  code: number;
  group?: BuildpackRef[];
  entries?: PlanEntry<BuildpackRef>[];
}

export interface PhaseEnv {
  base: EnvMap;
  user: EnvMap;
  operator: EnvMap;
  /** CNB_PLATFORM_DIR, whose env/ holds `user`. */
  platformDir: string;
  /** A private folder of rbp's, removed after the build: the plan files and what detect printed. */
  scratch: string;
}

/** One buildpack's bin/detect, as the lifecycle runs it: in the app's folder, with its plan file to write. */
async function runDetect(ref: BuildpackRef, appDir: string, penv: PhaseEnv, signal: AbortSignal): Promise<DetectRun> {
  const planPath = path.join(penv.scratch, `${escapeId(ref.descriptor.buildpack.id)}-detect-plan.toml`);
  fs.writeFileSync(planPath, '', { mode: 0o600 });
  const env = buildProcessEnv({
    base: penv.base,
    user: penv.user,
    operator: penv.operator,
    clearEnv: ref.descriptor.buildpack['clear-env'] === true,
    cnb: cnbEnv(ref, { CNB_PLATFORM_DIR: penv.platformDir, CNB_BUILD_PLAN_PATH: planPath }),
  });
  // What it prints goes to a file beside its plan (no pipe to read as it comes): the log shows it once it ended.
  const said = `${planPath}.out`;
  const fd = fs.openSync(said, 'w', 0o600);
  const r = await new Promise<DetectRun>((resolve) => {
    const child = spawn(path.join(ref.dir, 'bin', 'detect'), [penv.platformDir, planPath], { cwd: appDir, env, stdio: ['ignore', fd, fd], signal });
    child.once('error', (e) => resolve({ code: -1, output: '', error: e.name === 'AbortError' ? 'not needed' : e.message }));
    child.once('close', (code, sig) => resolve({ code: code ?? -1, output: '', ...(code === null ? { error: `killed by ${sig}` } : {}) }));
  });
  fs.closeSync(fd);
  r.output = fs.readFileSync(said, 'utf8');
  if (r.code === 0) {
    try {
      r.plan = readBuildPlan(planPath);
    } catch (e) {
      r.code = -1;
      r.error = `invalid build plan: ${(e as Error).message}`;
    }
  }
  return r;
}

/**
 * The CNB_* variables of bin/detect and bin/build, by the buildpack's API (lifecycle buildpack/detect.go,
 * build.go): CNB_BUILDPACK_DIR always; from 0.8 the paths `since08` (a 0.7 buildpack reads its
 * positional arguments); CNB_TARGET_* from 0.10.
 */
export function cnbEnv(ref: BuildpackRef, since08: EnvMap): EnvMap {
  const api = ref.descriptor.api;
  return { CNB_BUILDPACK_DIR: ref.dir, ...(apiAtLeast(api, '0.8') ? since08 : {}), ...(apiAtLeast(api, '0.10') ? targetEnv() : {}) };
}

const indent = (text: string) => text.trimEnd().replace(/^/gm, '    ');

/**
 * The detect phase as the lifecycle's detector decides it: groups in order, the first that passes
 * wins (exit 20 when none does, 21 when one errored). Detect only reads the app (the Buildpack API),
 * so every buildpack of the order starts at once rather than group after group; the groups are still
 * judged in order, and what is no longer needed once one passes is stopped.
 */
export async function detect(order: Order, appDir: string, penv: PhaseEnv, log: Logger): Promise<DetectOutcome> {
  // As the lifecycle's detector when it starts: every buildpack the order names (a composite, not
  // its components) must be of a Buildpack API it supports, else exit 12 before any detect runs.
  for (const group of order) for (const e of group) verifyBuildpackApi(e.ref);
  const abort = new AbortController();
  const runs = new Map<string, Promise<DetectRun>>();
  const here = machineTarget();
  const start = (ref: BuildpackRef, optional: boolean): Promise<DetectRun> => {
    const key = bpKey(ref);
    let run = runs.get(key);
    if (!run) {
      // A component's api is checked at build (build.ts), as the lifecycle does; one that is not
      // even a version is refused here (the lifecycle would crash on it).
      if (!parseApi(ref.descriptor.api)) verifyBuildpackApi(ref);
      // As the lifecycle: a required buildpack whose [[targets]] exclude this machine is an error
      // without running its bin/detect (an optional one is left to detect).
      const targets = buildpackTargets(ref.descriptor);
      run =
        !optional && !targetMatches(targets, here)
          ? Promise.resolve({
              code: -1,
              output: '',
              error: `unable to satisfy target os/arch constraints; this machine: ${JSON.stringify(here)}, buildpack: ${JSON.stringify(targets)}`,
            })
          : runDetect(ref, appDir, penv, abort.signal);
      runs.set(key, run);
    }
    return run;
  };
  for (const e of leafEntries(order)) void start(e.ref, e.optional);
  // With composites the groups tried are not the ones written: say which one each result is for.
  const headers = order.some((g) => g.some((e) => e.order));
  let found: DetectOutcome | undefined;
  const tryGroup = async (group: GroupEntry[], n: number): Promise<GroupOutcome> => {
    if (headers) log.info(`try #${n}: ${group.map((e) => `${bpKey(e.ref)}${e.optional ? ' (optional)' : ''}`).join(', ') || '(no buildpacks)'}`);
    const results = await Promise.all(group.map((e) => start(e.ref, e.optional)));
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
    abort.abort();
    await Promise.all(runs.values());
  }
}

/** Every buildpack an order may run: its entries and, for composites, their components. */
function leafEntries(order: Order): GroupEntry[] {
  return order.flatMap((g) => g.flatMap((e) => (e.order ? leafEntries(e.order) : [e])));
}

/**
 * `rbp detect`: detect on the app itself, as the lifecycle gives its detector the app directory; with
 * project.toml's include/exclude, on a copy of what a build would take (app-copy.ts), as pack copies
 * the app into its build container.
 */
export async function detectApp(order: Order, appDir: string, filter: AppFilter | undefined, penv: PhaseEnv, log: Logger): Promise<DetectOutcome> {
  if (!filter) return await detect(order, appDir, penv, log);
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
