/**
 * What a buildpack executable is given by the lifecycle (cnb-spec.md §1), and the wrappers that
 * turn a detect/build function into an executable with the right exit codes and error rendering.
 */
import path from 'node:path';
import { readDescriptor, type BuildpackDescriptor } from './descriptor.ts';
import { readPlatformEnv, type EnvMap } from './env.ts';
import { readBuildpackPlan, writeBuildPlan, type BuildPlan, type BuildpackPlan } from './plan.ts';
import { Layers } from './layers.ts';
import { EXIT, exitCodeFor } from './exit.ts';
import { writeFailure, writtenPath, type WriteTarget } from '../disk.ts';
import { isUserError, renderUserError } from '../errors.ts';
import { takeBackExtraCa } from './extra-ca.ts';

function need(name: string, env: Record<string, string | undefined> = process.env): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is not set: this program is a CNB buildpack executable and must be run by a CNB lifecycle (pack, kpack, rbp)`);
  return v;
}

export interface DetectContext {
  appDir: string;
  platformDir: string;
  buildpackDir: string;
  descriptor: BuildpackDescriptor;
  /** The build environment: the process env with `<platform>/env/` files on top. */
  env: EnvMap;
}

export interface BuildContext extends DetectContext {
  layersDir: string;
  layers: Layers;
  plan: BuildpackPlan;
}

/** The context from an executable's environment and working directory (the process's own by default). */
function baseContext(processEnv: Record<string, string | undefined> = process.env, cwd = process.cwd()): DetectContext {
  const buildpackDir = need('CNB_BUILDPACK_DIR', processEnv);
  const platformDir = need('CNB_PLATFORM_DIR', processEnv);
  const env: EnvMap = {};
  for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) env[k] = v;
  Object.assign(env, readPlatformEnv(platformDir));
  let descriptor: BuildpackDescriptor | undefined;
  // Read on first use: most detects never look at it, and detect runs on every build.
  return {
    appDir: cwd,
    platformDir,
    buildpackDir,
    get descriptor() {
      return (descriptor ??= readDescriptor(buildpackDir).descriptor);
    },
    env,
  };
}

export function detectContext(processEnv: Record<string, string | undefined> = process.env, cwd = process.cwd()): DetectContext & { planPath: string } {
  return Object.assign(baseContext(processEnv, cwd), { planPath: need('CNB_BUILD_PLAN_PATH', processEnv) });
}

export function buildContext(): BuildContext {
  const layersDir = need('CNB_LAYERS_DIR');
  return Object.assign(baseContext(), { layersDir, layers: new Layers(layersDir), plan: readBuildpackPlan(need('CNB_BP_PLAN_PATH')) });
}

export type DetectResult = { pass: true; plan?: BuildPlan; reason?: string } | { pass: false; reason: string };
export type DetectFn = (ctx: ReturnType<typeof detectContext>) => Promise<DetectResult> | DetectResult;

/**
 * Prints why an executable failed and returns its exit code: a user error as one block, anything
 * else with its stack. A write of its own that found no room or no rights is a user error too (lib/disk.ts).
 */
function fail(e: unknown): number {
  const shown = isUserError(e) ? e : (writeFailure(e, ownWrite(e)) ?? e);
  process.stderr.write(`${isUserError(shown) ? renderUserError(shown.data) : e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return exitCodeFor(e, 'buildpack');
}

/** The folder a buildpack's failed write went to: the file's, else its layers'. */
function ownWrite(e: unknown): WriteTarget {
  const written = writtenPath(e);
  const layers = process.env.CNB_LAYERS_DIR;
  const folder = written ? path.dirname(path.resolve(written)) : (layers ?? process.cwd());
  const within = (dir: string | undefined) => dir !== undefined && `${folder}/`.startsWith(`${path.resolve(dir)}/`);
  return { folder, what: within(layers) ? "the buildpack's layers" : within(process.cwd()) ? 'the app folder' : folder };
}

/** bin/detect: 0 pass (plan written to CNB_BUILD_PLAN_PATH), 100 not this runtime (reason on stdout), other: broken input (on stderr). */
export async function runDetect(fn: DetectFn): Promise<never> {
  takeBackExtraCa();
  let code: number = EXIT.ok;
  try {
    const ctx = detectContext();
    const r = await fn(ctx);
    if (r.pass && r.plan) writeBuildPlan(ctx.planPath, r.plan);
    if (r.reason) process.stdout.write(`${r.reason}\n`);
    if (!r.pass) code = EXIT.detectFail;
  } catch (e) {
    code = fail(e);
  }
  process.exit(code);
}

/** bin/build: 0 success, 1 failure with the error rendered as one block. */
export async function runBuild(fn: (ctx: BuildContext) => Promise<void> | void): Promise<never> {
  takeBackExtraCa();
  let code: number = EXIT.ok;
  try {
    await fn(buildContext());
  } catch (e) {
    code = fail(e);
  }
  process.exit(code);
}
