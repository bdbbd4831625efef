/**
 * The build phase of a static site (contract, `static` rules 1–3): CC_BUILD_COMMAND when set, with no
 * detection; otherwise the generator of the table detected at the root, built into the auto-build
 * folder; otherwise nothing: the files are served as they are.
 */
import { moveAcross } from '../../../lib/fsx.ts';
import { maskSecrets } from '../../../lib/mask.ts';
import { runStep, type StepResult } from '../../../lib/run-step.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { UserError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import type { StaticConfig } from './config.ts';
import { renderCommand, renderStep, type Detection, type Step, type ToolName } from './generators.ts';
import { chooseHugoVersion, today } from './hugo-version.ts';
import { installPlan, nodeModulesCache, npmCacheDir } from './js-install.ts';
import { show } from './paths.ts';
import { installStaticTool, mkdocsPrefix, type ToolRequest } from './tools.ts';
import { jsRuntime } from './js-runtime.ts';

export { describePlan, planSite, type SitePlan } from './site-plan.ts';

export function failed(what: string, command: string, result: Pick<StepResult, 'status'> | undefined, variable?: string): UserError {
  return new UserError({
    id: variable ? 'static/build-command/failed' : 'static/generator/failed',
    title: `${what} failed${result ? ` (${result.status})` : ''}`,
    seen: { what: variable ?? 'build command', value: command },
    rule: 'the site is built in the build phase; a failing build stops the deployment',
    fix: variable
      ? `fix ${variable} or the project so that the command succeeds; its output is above`
      : 'fix the project so that the generator succeeds; its output is above',
  });
}

export async function runCommand(ctx: BuildContext, command: string, log: Logger): Promise<void> {
  const env = { ...ctx.env };
  const r = await log.step(`running CC_BUILD_COMMAND: ${maskSecrets(command, env)}`, () => runStep(['/bin/sh', '-c', command], { cwd: ctx.appDir, env, log }));
  if (!r.ok) throw failed('CC_BUILD_COMMAND', maskSecrets(command, env), r, 'CC_BUILD_COMMAND');
}

/** The generators' tools installed from buildpack.toml's releases; Hugo's version is chosen per site. */
const GENERATOR_TOOLS: Record<Exclude<ToolName, 'mkdocs'>, Omit<ToolRequest, 'launch' | 'constraint'> & { constraint?: string }> = {
  hugo: { id: 'hugo', label: 'Hugo', versionArgs: ['version'], purpose: 'Hugo builds sites with hugo.toml, hugo.yaml or hugo.json' },
  zola: { id: 'zola', label: 'Zola', constraint: '0.22', versionArgs: ['--version'], purpose: 'Zola builds sites with config.toml' },
  mdbook: { id: 'mdbook', label: 'mdBook', constraint: '0.4', versionArgs: ['--version'], purpose: 'mdBook builds books with book.toml' },
};

async function toolPrefix(ctx: BuildContext, tool: ToolName, cfg: StaticConfig, log: Logger): Promise<string[]> {
  if (tool === 'mkdocs') return mkdocsPrefix(ctx.env, log);
  let constraint = GENERATOR_TOOLS[tool].constraint;
  if (constraint === undefined) {
    const choice = chooseHugoVersion(cfg.hugoVersion, today(ctx.env));
    log.info(`Hugo ${choice.version}: ${choice.reason}`);
    constraint = choice.version;
  }
  return [(await installStaticTool(ctx, { ...GENERATOR_TOOLS[tool], constraint, launch: false }, log)).path];
}

/** Builds with the detected generator into the auto-build folder, which is emptied first. */
export async function runGenerator(ctx: BuildContext, d: Detection, cfg: StaticConfig, log: Logger): Promise<void> {
  const g = d.generator;
  const out = cfg.outDir.rel;
  const env = { ...ctx.env };
  const prefixes: Partial<Record<ToolName, string[]>> = {};
  let keepNodeModules = () => {};
  let done = () => {};
  let install: string[] | undefined;
  if (g.runner === 'js') {
    const plan = installPlan(ctx.appDir);
    install = plan.argv;
    log.info(`build command: ${renderCommand(g, out, install)}`);
    log.detail(`install: ${plan.lockFile ? `${plan.lockFile} found, so the project's lock decides` : 'no lock file, so the contract’s `npm i`'}`);
    const runtime = await jsRuntime(ctx, log);
    done = runtime.done;
    Object.assign(env, runtime.env, { npm_config_cache: npmCacheDir(ctx.layers) });
    const cache = nodeModulesCache(ctx.layers, ctx.appDir, plan, runtime.node);
    keepNodeModules = cache.keep;
    if (cache.restored) log.info(`node_modules restored from the cache (${cache.reason}): install skipped`);
    else {
      log.detail(`node_modules not cached (${cache.reason})`);
      const r = await log.step(`installing: ${plan.argv.join(' ')}`, () => runStep(plan.argv, { cwd: ctx.appDir, env, log }));
      if (!r.ok) throw failed(`${g.name} dependency install`, plan.argv.join(' '), r);
    }
  } else {
    prefixes[g.runner] = await toolPrefix(ctx, g.runner, cfg, log);
    log.info(`build command: ${renderCommand(g, out, undefined, prefixes)}`);
  }
  if (fs.existsSync(cfg.outDir.abs)) {
    log.detail(`emptying ${show(out)} before the build`);
    fs.rmSync(cfg.outDir.abs, { recursive: true, force: true });
  }
  try {
    for (const step of g.steps(out)) await runGeneratorStep(step, ctx.appDir, env, prefixes, g.name, log);
  } finally {
    keepNodeModules();
    done();
  }
}

async function runGeneratorStep(
  step: Step,
  appDir: string,
  env: Record<string, string>,
  prefixes: Partial<Record<ToolName, string[]>>,
  name: string,
  log: Logger,
): Promise<void> {
  const shown = renderStep(step, prefixes);
  if ('move' in step) {
    const from = path.join(appDir, step.move.from);
    if (!fs.existsSync(from)) throw failed(`${name} build`, shown, undefined);
    await log.step(shown, () => {
      fs.mkdirSync(path.dirname(path.join(appDir, step.move.to)), { recursive: true });
      moveAcross(from, path.join(appDir, step.move.to));
    });
    return;
  }
  const [cmd, ...args] = step.run;
  const argv = cmd && cmd in prefixes ? [...prefixes[cmd as ToolName]!, ...args] : step.run;
  const r = await log.step(shown, () => runStep(argv, { cwd: appDir, env, log }));
  if (!r.ok) throw failed(`${name} build`, shown, r);
}
