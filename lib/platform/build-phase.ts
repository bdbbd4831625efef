/**
 * The build phase (cnb-spec.md §3, the lifecycle's builder): each buildpack of the group runs
 * bin/build in turn, in the copy of the app, with its plan; build=true layers reach the buildpacks
 * after it; [[unmet]] entries go on to the next provider; launch.toml's processes and labels are
 * collected for export.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { applyLayer, type EnvMap } from '../cnb/env.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { readLaunchToml, type Label } from '../cnb/launch.ts';
import { readLayerToml } from '../cnb/layers.ts';
import { readUnmet, writeBuildpackPlan, type BuildpackPlanEntry } from '../cnb/plan.ts';
import { validateSbomFiles } from '../cnb/sbom.ts';
import { formatDuration, type Logger } from '../log.ts';
import { parseRenderedError } from '../errors.ts';
import { cnbEnv, planFor, type PhaseEnv } from './detect.ts';
import { bpKey } from './order.ts';
import { buildProcessEnv } from './env.ts';
import { isDir } from './fsops.ts';
import type { Interrupt } from './interrupt.ts';
import type { ExportedProcess } from './metadata.ts';
import { layerNames } from './restore.ts';
import { apiAtLeast } from '../cnb/api.ts';
import type { PlanEntry } from './resolve.ts';

export interface Built {
  processes: Map<string, ExportedProcess>;
  labels: Map<string, Label>;
  defaultType: string | undefined;
}

export interface BuildPhaseOptions {
  group: BuildpackRef[];
  entries: PlanEntry<BuildpackRef>[];
  /** OUT: the app is OUT/workspace, the layers OUT/layers. */
  out: string;
  /** rbp's private temp folder: plans go there. */
  tmp: string;
  penv: PhaseEnv;
  userEnv: EnvMap;
  operator: EnvMap;
  interrupt: Interrupt;
  /** Told the process group of each buildpack as it starts, and undefined when it ended. */
  onGroup?: (pgid: number | undefined) => void;
  log: Logger;
}

/** A buildpack's own output was wrong: the lifecycle's generic build error (52), with the reason. */
function guarded<T>(bp: BuildpackRef, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw new PhaseFailure(EXIT.buildError, `${bpKey(bp)}: ${(e as Error).message}`);
  }
}

/** bin/build as a process (its own process group, which a signal to rbp stops whole); its output goes to the log as it comes, and its end is kept, where a buildpack that fails with a user error printed it. */
async function runBuildpack(
  o: BuildPhaseOptions,
  bp: BuildpackRef,
  buildEnv: EnvMap,
  bpPlan: BuildpackPlanEntry[],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error; tail: string }> {
  const esc = escapeId(bp.descriptor.buildpack.id);
  const layersDir = path.join(o.out, 'layers', esc);
  const planPath = path.join(o.tmp, `${esc}-plan.toml`);
  writeBuildpackPlan(planPath, { entries: bpPlan });
  const env = buildProcessEnv({
    base: buildEnv,
    user: o.userEnv,
    operator: o.operator,
    clearEnv: bp.descriptor.buildpack['clear-env'] === true,
    cnb: cnbEnv(bp, { CNB_PLATFORM_DIR: o.penv.platformDir, CNB_BP_PLAN_PATH: planPath, CNB_LAYERS_DIR: layersDir }),
  });
  // As the lifecycle: the buildpack's layers folder exists before bin/build runs.
  fs.mkdirSync(layersDir, { recursive: true });
  const bin = path.join(bp.dir, 'bin', 'build');
  const child = spawn(bin, [layersDir, o.penv.platformDir, planPath], {
    cwd: path.join(o.out, 'workspace'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  o.interrupt.track(child.pid);
  o.onGroup?.(child.pid);
  let tail = '';
  const shown = (d: Buffer) => {
    o.log.raw(d);
    tail = (tail + d.toString()).slice(-16_384);
  };
  child.stdout.on('data', shown);
  child.stderr.on('data', shown);
  const r = await ended;
  o.interrupt.untrack(child.pid);
  o.onGroup?.(undefined);
  return { ...r, tail };
}

export async function buildPhase(o: BuildPhaseOptions): Promise<Built> {
  const { log } = o;
  let entries = o.entries;
  const processes = new Map<string, ExportedProcess>();
  const labels = new Map<string, Label>();
  let defaultType: string | undefined;
  const buildEnv: EnvMap = { ...o.penv.base };
  for (const bp of o.group) {
    o.interrupt.check();
    const id = bp.descriptor.buildpack.id;
    const layersDir = path.join(o.out, 'layers', escapeId(id));
    const bpPlan = planFor(entries, bp);
    log.subsection(bpKey(bp));
    const t0 = performance.now();
    const r = await runBuildpack(o, bp, buildEnv, bpPlan);
    o.interrupt.check();
    if (r.code !== 0) {
      const how = r.error ? `could not start: ${r.error.message}` : `failed (exit ${r.code ?? r.signal})`;
      throw new PhaseFailure(EXIT.buildFailed, `${bpKey(bp)} ${how} after ${formatDuration(performance.now() - t0)}`, undefined, parseRenderedError(r.tail));
    }
    // Entries this buildpack met leave the plan; [[unmet]] ones go on to the next provider.
    const unmet = guarded(bp, () => readUnmet(path.join(layersDir, 'build.toml')));
    for (const u of unmet)
      if (!bpPlan.some((e) => e.name === u)) throw new PhaseFailure(EXIT.buildError, `${bpKey(bp)}: build.toml [[unmet]] ${u} is not in its plan`);
    const met = new Set(bpPlan.map((e) => e.name).filter((n) => !unmet.includes(n)));
    entries = entries.filter((e) => !e.requires.some((q) => met.has(q.name)));

    for (const name of layerNames(layersDir)) {
      const t = guarded(bp, () => readLayerToml(path.join(layersDir, `${name}.toml`)));
      if (!t) continue;
      const dir = path.join(layersDir, name);
      if (!t.types.launch && !t.types.build && !t.types.cache) {
        if (isDir(dir)) fs.renameSync(dir, `${dir}.ignore`);
        continue;
      }
      // build=true layers are seen by the buildpacks that come after, never by their writer.
      if (t.types.build && isDir(dir)) applyLayer(buildEnv, dir, 'build');
    }
    const launch = guarded(bp, () => {
      validateSbomFiles(layersDir, bp.descriptor.buildpack['sbom-formats']);
      return readLaunchToml(path.join(layersDir, 'launch.toml'), bp.descriptor.api);
    });
    for (const l of launch?.labels ?? []) labels.set(l.key, l);
    for (const p of launch?.processes ?? []) {
      if (defaultType === p.type && !p.default) {
        log.warn(`${bpKey(bp)} redefines process ${p.type} without default = true: there is no default process any more`);
        defaultType = undefined;
      }
      if (p.default) defaultType = p.type;
      // Buildpack API 0.7 had no working-dir: the lifecycle drops it, with this warning.
      const workingDir = apiAtLeast(bp.descriptor.api, '0.8') ? p['working-dir'] : undefined;
      if (p['working-dir'] && !workingDir)
        log.warn(`Warning: process working directory isn't supported in this buildpack api version. Ignoring working directory for process '${p.type}'`);
      processes.set(p.type, {
        type: p.type,
        command: p.command,
        ...(p.args ? { args: p.args } : {}),
        direct: p.direct !== false,
        'buildpack-id': id,
        ...(workingDir ? { 'working-dir': workingDir } : {}),
      });
    }
    log.info(`done in ${formatDuration(performance.now() - t0)}`);
  }
  return { processes, labels, defaultType };
}
