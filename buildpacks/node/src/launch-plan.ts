/**
 * What runs at launch (contract, node rules 1–3): CC_RUN_COMMAND > scripts.start > the Procfile's web > main, with
 * NODE_ENV=production, PORT the port the app must listen on (8080, or 9000 behind request-flow
 * middleware), HOST 0.0.0.0, and NODE_OPTIONS' --max-old-space-size at 3/4 of the instance memory.
 */
import { shellCommand } from '../../../lib/launch/exec.ts';
import path from 'node:path';
import { instanceMemory } from '../../../lib/launch/instance.ts';
import type { LaunchContext, RuntimeLaunch, RuntimePlan } from '../../../lib/launch/plan.ts';
import { readPackageJson, startMethod, NOTHING_TO_START_FIX, type PackageJson } from './package-json.ts';
import { UserError } from '../../../lib/errors.ts';
import { appRuntime, type AppRuntime } from '../../../lib/js-project/package-managers.ts';

/** What the build decided, kept in the launcher layer's metadata. */
export interface NodeDecision extends Record<string, unknown> {
  /** Node.js, or a package manager that is the runtime too (the table's AppRuntime: Bun). */
  runtime: 'node' | AppRuntime['name'];
  node: string;
  bun?: string;
  manager: string;
  tool: string;
  /** The layer holding `node -> bun` (bun-node.ts), relative to the buildpack's layers: first on PATH for a Bun app. */
  bunNode?: string;
  /** Yarn Plug'n'Play: the `pnp` launch layer's NODE_OPTIONS preload .pnp.cjs and its loader (pnp.ts). */
  pnp?: boolean;
}

const MiB = 1024 * 1024;

/**
 * Contract, node rule 2: --max-old-space-size at 3/4 of the instance memory (MiB, rounded down), set
 * when absent, appended to other flags, left alone when NODE_OPTIONS has one already.
 */
export function nodeOptions(current: string | undefined, memoryBytes: number | undefined): string | undefined {
  if (current && /--max[-_]old[-_]space[-_]size/.test(current)) return current;
  if (!memoryBytes) return current;
  const flag = `--max-old-space-size=${Math.floor((memoryBytes * 3) / 4 / MiB)}`;
  return current?.trim() ? `${current.trim()} ${flag}` : flag;
}

/** The folders put before the run environment's PATH when its own is unset. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface LaunchInput {
  /** The launch's context: the environment, the app folder and the port it decided (lib/launch/plan.ts). */
  ctx: LaunchContext;
  pkg: PackageJson;
  decision: NodeDecision;
}

export interface NodePlan extends RuntimePlan {
  /** scripts.prestart / scripts.poststart, run around the start script by the launch (plan.ts Hooks). */
  hooks: { prestart?: string; poststart?: string };
}

export function planLaunch({ ctx, pkg, decision }: LaunchInput): NodePlan {
  const { env, appDir } = ctx;
  const start = startMethod(pkg, env, appDir);
  if (!start) {
    throw new UserError({
      id: 'node/start/none',
      title: 'Nothing to start',
      seen: { what: 'package.json', value: 'no scripts.start, no main', where: path.join(appDir, 'package.json') },
      rule: "The start command is CC_RUN_COMMAND, else scripts.start, else the Procfile's web, else node <main>.",
      fix: NOTHING_TO_START_FIX,
    });
  }
  const runtime = appRuntime(decision.runtime);
  const binDirs = [...(runtime && decision.bunNode ? [path.resolve(ctx.layersDir, decision.bunNode)] : []), path.join(appDir, 'node_modules', '.bin')];
  const memory = instanceMemory(env);
  const options = nodeOptions(env.NODE_OPTIONS, memory);
  const planEnv: Record<string, string> = {
    NODE_ENV: 'production',
    HOST: env.HOST ?? '0.0.0.0',
    PATH: [...binDirs, env.PATH ?? DEFAULT_PATH].join(':'),
    ...(options ? { NODE_OPTIONS: options } : {}),
  };
  const hooks: NodePlan['hooks'] = {};
  let argv: string[];
  switch (start.kind) {
    case 'run-command':
    case 'procfile':
      argv = shellCommand(start.command);
      break;
    case 'start-script':
      if (runtime) {
        // Bun is the runtime too (rule 4): `bun --bun run start` runs prestart, start and poststart
        // itself, with `node` in the scripts meaning Bun.
        argv = runtime.startScript;
        break;
      }
      argv = shellCommand(start.command);
      if (pkg.scripts?.prestart) hooks.prestart = pkg.scripts.prestart;
      if (pkg.scripts?.poststart) hooks.poststart = pkg.scripts.poststart;
      Object.assign(planEnv, {
        npm_lifecycle_event: 'start',
        npm_lifecycle_script: start.command,
        ...(pkg.name ? { npm_package_name: pkg.name } : {}),
        ...(pkg.version ? { npm_package_version: pkg.version } : {}),
      });
      break;
    case 'main':
      argv = [runtime?.name ?? 'node', start.file];
      break;
  }
  return {
    argv,
    env: planEnv,
    cwd: appDir,
    hooks,
    // The launch runs poststart once the app has exited: it must outlive the app, not become it.
    ...(hooks.poststart ? { supervise: 'scripts.poststart runs after the app exits' } : {}),
    facts: {
      runtime: decision.runtime,
      node: decision.node,
      ...(decision.bun ? { bun: decision.bun } : {}),
      start: start.kind,
      ...(decision.pnp ? { pnp: true } : {}),
      ...(memory ? { memory } : {}),
      ...(hooks.prestart ? { prestart: hooks.prestart } : {}),
      ...(hooks.poststart ? { poststart: hooks.poststart } : {}),
    },
  };
}

/** The node runtime's launch, planned at launch by the planner (launch.ts). */
export function nodeRuntime(decision: NodeDecision): RuntimeLaunch {
  return { plan: (ctx) => planLaunch({ ctx, pkg: readPackageJson(ctx.appDir) ?? {}, decision }) };
}
