/**
 * The build phase (cnb-spec.md §3, the lifecycle's builder): each buildpack of the group runs
 * bin/build in turn, in the copy of the app, with its plan; build=true layers reach the buildpacks
 * after it; [[unmet]] entries go on to the next provider; launch.toml's processes and labels are
 * collected for export. The group's first buildpack, when it is ours, was started during restore
 * and waits at its gate (build-gate.ts) until its turn comes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { escapeId, type BuildpackRef } from '../cnb/descriptor.ts';
import { applyLayer, type EnvMap } from '../cnb/env.ts';
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { readLaunchToml, type Label } from '../cnb/launch.ts';
import { readLayerToml } from '../cnb/layers.ts';
import { readUnmet, writeBuildpackPlan, type BuildpackPlanEntry } from '../cnb/plan.ts';
import { validateSbomFiles } from '../cnb/sbom.ts';
import { formatDuration, type Logger } from '../log.ts';
import { parseRenderedError } from '../errors.ts';
import { bpKey, planFor, platformFolder, type PhaseEnv } from './detect.ts';
import { buildProcessEnv } from './env.ts';
import { isDir } from './fsops.ts';
import { GATE_FD, GATE_OPEN, GATE_VAR, waitsAtGate } from './build-gate.ts';
import type { OutNamespace } from './out-namespace.ts';
import type { Interrupt } from './interrupt.ts';
import type { ExportedProcess } from './metadata.ts';
import { layerNames } from './restore.ts';
import { targetEnv } from './target.ts';
import { apiAtLeast } from '../cnb/api.ts';
import type { PlanEntry } from './resolve.ts';

export interface Built {
  processes: Map<string, ExportedProcess>;
  labels: Map<string, Label>;
  defaultType: string | undefined;
}

/**
 * Where the build is: `at`, the folder rbp writes and reads, and `shown`, the path its buildpacks
 * see it at (OUT), through `namespace` (out-namespace.ts); without one, the build is at OUT itself.
 */
export interface BuildView {
  at: string;
  shown: string;
  namespace?: OutNamespace;
}

export interface BuildPhaseOptions {
  group: BuildpackRef[];
  entries: PlanEntry<BuildpackRef>[];
  view: BuildView;
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

/**
 * The CNB_* variables of bin/build, by the buildpack's API (lifecycle buildpack/build.go):
 * CNB_BUILDPACK_DIR always; CNB_PLATFORM_DIR, CNB_BP_PLAN_PATH and CNB_LAYERS_DIR from 0.8 (a 0.7
 * buildpack reads its positional arguments); CNB_TARGET_* from 0.10.
 */
function buildCnbEnv(bp: BuildpackRef, layersDir: string, platformDir: string, planPath: string): EnvMap {
  const api = bp.descriptor.api;
  return {
    CNB_BUILDPACK_DIR: bp.dir,
    ...(apiAtLeast(api, '0.8') ? { CNB_PLATFORM_DIR: platformDir, CNB_BP_PLAN_PATH: planPath, CNB_LAYERS_DIR: layersDir } : {}),
    ...(apiAtLeast(api, '0.10') ? targetEnv() : {}),
  };
}

/** What one buildpack's bin/build needs beyond the phase's options: the environment so far and its plan. */
interface Turn {
  bp: BuildpackRef;
  buildEnv: EnvMap;
  bpPlan: BuildpackPlanEntry[];
}

/**
 * A bin/build process: started, maybe held at its gate (build-gate.ts), and its end. Output goes to
 * the log as it comes; `tail` keeps its end, where a buildpack that fails with a user error printed it.
 */
export interface StartedBuild {
  bp: BuildpackRef;
  pid: number | undefined;
  /** Lets a gated process go on (its layers are ready): the build's own time starts here. */
  open(): void;
  /** Calls a gated process off before it did anything (the build failed before it): it exits. */
  callOff(): Promise<void>;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  tail(): string;
}

function startBuildpack(o: BuildPhaseOptions, turn: Turn, gated: boolean): StartedBuild {
  const { bp, buildEnv, bpPlan } = turn;
  const { at, namespace } = o.view;
  const out = o.view.shown;
  const id = bp.descriptor.buildpack.id;
  const esc = escapeId(id);
  const layersDir = path.join(at, 'layers', esc);
  const shownLayersDir = path.join(out, 'layers', esc);
  const workspace = path.join(out, 'workspace');
  const planPath = path.join(o.tmp, `${esc}-plan.toml`);
  writeBuildpackPlan(planPath, { entries: bpPlan });
  const env = buildProcessEnv({
    base: buildEnv,
    user: o.userEnv,
    // In the namespace, where OUT's path really is: a hard link from outside OUT (the download
    // cache) into the bind mount would cross mounts (EXDEV), so our buildpacks make it there.
    // Only ours: any other buildpack sees the environment the reference lifecycle gives it.
    operator: namespace && id.startsWith('rbp/') ? { ...o.operator, RBP_OUT: out, RBP_OUT_GENERATION: at } : o.operator,
    clearEnv: bp.descriptor.buildpack['clear-env'] === true,
    cnb: buildCnbEnv(bp, shownLayersDir, platformFolder(o.penv), planPath),
  });
  // The gate's variable is rbp's to give: never one from the app's environment.
  delete env[GATE_VAR];
  if (gated) env[GATE_VAR] = String(GATE_FD);
  // As the lifecycle: the buildpack's layers folder exists before bin/build runs.
  fs.mkdirSync(layersDir, { recursive: true });
  const bin = path.join(bp.dir, 'bin', 'build');
  const args = [shownLayersDir, platformFolder(o.penv), planPath];
  // In the namespace the process moves to the workspace itself, once OUT shows the new generation.
  const cmd = namespace ? namespace.wrap(at, out, workspace, bin, args) : { file: bin, args };
  const child = spawn(cmd.file, cmd.args, {
    cwd: namespace ? at : workspace,
    env,
    stdio: gated ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    // Its own process group: rbp stops all of it (npm and what npm started) on a signal.
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
  child.stdout?.on('data', shown);
  child.stderr?.on('data', shown);
  const gate = gated ? (child.stdio[GATE_FD] as Writable | null) : null;
  // A process that is gone before its gate opens makes the write fail (EPIPE): its exit tells why.
  gate?.on('error', () => {});
  return {
    bp,
    pid: child.pid,
    open: () => gate?.end(GATE_OPEN),
    callOff: async () => {
      gate?.destroy();
      // It exits at once on the closed gate; a process group that does not is stopped.
      const stop = setTimeout(() => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }, 5000);
      await ended;
      clearTimeout(stop);
      o.interrupt.untrack(child.pid);
      o.onGroup?.(undefined);
    },
    ended,
    tail: () => tail,
  };
}

/**
 * The first buildpack's bin/build started ahead, while restore checks the layers: when it is one of
 * ours that waits at its gate (build-gate.ts), its Node.js start and bundle load overlap the check.
 * Undefined when the first buildpack is any other.
 */
export function prestartBuild(o: BuildPhaseOptions): StartedBuild | undefined {
  const bp = o.group[0];
  if (!bp || !waitsAtGate(bp.dir)) return undefined;
  return startBuildpack(o, { bp, buildEnv: { ...o.penv.base }, bpPlan: planFor(o.entries, bp) }, true);
}

export async function buildPhase(o: BuildPhaseOptions, prestarted?: StartedBuild): Promise<Built> {
  const { log } = o;
  let entries = o.entries;
  const processes = new Map<string, ExportedProcess>();
  const labels = new Map<string, Label>();
  let defaultType: string | undefined;
  const buildEnv: EnvMap = { ...o.penv.base };
  const { at } = o.view;
  // rbp reads what a buildpack wrote where it is (`at`); the buildpacks are told the paths they see.
  const layersRoot = path.join(at, 'layers');
  const shownLayersRoot = path.join(o.view.shown, 'layers');
  for (const bp of o.group) {
    const early = prestarted?.bp === bp ? prestarted : undefined;
    if (!early) o.interrupt.check();
    const id = bp.descriptor.buildpack.id;
    const esc = escapeId(id);
    const layersDir = path.join(layersRoot, esc);
    const shownLayersDir = path.join(shownLayersRoot, esc);
    const bpPlan = planFor(entries, bp);
    log.subsection(bpKey(bp));
    const t0 = performance.now();
    const proc = early ?? startBuildpack(o, { bp, buildEnv, bpPlan }, false);
    proc.open();
    const r = await proc.ended;
    o.interrupt.untrack(proc.pid);
    o.onGroup?.(undefined);
    o.interrupt.check();
    if (r.code !== 0) {
      const how = r.code ?? r.signal ?? (r.error ? r.error.message : 'unknown');
      throw new PhaseFailure(
        EXIT.buildFailed,
        `${bpKey(bp)} failed (exit ${how}) after ${formatDuration(performance.now() - t0)}`,
        undefined,
        parseRenderedError(proc.tail()),
      );
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
      if (t.types.build && isDir(dir)) applyLayer(buildEnv, dir, 'build', undefined, path.join(shownLayersDir, name));
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
