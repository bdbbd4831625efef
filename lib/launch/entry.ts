/**
 * The two ends of our launch entrypoint. At build, `installLaunch` copies the buildpack's own
 * bin/launch into a launch layer whose metadata records what the build decided, and declares the
 * process. At run time, `runLaunch` reads that metadata back, lets the runtime plan the command, and
 * either prints the plan (RBP_DRY_RUN=1, for `rbp run --dry-run`) or starts it and supervises it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuildContext } from '../cnb/context.ts';
import { writeLaunchToml, type ProcessDef } from '../cnb/launch.ts';
import type { Metadata } from '../cnb/layers.ts';
import { readTomlIfExists } from '../cnb/toml.ts';
import { isUserError, redactEnv, renderUserError } from '../errors.ts';

export const LAUNCH_LAYER = 'launch';
const DRY_RUN_LABEL = 'io.rbp.launch.dry-run';

export interface LaunchDecision extends Metadata {
  runtime: string;
}

export function installLaunch(ctx: BuildContext, decision: LaunchDecision, extra: ProcessDef[] = []): string {
  // `launch` is a reserved layer name; the entrypoint layer is `launcher`.
  const layer = ctx.layers.fresh('launcher', { launch: true }, decision);
  fs.mkdirSync(path.join(layer.path, 'bin'), { recursive: true });
  const target = path.join(layer.path, 'bin', 'launch');
  fs.copyFileSync(path.join(ctx.buildpackDir, 'bin', 'launch'), target);
  fs.chmodSync(target, 0o755);
  const processes: ProcessDef[] = [{ type: 'web', command: [target], args: [], default: true }, ...extra];
  writeLaunchToml(path.join(ctx.layersDir, 'launch.toml'), {
    labels: [{ key: DRY_RUN_LABEL, value: processes.map((p) => p.type).join(',') }],
    processes,
  });
  return target;
}

/** The metadata of the layer this launch entrypoint was copied into. */
export function readDecision<T extends LaunchDecision>(): T {
  const layerDir = path.dirname(path.dirname(process.argv[1] ?? __filename));
  const t = readTomlIfExists<{ metadata?: T }>(`${layerDir}.toml`);
  if (!t?.metadata) throw new Error(`launch: no build metadata at ${layerDir}.toml; was this app built with the buildpack?`);
  return t.metadata;
}

export interface Plan {
  /** What runs, argv[0] looked up on PATH. */
  argv: string[];
  /** Variables set for the process on top of the launch environment. */
  env: Record<string, string>;
  cwd?: string;
  /** Facts for the dry-run output and the log (ports, webroot, server). */
  facts: Record<string, unknown>;
}

export async function runLaunch(planFn: (env: NodeJS.ProcessEnv) => Plan | Promise<Plan>): Promise<void> {
  let plan: Plan;
  try {
    plan = await planFn(process.env);
  } catch (e) {
    process.stderr.write(`${isUserError(e) ? renderUserError(e.data) : e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(isUserError(e) ? 1 : 70);
  }
  if (process.env.RBP_DRY_RUN === '1') {
    process.stdout.write(`${JSON.stringify({ argv: plan.argv, cwd: plan.cwd ?? process.cwd(), env: redactEnv(plan.env), ...plan.facts }, null, 2)}\n`);
    return;
  }
  const child = spawn(plan.argv[0]!, plan.argv.slice(1), { stdio: 'inherit', cwd: plan.cwd, env: { ...process.env, ...plan.env } });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => {
    process.stderr.write(`launch: cannot start ${plan.argv[0]}: ${e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)));
}
