/**
 * What a buildpack executable is given by the lifecycle (cnb-spec.md §1), and the wrappers that
 * turn a detect/build function into an executable with the right exit codes and error rendering.
 */
import { readDescriptor, type BuildpackDescriptor } from './descriptor.ts';
import { readPlatformEnv, type EnvMap } from './env.ts';
import { readBuildpackPlan, writeBuildPlan, type BuildPlan, type BuildpackPlan } from './plan.ts';
import { Layers } from './layers.ts';
import { EXIT, exitCodeFor } from './exit.ts';
import { isUserError, renderUserError } from '../errors.ts';

function need(name: string): string {
  const v = process.env[name];
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

function baseContext(): DetectContext {
  const platformDir = need('CNB_PLATFORM_DIR');
  const buildpackDir = need('CNB_BUILDPACK_DIR');
  const env: EnvMap = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, readPlatformEnv(platformDir));
  let descriptor: BuildpackDescriptor | undefined;
  // Read on first use: most detects never look at it, and detect runs on every build.
  return {
    appDir: process.cwd(),
    platformDir,
    buildpackDir,
    get descriptor() {
      return (descriptor ??= readDescriptor(buildpackDir).descriptor);
    },
    env,
  };
}

export function detectContext(): DetectContext & { planPath: string } {
  return Object.assign(baseContext(), { planPath: need('CNB_BUILD_PLAN_PATH') });
}

export function buildContext(): BuildContext {
  const layersDir = need('CNB_LAYERS_DIR');
  return Object.assign(baseContext(), { layersDir, layers: new Layers(layersDir), plan: readBuildpackPlan(need('CNB_BP_PLAN_PATH')) });
}

export type DetectResult = { pass: true; plan?: BuildPlan; reason?: string } | { pass: false; reason: string };

function fail(e: unknown): number {
  if (isUserError(e)) {
    process.stderr.write(`${renderUserError(e.data)}\n`);
  } else {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
  return exitCodeFor(e, 'buildpack');
}

/** bin/detect: 0 pass (plan written), 100 not this runtime (reason on stdout), 1 broken input. */
export async function runDetect(fn: (ctx: ReturnType<typeof detectContext>) => Promise<DetectResult> | DetectResult): Promise<never> {
  let code: number;
  try {
    const ctx = detectContext();
    const r = await fn(ctx);
    if (r.pass) {
      if (r.plan) writeBuildPlan(ctx.planPath, r.plan);
      if (r.reason) process.stdout.write(`${r.reason}\n`);
      code = EXIT.ok;
    } else {
      process.stdout.write(`${r.reason}\n`);
      code = EXIT.detectFail;
    }
  } catch (e) {
    code = fail(e);
  }
  process.exit(code);
}

/** bin/build: 0 success, 1 failure with the error rendered as one block. */
export async function runBuild(fn: (ctx: BuildContext) => Promise<void> | void): Promise<never> {
  let code: number = EXIT.ok;
  try {
    await fn(buildContext());
  } catch (e) {
    code = fail(e);
  }
  process.exit(code);
}
