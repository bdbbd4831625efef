/**
 * What a buildpack executable is given by the lifecycle (cnb-spec.md §1), and the wrappers that
 * turn a detect/build function into an executable with the right exit codes and error rendering.
 */
import path from 'node:path';
import { readDescriptor, type BuildpackDescriptor } from './descriptor.ts';
import { readPlatformEnv, type EnvMap } from './env.ts';
import { readBuildpackPlan, validateBuildPlan, writeBuildPlan, type BuildPlan, type BuildpackPlan } from './plan.ts';
import { Layers } from './layers.ts';
import { EXIT, exitCodeFor } from './exit.ts';
import { writeFailure, writtenPath, type WriteTarget } from '../disk.ts';
import { isUserError, renderUserError } from '../errors.ts';
import { takeBackExtraCa } from './extra-ca.ts';
import { waitAtGate } from './build-gate.ts';

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

/**
 * The platform folder as rbp hands it to a detect compiled into it (lib/platform/detect.ts): the
 * variables of its env/ in memory, and the folder itself made at the first read of ctx.platformDir
 * or of CNB_PLATFORM_DIR. `rbp detect` with only our buildpacks in the order then makes none.
 */
export interface PlatformInMemory {
  /** The variables `<platform>/env/` holds, one file each. */
  env: EnvMap;
  /** The folder, made at the first call. */
  dir: () => string;
  /** Whether the environment names it in CNB_PLATFORM_DIR (Buildpack API 0.8 and later). */
  named: boolean;
}

/** `env[name]`, computed at its first read (then the same value); a write replaces it. */
function lazyVariable(env: EnvMap, name: string, value: () => string): void {
  Object.defineProperty(env, name, {
    enumerable: true,
    configurable: true,
    get: value,
    set: (v: string) => Object.defineProperty(env, name, { value: v, writable: true, enumerable: true, configurable: true }),
  });
}

/**
 * The context from an executable's environment and working directory (the process's own by
 * default), or with `platform`, from the platform folder's variables in memory.
 */
function baseContext(processEnv: Record<string, string | undefined> = process.env, cwd = process.cwd(), platform?: PlatformInMemory): DetectContext {
  const buildpackDir = need('CNB_BUILDPACK_DIR', processEnv);
  const env: EnvMap = {};
  for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) env[k] = v;
  let platformDir: () => string;
  if (platform) {
    platformDir = platform.dir;
    if (platform.named) lazyVariable(env, 'CNB_PLATFORM_DIR', platform.dir);
    // In the order readPlatformEnv reads the files: by name.
    for (const k of Object.keys(platform.env).sort()) env[k] = platform.env[k]!;
  } else {
    const dir = need('CNB_PLATFORM_DIR', processEnv);
    Object.assign(env, readPlatformEnv(dir));
    platformDir = () => dir;
  }
  let descriptor: BuildpackDescriptor | undefined;
  // Read on first use: most detects never look at it, and detect runs on every build.
  return {
    appDir: cwd,
    get platformDir() {
      return platformDir();
    },
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
 * What an executable prints when it fails: a user error as one block, anything else with its stack.
 * A write of its own that found no room or no rights is a user error too (lib/disk.ts).
 */
function failure(e: unknown): { code: number; text: string } {
  const shown = isUserError(e) ? e : (writeFailure(e, ownWrite(e)) ?? e);
  const text = isUserError(shown) ? renderUserError(shown.data) : e instanceof Error ? (e.stack ?? e.message) : String(e);
  return { code: exitCodeFor(e, 'buildpack'), text: `${text}\n` };
}

/** The folder a buildpack's failed write went to: the file's, else its layers'. */
function ownWrite(e: unknown): WriteTarget {
  const written = writtenPath(e);
  const layers = process.env.CNB_LAYERS_DIR;
  const folder = written ? path.dirname(path.resolve(written)) : (layers ?? process.cwd());
  const within = (dir: string | undefined) => dir !== undefined && `${folder}/`.startsWith(`${path.resolve(dir)}/`);
  return { folder, what: within(layers) ? "the buildpack's layers" : within(process.cwd()) ? 'the app folder' : folder };
}

function fail(e: unknown): number {
  const f = failure(e);
  process.stderr.write(f.text);
  return f.code;
}

/** What bin/detect printed, in order, and its exit code. */
export interface DetectExit {
  code: number;
  output: { stream: 'stdout' | 'stderr'; text: string }[];
}

/**
 * One detect, given the environment and working directory the lifecycle gives bin/detect: 0 pass
 * (plan written to CNB_BUILD_PLAN_PATH), 100 not this runtime (reason on stdout), other: an error
 * (on stderr). bin/detect is this with the process's own environment, cwd, streams and exit code;
 * rbp calls it in-process for its own buildpacks (lib/platform/detect.ts), so both are one code.
 * With `keepPlan`, the plan is checked as writing it checks it, then handed to keepPlan, not written
 * (rbp's detects compiled into it: no plan file to write and parse back, no CNB_BUILD_PLAN_PATH),
 * and `platform` gives the platform folder's variables in memory (PlatformInMemory).
 */
export async function detectExit(
  fn: DetectFn,
  processEnv: Record<string, string | undefined>,
  cwd: string,
  keepPlan?: (plan: BuildPlan) => void,
  platform?: PlatformInMemory,
): Promise<DetectExit> {
  const output: DetectExit['output'] = [];
  try {
    const ctx = keepPlan ? Object.assign(baseContext(processEnv, cwd, platform), { planPath: '' }) : detectContext(processEnv, cwd);
    const r = await fn(ctx);
    if (r.pass) {
      if (r.plan && keepPlan) keepPlan(validateBuildPlan(r.plan));
      else if (r.plan) writeBuildPlan(ctx.planPath, r.plan);
      if (r.reason) output.push({ stream: 'stdout', text: `${r.reason}\n` });
      return { code: EXIT.ok, output };
    }
    output.push({ stream: 'stdout', text: `${r.reason}\n` });
    return { code: EXIT.detectFail, output };
  } catch (e) {
    const f = failure(e);
    output.push({ stream: 'stderr', text: f.text });
    return { code: f.code, output };
  }
}

/** bin/detect: 0 pass (plan written), 100 not this runtime (reason on stdout), 1 broken input. */
export async function runDetect(fn: DetectFn): Promise<never> {
  takeBackExtraCa();
  const r = await detectExit(fn, process.env, process.cwd());
  for (const o of r.output) (o.stream === 'stdout' ? process.stdout : process.stderr).write(o.text);
  process.exit(r.code);
}

/** bin/build: 0 success, 1 failure with the error rendered as one block. */
export async function runBuild(fn: (ctx: BuildContext) => Promise<void> | void): Promise<never> {
  takeBackExtraCa();
  let code: number = EXIT.ok;
  try {
    // What needs no layer is made while rbp may still be restoring them (build-gate.ts).
    const ctx = buildContext();
    waitAtGate();
    await fn(ctx);
  } catch (e) {
    code = fail(e);
  }
  process.exit(code);
}
